dim D = 64
dim F = 256
dim H = 4
dim Dh = 16

## Python's `@` is read as PyTorch's product, so the lines after it are checked; the fix writes the
## `einsum` it is. A weight of rank 2 is shared by every leading axis.
fn up(x: [b n D], w: [D F]) -> [b n F]:
    return x @ w

## Batched: the leading axes are one index each; the result's last axis takes a name of its own,
## since einsum reads one name as one index.
fn scores(q: [b H n Dh], kt: [b H Dh n]) -> [b H n n]:
    return q @ kt

fn mix(att: [b H n m], v: [b H m Dh]) -> [b H n Dh]:
    y = att @ v
    return y * 2

## The product's value is known, so a mistake after it is still found.
fn after(x: [b n D], w: [D F]) -> [b n D]:
    y = x @ w
    return y

## PyTorch's `x @ w.T` without the `.T`: no sure fix, but `linear` takes the weight as it is.
fn transposed(x: [b n D], w: [F D]) -> [b n F]:
    return x @ w

## PyTorch's attention: `k.transpose(-2, -1)` is `k` itself in the einsum, its axes in k's order.
fn attention_scores(q: [b H n Dh], k: [b H m Dh]) -> [b H n m]:
    return q @ k.transpose(-2, -1)

## A transposed value is known, so what follows it is checked: here, a mistake.
fn heads_back(y: [b H n Dh]) -> [b n H Dh]:
    z = y.transpose(1, 2).contiguous()
    return z + y

## PyTorch's head split and merge: a chain of `.view`, `.transpose` and `.contiguous()` is one
## `rearrange` from where it started; each value is known, so the result type is checked too.
fn split_heads(x: [b n D]) -> [b H n Dh]:
    return x.view(b, n, H, Dh).transpose(1, 2)

fn merge_heads(y: [b H n Dh]) -> [b n D]:
    return y.transpose(1, 2).contiguous().view(b, n, D)

fn there_and_back(y: [b H n Dh]) -> [b H n Dh]:
    return y.transpose(1, 2).transpose(1, 2)

## An operand with a sure fix of its own is written as that fix, so the whole line is one fix.
fn chained_scores(x: [b n D], k: [b H m Dh]) -> [b H n m]:
    return x.view(b, n, H, Dh).transpose(1, 2) @ k.transpose(-2, -1)

## PyTorch's `x @ w.T` of a weight stored `[out in]`, as its tied embeddings do: `linear(x, wte)`,
## whose value is the logits, so `over=V` after it is checked.
fn tied_head(x: [b n D], wte: [F D]) -> [b n F]:
    logits = x @ wte.T
    return softmax(logits, over=F)

## `w.T` alone: the last two axes swapped, a `rearrange` with that value.
fn transposed_weight(w: [F D]) -> [D F]:
    return w.T

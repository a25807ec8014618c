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

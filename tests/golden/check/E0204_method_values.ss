dim D = 64
dim V = 100

## PyTorch's methods that are built-ins here, `x.mean(dim=1)`, `x.softmax(dim=-1)`, `x.exp()`: each
## is reported with the call its fix writes and has that call's value, so the lines after it are
## checked in the same round. Here, that the pooled `[b D]` meets a weight stored as `[D V]`.
fn pool(x: [b n D], w: [D V]) -> [b V]:
    m = x.mean(dim=1)
    return linear(m, w)

fn probs(x: [b n D], w: [V D]) -> [b n V]:
    p = x.softmax(dim=-1)
    return linear(p, w)

fn act(x: [b n D]) -> [b n D]:
    return x.exp() + x.tanh()

## `att.masked_fill(mask, -inf)` is `masked_fill(att, mask, -inf)`, checked as that call: a
## padding mask `[b m]` that doesn't broadcast against the scores is found in the same round (the
## fix that lines it up lies inside the method's, so it is offered once that one is applied).
fn attend(att: [b H n m], pad: [b m] Bool) -> [b H n m]:
    return att.masked_fill(pad, -inf)

## `x.expand(-1, n, -1)` is `expand[b n D](x)`: the shape in brackets, each `-1` the axis x has there.
fn widen(x: [b 1 D], y: [b n D]) -> [b n D]:
    return x.expand(-1, n, -1) + y

## Its arguments are written as their own fixes, so PyTorch's usual mask, unsqueezed twice, is one
## fix: `masked_fill(att, rearrange(pad, b m -> b 1 1 m), -inf)`.
fn attend_padded(att: [b H n m], pad: [b m] Bool) -> [b H n m]:
    return att.masked_fill(pad.unsqueeze(1).unsqueeze(2), -inf)

## PyTorch's `keepdim=True` keeps the reduced axis with size 1: the fix is a `rearrange` of the
## reduction, `[b n 1]`, which divides `[b n D]` as the line after it asks.
fn rms(x: [b n D], w: [D]) -> [b n D]:
    ms = x.pow(2).mean(-1, keepdim=True)
    return x / sqrt(ms + 0.000001) * w

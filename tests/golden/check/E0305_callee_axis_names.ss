dim D = 64

fn attend(x: [b n D]) -> [b n D]:
    return softmax(einsum(x, x: b n D, b m D -> b n m), over=m) |> einsum(x: b n m, b m D -> b n D)

## A call's result has the caller's axes: `attend(t)` is [b s D], and `s` picks its second axis.
fn pooled(t: [b s D]) -> [b D]:
    return mean(attend(t), over=s)

## Where the caller's axis has no name, over= gives its size.
fn patches(p: [b (gh gw) D]) -> [b D]:
    return mean(p + attend(p), over=gh*gw)

## `n` is attend's own name, which means nothing here.
fn wrong(t: [b s D]) -> [b D]:
    return mean(attend(t), over=n)

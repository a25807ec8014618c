dim D = 64

## keepdim=True: the reduced axis is gone, and a pattern puts it back as a 1.
fn centered(x: [b n D]) -> [b n D]:
    return x - mean(x, over=D, keepdim=True)

## The reduced axis in the middle, and piped: the fix writes a call, which binds as the one it replaces.
fn per_position(x: [b n D]) -> [b n D]:
    return x / (x |> max(over=n, keepdim=True))

## No sure fix: `over=` names no axis of x.
fn unnamed(x: [b n D]) -> [b n D]:
    return x - sum(x, keepdim=True)

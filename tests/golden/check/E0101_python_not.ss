dim D = 64

## Python's `not` reads as Python reads it, below the comparisons: the fix writes `!` around all it negates.
fn small(x: [b n D]) -> [b n D]:
    if not D > 2:
        return x
    return x * 2

fn kept(x: [b n D], mask: [b n D] Bool) -> [b n D]:
    return where(not mask, x, 0.0)

## The negated value is still checked: `not` of a number is as wrong as `!` of one.
fn count(x: [b n D]) -> [b n D]:
    if not D:
        return x
    return x

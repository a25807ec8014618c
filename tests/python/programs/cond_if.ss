# `if` on a value: torch.cond.
# Dynamic: b, n.
dim D = 8

## Flips the sign of inputs whose total is negative, then scales.
export fn fold(x: [b n D]) -> [b n D]:
    total = sum(sum(sum(x, over=D), over=n), over=b)
    if total > 0.0:
        y = x * 2.0
    else:
        y = -x
    return y + 1.0

# where, clamp, minimum and maximum: with tensors, numbers and a bound that broadcasts.
# Dynamic: b, n.
dim D = 8

## Picks, bounds and compares two sequences elementwise.
export fn select(x: [b n D], y: [b n D], ceiling: [D]) -> [b n D]:
    picked = where(x > y, x, y * 2.0)
    bounded = clamp(picked, min=-0.5, max=ceiling)
    low = minimum(bounded, 0.25) + maximum(x, y) + minimum(x, y) + maximum(1.0, x)
    return low + clamp(y, min=0.0) + where(y > 0.0, 1.0, -1.0)

# sum, mean and max over an axis.
# Dynamic: b, n.
dim D = 12

## Pools a sequence three ways and adds them.
export fn pool(x: [b n D]) -> [b D]:
    return sum(x, over=n) + mean(x, over=n) + max(x, over=n)

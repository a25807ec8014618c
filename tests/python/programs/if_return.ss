# `if` whose branches return: torch.cond gives the result.
# Dynamic: b.
dim D = 5

## The difference of the two inputs, larger mean first.
export fn ordered_difference(x: [b D], y: [b D]) -> [b D]:
    if mean(mean(x, over=D), over=b) > mean(mean(y, over=D), over=b):
        return x - y
    else:
        return y - x

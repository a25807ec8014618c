dim D = 64

## Python's `+=` and its kin: the fix writes the whole assignment.
fn residual(x: [b n D], y: [b n D]) -> [b n D]:
    x += y
    x *= 0.5 + 0.5
    x -= 1
    x /= 2.0
    return x

## Python's conditional expression has no fix: which form is meant depends on the condition.
fn chosen(x: [b n D]) -> [b n D]:
    y = x if D > 2 else x * 2
    return y

## One error for the line, however many places in it the parser could not read.
fn unread_twice(x: [b n D], y: [b n D]) -> [b n D]:
    x += {y} + {y}
    return x

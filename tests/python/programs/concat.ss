# concat along a dynamic axis and along a fixed one.
# Dynamic: b, n, m (the result's sequence axis is n+m).
dim D = 8

## Prepends a prefix to a sequence, then doubles the features.
export fn prefix(p: [b n D], x: [b m D]) -> [b n+m 2*D]:
    seq = concat(p, x, over=n)
    return concat(seq, seq * 2.0, over=D)

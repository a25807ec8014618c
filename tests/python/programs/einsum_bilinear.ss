# einsum contraction of three operands.
# Dynamic: b, n, m.
dim D = 8
dim E = 6

## A bilinear score between every pair of positions.
export fn bilinear(x: [b n D], y: [b m E], w: [D E]) -> [b n m]:
    return einsum(x, w, y: b n D, D E, b m E -> b n m)

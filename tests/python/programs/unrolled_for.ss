# `for` over a dim: unrolled.
# Dynamic: b, n. Fixed: L, D.
dim L = 3
dim D = 8

## L residual layers with stacked weights.
export fn residual(x: [b n D], w: [L D D], g: [L D]) -> [b n D]:
    for l in 0..L:
        x = x + linear(rms_norm(x, over=D, weight=g[l]), w[l])
    return x

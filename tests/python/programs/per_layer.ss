# Per-layer structure: the block loop's index in arithmetic, `//`, `%` and an `if` decided per
# block; a plain number asserted as an index; a number given for a `Real` parameter.
# Dynamic: b, n. Fixed: L, Pairs, D.
dim L = 4
dim Pairs = 2
dim D = 8

## Divides by the logarithm of `base`, which callers give as a number.
fn damp(x: [b n D], base: Real) -> [b n D]:
    return x / log(base)

## Turns x by the angle k * 3.14159 / 4, k given as a block's number.
fn turn(x: [b n D], k: Int, on: Bool) -> [b n D]:
    return masked_fill(x * cos(k * 3.14159 / 4), !on, 0)

export fn per_layer(x: [b n D], w: [L D D], g: [L D]) -> [b n D]:
    for p in 0..Pairs:
        i = (2 * p) as Index[L]
        x = x + linear(x, w[i]) * cos(3.14159 * p)
    for l in 0..L:
        if l % 2 == 0 and l // 2 != 1:
            x = x + rms_norm(x, over=D, weight=g[l])
        elif l >= 2:
            x = damp(x, 10000)
        else:
            x = x * 0.5
        x = x + turn(x, l, l < 3)
    return x

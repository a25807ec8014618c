# if and for on values and dynamic sizes: torch.cond and torch.while_loop; for over a dim: unrolled.
dim D = 8
dim L = 3

## Flips the sign of inputs whose total is negative, then scales.
export fn fold(x: [b n D]) -> [b n D]:
    total = sum(sum(sum(x, over=D), over=n), over=b)
    if total > 0.0:
        y = x * 2.0
    else:
        y = -x
    return y + 1.0

## Negates, doubles or keeps x, by two flags.
export fn choose(x: [b n D], negate: Bool, double: Bool) -> [b n D]:
    if negate:
        x = -x
    elif double and !negate:
        x = x * 2.0
    return x + 1.0

## Applies `h = h / 2 + x` once per position of the sequence (n times).
export fn repeat_n(x: [b D], seq: [b n D]) -> [b D]:
    h = x
    for i in 0..n:
        h = h * 0.5 + x
    return h

## L residual layers with stacked weights.
export fn residual(x: [b n D], w: [L D D], g: [L D]) -> [b n D]:
    for l in 0..L:
        x = x + linear(rms_norm(x, over=D, weight=g[l]), w[l])
    return x

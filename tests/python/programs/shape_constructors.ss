# stack, and tensors made from a shape: zeros[..], ones[..], full[..](v), expand[..](x); `over=`
# given as a fixed size (`over=1`) rather than a dim.
# Dynamic: b, n.
dim D = 8

## Stacks a sequence with its double, and adds tensors made from shapes.
export fn made(x: [b n D], g: [D]) -> [b n D]:
    pair = stack(x, x * 2.0, over=two)
    both = sum(pair, over=two)
    base = zeros[b n D] + ones[n D] + full[b n D](0.5) + full[n D](sum(g, over=D))
    single = stack(g, over=1)
    return both + base + expand[b n D](g) + sum(single, over=1)

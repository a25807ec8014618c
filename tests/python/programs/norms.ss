# rms_norm and layer_norm with weights, over the last axis and over a middle one.
# Dynamic: b, n.
dim D = 24
dim C = 6

## Pre-norm then post-norm, with learned scales and shifts.
export fn norms(x: [b n D], g: [D], w: [D], bias: [D], y: [b C n], gc: [C]) -> [b n D]:
    h = rms_norm(x, over=D, weight=g)
    h = layer_norm(h, over=D, weight=w, bias=bias, eps=1e-6)
    z = rms_norm(y, over=C, weight=gc) |> rearrange(b C n -> b n C)
    return h + (sum(z, over=C) |> rearrange(b n -> b n 1))

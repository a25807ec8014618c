# Broadcasting arithmetic: [b n D] with [D], [n 1], and a scalar.
# Dynamic: b, n.
dim D = 10

## Scales, shifts and mixes with broadcasting.
export fn affine(x: [b n D], gamma: [D], beta: [D], rowscale: [n 1]) -> [b n D]:
    return (x * gamma + beta) * rowscale - x / 2.0 + 1

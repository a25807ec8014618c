# `map` over a size: positions built with torch.vmap.
# Dynamic: b, n.
dim D = 8
dim Half = D / 2

## Sinusoidal features of each position, added to the input.
export fn sinusoid(x: [b n Half]) -> [b n Half]:
    angles = n |> map(i => (Half |> map(j => i * j)) / 100.0)
    return x + sin(angles)

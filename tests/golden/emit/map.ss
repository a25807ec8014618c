# map over an axis and over sizes: torch.vmap.
dim D = 6
dim E = 5
dim Half = 4

## Projects each batch element separately.
export fn per_item(xs: [b n D], w: [E D]) -> [b n E]:
    return b |> map(i => linear(xs[i], w))

## Sinusoidal features of each position, added to the input.
export fn sinusoid(x: [b n Half]) -> [b n Half]:
    angles = n |> map(i => (Half |> map(j => i * j)) / 100.0)
    return x + sin(angles)

# Positions as a tensor built with `map` over the axis `n`, and sinusoidal features from them.
dim D = 64
dim Half = D / 2

fn positions(x: [b n D]) -> [n] Index[n]:
    return n |> map(i => i)

fn sinusoid(x: [b n D]) -> [n Half]:
    angles = n |> map(i => (Half |> map(j => i * j)) / 10000.0)
    return sin(angles)

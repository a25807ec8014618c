# `map` over an axis: torch.vmap.
# Dynamic: b, n.
dim D = 6
dim E = 5

## Projects each batch element separately.
export fn per_item(xs: [b n D], w: [E D]) -> [b n E]:
    return b |> map(i => linear(xs[i], w))

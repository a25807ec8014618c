dim D = 64

## `zeros_like(x)`: the shape is x's type, written in brackets.
fn plus_ones(x: [b n D]) -> [b n D]:
    return x + ones_like(x)

fn half(x: [b n D]) -> [b n D]:
    return torch.full_like(x, 0.5)

fn zeroed(x: [b n D]) -> [b n D]:
    return x * zeros_like(x)

fn piped(x: [b n D]) -> [b n D]:
    return x |> torch.zeros_like

## No sure fix: `zeros[b n]` would be `Real`, where x is `Index[D]`.
fn counts(x: [b n] Index[D]) -> [b n] Int:
    return zeros_like(x)

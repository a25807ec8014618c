dim D = 64

## PyTorch passes a shape as arguments; ShapeScript writes it in brackets.
fn plus_zeros(x: [b n D]) -> [b n D]:
    z = zeros(b, n, D)
    return x + z

fn plus_ones(x: [b n D]) -> [b n D]:
    return x + torch.ones(b, n, D)

fn fixed(x: [b n D]) -> [b n D]:
    return x + torch.zeros(b, n, 64)

dim D = 64

## PyTorch's `torch.stack([x, y], dim=-1)`: ShapeScript's `stack` makes its new axis first, as long
## as the tensors are many, and the fix moves it where `dim=` put it with a `rearrange`. The call
## is checked as the fix writes it, so its value is known in the same round.
fn pairs(x: [b n D], y: [b n D]) -> [b n D 2]:
    return torch.stack([x, y], dim=-1)

fn three(x: [b n D], y: [b n D], z: [b n D]) -> [b 3 n D]:
    s = stack(x, y, z, dim=1)
    return s

## `dim=0` is where `stack` puts it anyway: `over=2`.
fn first(x: [b n D], y: [b n D]) -> [2 b n D]:
    return torch.stack((x, y), dim=0)

## PyTorch's default is `dim=0` too.
fn default(x: [b n D], y: [b n D]) -> [2 b n D]:
    return stack(x, y)

## The value is the moved one: a signature that wants it elsewhere is told so.
fn wrong(x: [b n D], y: [b n D]) -> [b n 2 D]:
    return stack(x, y, dim=-1)

## A tensor stacked is written as its own fix writes it, so one round does.
fn unsqueezed(x: [b D], y: [b D]) -> [b 1 D 2]:
    return torch.stack([x.unsqueeze(1), y.unsqueeze(1)], dim=-1)

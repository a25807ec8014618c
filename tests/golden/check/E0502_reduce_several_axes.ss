dim D = 64

## PyTorch's `sum(x, dim=[1, 2])` reduces two axes in one call; ShapeScript reduces one a call,
## picked by its name, and the fix writes them in turn. The call is checked as the fix writes it.
fn total(x: [b n D]) -> [b]:
    return sum(x, dim=[1, 2])

fn pooled(x: [b c h w]) -> [b c]:
    return torch.mean(x, dim=(-2, -1))

## So a result that is not what the signature says is found in the same round.
fn wrong(x: [b n D]) -> [b n]:
    return torch.amax(x, dim=[0, 2])

## The methods alike: `x.sum(dim=[1, 2])`, and `x.mean((-2, -1))`, whose tuple is read as the axes.
fn total_method(x: [b n D]) -> [b]:
    return x.sum(dim=[1, 2])

fn pooled_method(x: [b c h w]) -> [b c]:
    s = x.mean((-2, -1))
    return s

## With `keepdim=True`, a `rearrange` puts a 1 where each reduced axis was.
fn squeeze_excite(x: [b c h w]) -> [b c 1 1]:
    return x.mean((2, 3), keepdim=True)

fn squeeze_excite_torch(x: [b c h w]) -> [b c 1 1]:
    return torch.mean(x, dim=[-2, -1], keepdim=True)

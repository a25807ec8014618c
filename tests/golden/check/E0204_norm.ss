dim D = 64

## PyTorch's `x.norm(dim=-1)`: the vector's length along the axis, written out.
fn lengths(x: [b n D]) -> [b n]:
    return x.norm(dim=-1)

fn unit(x: [b n D]) -> [b n D]:
    return x / rearrange(x.norm(-1), b n -> b n 1)

## No sure fix: the whole tensor's norm.
fn total(x: [b n D]) -> []:
    return x.norm()

fn of_sum(x: [b n D], y: [b n D]) -> [b n]:
    return (x + y).norm(dim=-1)

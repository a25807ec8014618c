dim D = 64
dim H = 4
dim Dh = D / H

## PyTorch's names for what ShapeScript writes otherwise.
fn joined(x: [b n D], y: [b n D]) -> [b n 2*D]:
    return cat(x, y, over=D)

fn probs(x: [b n D]) -> [b n D] NonNeg:
    return x.softmax(over=D)

fn act(x: [b n D]) -> [b n D]:
    return torch.relu(x)

fn swapped(x: [b n D]) -> [b D n]:
    return transpose(x, 1, 2)

fn heads_first(x: [b n H Dh]) -> [b H Dh n]:
    return permute(x, 0, 2, 3, 1)

## Inside a larger expression: the fix is a call, which binds as the one it replaces.
fn heads_back(y: [b H n Dh], r: [b n H Dh]) -> [b n H Dh]:
    return r + y.transpose(1, 2)

fn gated(x: [b n D], r: [b n D]) -> [b n D]:
    return r * x.softmax(over=D)

fn flipped(x: [b n D], r: [b D n]) -> [b D n]:
    return r + x.permute(0, 2, 1)

fn swapped_piped(x: [b n D]) -> [b D n]:
    return x |> transpose(1, 2)

## An axis with no name of its own is written in the pattern as in its type: `16gh`, `(n+1)`, `8`, a group.
fn moved(x: [b 16gh D]) -> [b D 16gh]:
    return transpose(x, 1, 2)

fn grown(x: [b n+1 8]) -> [b 8 n+1]:
    return x.transpose(1, 2)

fn patches_last(x: [b (gh gw) D]) -> [b D (gh gw)]:
    return x.permute(0, 2, 1)

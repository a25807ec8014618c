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

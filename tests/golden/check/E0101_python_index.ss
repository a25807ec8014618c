dim D = 64
dim V = 100

## PyTorch's `x[:, -1, :]`: one axis indexed, the rest whole. The language indexes the first axis,
## so the fix moves the indexed one there; `-1` is the axis's last position. The value is x without
## that axis, so the lines after it are checked.
fn next_token(x: [b n D], w: [V D]) -> [b V]:
    h = x[:, -1, :]
    return linear(h, w)

fn first(x: [b n D]) -> [b D]:
    return x[:, 0]

fn channel(x: [b n D]) -> [b n]:
    return x[:, :, 0]

fn whole(x: [b n D]) -> [b n D]:
    return x[:, :]

## Leading axes indexed in turn are indexed one after the other.
fn one(x: [b n D]) -> [D]:
    return x[0, -1]

## No sure fix: a slice with bounds, or two axes indexed apart.
fn shifted(x: [b n D]) -> [b n D]:
    return x[:, :-1]

fn apart(x: [b n D]) -> [n]:
    return x[0, :, 1]

dim D = 64

## The input's last axis is set by each call, the weight's by a dim: the input kept the wrong axis.
fn project(x: [b k], w: [D D]) -> [b D]:
    return linear(x, w)

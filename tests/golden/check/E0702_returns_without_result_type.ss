dim D = 64

fn project(x: [b D], w: [D D]):
    return linear(x, w)

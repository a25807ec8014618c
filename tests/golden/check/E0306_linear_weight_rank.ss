dim D = 64
dim L = 2

fn project(x: [b n D], w: [L D D]) -> [b n D]:
    return linear(x, w)

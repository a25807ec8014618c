dim D = 64

fn residual(x: [b n D], w: [D D]) -> [b n D]:
    hidden = linear(x, w)
    return x + hiden

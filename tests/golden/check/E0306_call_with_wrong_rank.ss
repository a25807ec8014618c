dim D = 64

fn norm(x: [b n D], w: [D]) -> [b n D]:
    return rms_norm(x, over=D, weight=w)

fn caller(x: [n D], w: [D]) -> [n D]:
    return norm(x, w)

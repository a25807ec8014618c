dim D = 64

fn proj(x: [b n D, w: [D D]) -> [b n D]:
    return linear(x, w)

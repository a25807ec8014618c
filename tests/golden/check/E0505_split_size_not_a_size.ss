dim D = 64

fn halves(x: [b n D], s: [b]) -> [b n D]:
    first, rest = split(x, s, D - 32, over=D)
    return x

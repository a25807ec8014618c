dim D = 64

fn join(x: [b n D], y: [b n 32]) -> [b 2*n D]:
    return concat(x, y, over=n)

dim D = 64

fn flat(x: [b n D]) -> [b D]:
    return x as [b D]

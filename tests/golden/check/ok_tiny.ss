dim D = 8

fn double(x: [n D]) -> [n D]:
    return x + x

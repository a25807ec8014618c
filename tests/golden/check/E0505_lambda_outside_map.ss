dim D = 64

fn f(x: [b D]) -> [b D]:
    g = i => i
    return x

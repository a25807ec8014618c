dim D = 64

fn f(x: [b D]) -> [b D]:
    y = x(2)
    return D(x)

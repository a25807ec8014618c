dim D = 64

fn double(x: [b D]) -> [b D]:
    return x + * x

fn triple(x: [b D]) -> [b D]:
    return x + x + y

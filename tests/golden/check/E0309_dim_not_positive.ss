dim D = 64
dim Pad = 0
dim Neg = D - 100

fn f(x: [b D]) -> [b D]:
    return x

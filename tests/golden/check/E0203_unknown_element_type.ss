dim D = 64

fn f(x: [b D] Reel) -> [b D]:
    return x

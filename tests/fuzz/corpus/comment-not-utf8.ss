dim D = 4

export fn f(x: [b D]) -> [b D]:
    return x  # ÿ

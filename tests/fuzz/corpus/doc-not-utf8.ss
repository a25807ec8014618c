dim D = 4

## doc ÿ
export fn f(x: [b D]) -> [b D]:
    return x

dim D = 4

fn f(x: [b D]) -> [b D]:
    return x

fn g(x: [((((((((((((((((((((((((b)))))))))))))))))))))))) D]) -> [b D]:
    return x

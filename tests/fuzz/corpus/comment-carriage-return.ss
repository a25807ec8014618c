dim D = 4

fn f(x: [b D]) -> [b D]:
    return x  # a commentimport os

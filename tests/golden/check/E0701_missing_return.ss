dim D = 64

fn project(x: [b D], w: [D D]) -> [b D]:
    y = linear(x, w)

fn branch(x: [b D], flag: Bool) -> [b D]:
    if flag:
        return x

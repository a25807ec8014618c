dim D = 64

fn project(x: [b D], w: [D D]) -> [b D]:
    return linear(x, w)

fn caller(x: [b D], w: [D D]) -> [b D]:
    return project(x, w=w)

dim D = 64
dim L = 2

fn last_layer(x: [b D], w: [L D D]) -> [b D]:
    return linear(x, w[2])

fn first_layer(x: [b D], w: [L D D]) -> [b D]:
    return linear(x, w[0])

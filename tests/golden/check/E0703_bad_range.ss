dim D = 64
dim L = 4

fn layers(x: [b D], w: [L D D]) -> [b D]:
    for l in 0..x:
        x = linear(x, w[l])
    for l in 0..1.5:
        x = x + 1
    return x

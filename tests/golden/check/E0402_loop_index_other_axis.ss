dim D = 64
dim L = 4
dim M = 2

fn layers(x: [b D], w: [L D D], norm: [M D]) -> [b D]:
    for l in 0..L:
        x = linear(rms_norm(x, over=D, weight=norm[l]), w[l])
    return x

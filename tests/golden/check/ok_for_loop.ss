dim D = 32
dim L = 4

fn residual_stack(x: [b n D], w: [L D D], norm: [L D]) -> [b n D]:
    for l in 0..L:
        h = rms_norm(x, over=D, weight=norm[l])
        x = x + linear(h, w[l])
    return x

dim D = 64

fn norm(x: [b D]) -> [b D]:
    return rms_norm(x, over=D)

fn norm(x: [b D]) -> [b D]:
    return layer_norm(x, over=D)

dim D = 32

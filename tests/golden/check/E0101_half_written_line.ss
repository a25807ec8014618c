dim D = 64
dim V = 500

fn forward(ids: [b n] Index[V], wte: [V D]) -> [b n V]:
    x = embedding(ids, wte
    h = rms_norm(x, over=D)
    return linear(h, wte)

fn other(x: [b D], w: [D D]) -> [b D]:
    return linear(x, w) + z

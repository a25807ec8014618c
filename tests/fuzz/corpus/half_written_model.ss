dim V = 500
dim D = 64
dim L

model Tiny:
    param wte: [V D] = normal(std=
    param w_o: [L D D
    param norm: [L D] = ones
    param

fn forward(m: Tiny, ids: [b n] Index[V]) -> [b n V] Logit over:
    x = embedding(ids, m.
    for l in 0..:
        x = x + m.w_o[l
    return linear(x, m.wte)

dim D = 64
dim V = 500

model Tiny:
    param wte: [V D] = normal(std=0.02)

fn forward(m: Tiyn, ids: [b n] Index[V]) -> [b n D]:
    return embedding(ids, m.wte)

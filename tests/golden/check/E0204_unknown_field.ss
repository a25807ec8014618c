dim D = 64
dim V = 500

model Tiny:
    param wte:  [V D] = normal(std=0.02)
    param norm: [D]   = ones

fn forward(m: Tiny, ids: [b n] Index[V]) -> [b n V]:
    x = embedding(ids, m.wte)
    x = rms_norm(x, over=D, weight=m.nrom)
    return linear(x, m.wte)

# check: --serving error
# The engine passes positions under one name: `pos` or `positions`.
dim D = 32
dim V = 100
dim P = 64

model M:
    param wte: [V D] = normal(std=0.02)
    param wpe: [P D] = normal(std=0.02)


fn forward(m: M, ids: [b n] Index[V], where: [b n] Index[P]) -> [b n V]:
    return linear(embedding(ids, m.wte) + embedding(where, m.wpe), m.wte)

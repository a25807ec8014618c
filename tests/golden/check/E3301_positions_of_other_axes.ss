# check: --serving error
# Positions must have the ids' axes.
dim D = 32
dim V = 100
dim P = 64

model M:
    param wte: [V D] = normal(std=0.02)
    param wpe: [P D] = normal(std=0.02)


fn forward(m: M, ids: [b n] Index[V], pos: [n] Index[P]) -> [b n V]:
    return linear(embedding(ids, m.wte) + embedding(pos, m.wpe), m.wte)

# check: --serving error
# The ids are embedded once.
dim D = 32
dim V = 100
dim P = 64

model M:
    param wte: [V D] = normal(std=0.02)
    param wpe: [P D] = normal(std=0.02)


fn forward(m: M, ids: [b n] Index[V]) -> [b n V]:
    x = embedding(ids, m.wte) + embedding(ids, m.wte)
    return linear(x, m.wte)

# check: --serving error
# The token axis of the ids must be a generic axis the engine can grow.
dim D = 32
dim V = 100
dim P = 64

model M:
    param wte: [V D] = normal(std=0.02)
    param wpe: [P D] = normal(std=0.02)


fn forward(m: M, ids: [b 16] Index[V]) -> [b 16 V]:
    return linear(embedding(ids, m.wte), m.wte)

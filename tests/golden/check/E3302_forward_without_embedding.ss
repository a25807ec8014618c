# check: --serving error
# The engine embeds the ids itself, so forward must do it with `embedding`.
dim D = 32
dim V = 100

model M:
    param wte: [V D] = normal(std=0.02)
    param w:   [V D] = normal(std=0.02)

fn lookup(ids: [b n] Index[V], table: [V D]) -> [b n D]:
    return embedding(ids, table)

fn forward(m: M, ids: [b n] Index[V]) -> [b n V]:
    return linear(lookup(ids, m.wte), m.w)

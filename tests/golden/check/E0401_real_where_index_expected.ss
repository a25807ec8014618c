dim D = 64
dim V = 500

fn lookup(ids: [b n] Index[V], wte: [V D]) -> [b n D]:
    return embedding(ids, wte)

fn caller(x: [b n], wte: [V D]) -> [b n D]:
    return lookup(x, wte)

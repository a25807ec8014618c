dim D = 64
dim V = 500
dim V2 = 512

fn lookup(ids: [b n] Index[V], wte: [V D]) -> [b n D]:
    return embedding(ids, wte)

fn caller(ids: [b n] Index[V2], wte: [V D]) -> [b n D]:
    return lookup(ids, wte)

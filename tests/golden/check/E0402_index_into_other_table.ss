dim D = 64
dim V = 500
dim P = 256

fn embed(ids: [b n] Index[V], pos: [b n] Index[P], wte: [V D], wpe: [P D]) -> [b n D]:
    return embedding(ids, wte) + embedding(pos, wte)

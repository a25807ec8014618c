dim D = 64
dim V = 500

fn embed(ids: [b n] Index, wte: [V D]) -> [b n D]:
    return embedding(ids, wte)

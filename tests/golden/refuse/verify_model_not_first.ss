# refuse: verify {}
# verify compares a language model's or an encoder's engines: this is neither.
dim D = 16
dim V = 64
dim L = 2

model M:
    param wte: [V D] = normal(std=0.02)
    param w: [L D D] = normal(std=0.02)
    param s: [D] = ones


fn forward(ids: [b n] Index[V], m: M) -> [b n D]:
    x = embedding(ids, m.wte)
    for l in 0..L:
        x = x + linear(x, m.w[l])
    return x

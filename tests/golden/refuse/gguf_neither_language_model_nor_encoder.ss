# refuse: export {} --gguf m.gguf
# Neither a language model (no output layer) nor an encoder (its first input is a mask).
dim D = 16
dim V = 64
dim L = 2

model M:
    param wte: [V D] = normal(std=0.02)
    param w: [L D D] = normal(std=0.02)
    param s: [D] = ones


fn forward(m: M, keep: [b n] Bool, ids: [b n] Index[V]) -> [b n D]:
    x = embedding(ids, m.wte)
    for l in 0..L:
        x = x + linear(x, m.w[l])
    return x

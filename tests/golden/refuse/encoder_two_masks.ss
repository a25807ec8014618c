# refuse: import-weights {} hf -o ckpt.pt
# An encoder given two padding masks.
dim D = 16
dim V = 64
dim L = 2

model M:
    param wte: [V D] = normal(std=0.02)
    param w: [L D D] = normal(std=0.02)
    param s: [D] = ones


fn forward(m: M, ids: [b n] Index[V], a: [b n] Bool, c: [b n] Bool) -> [b n D]:
    x = embedding(ids, m.wte)
    for l in 0..L:
        x = x + linear(x, m.w[l])
    return masked_fill(x, rearrange(!(a and c), b n -> b n 1), 0.0)

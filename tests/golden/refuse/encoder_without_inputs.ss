# refuse: import-weights {} hf -o ckpt.pt
# An encoder with no inputs after the model.
dim D = 16
dim V = 64
dim L = 2

model M:
    param wte: [V D] = normal(std=0.02)
    param w: [L D D] = normal(std=0.02)
    param s: [D] = ones


fn forward(m: M) -> [V D]:
    x = m.wte
    for l in 0..L:
        x = x + linear(x, m.w[l])
    return x

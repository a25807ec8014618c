# refuse: import-weights {} hf -o ckpt.pt
# An encoder whose first input is neither ids nor pixels.
dim D = 16
dim V = 64
dim L = 2

model M:
    param wte: [V D] = normal(std=0.02)
    param w: [L D D] = normal(std=0.02)
    param s: [D] = ones


fn forward(m: M, keep: [b n] Bool) -> [b n D]:
    x = masked_fill(zeros[b n D], rearrange(!keep, b n -> b n 1), 1.0)
    for l in 0..L:
        x = x + linear(x, m.w[l])
    return x

# check: --serving error
# A serving engine passes token ids, not embeddings.
dim D = 32
dim V = 100

model M:
    param w: [V D] = normal(std=0.02)

fn forward(m: M, x: [b n D]) -> [b n V]:
    return linear(x, m.w)

# check: --tp 2
# Blocks of one feed-forward layer whose width is a large prime: the degrees that would work are 1
# and F itself, found without counting up to F.
dim D = 64
dim F = 1000000007
dim V = 128
dim L = 2

model Wide:
    param wte:    [V D]   = normal(std=0.02)
    param w_up:   [L F D] = normal(std=0.02)
    param w_down: [L D F] = normal(std=0.02)

fn forward(m: Wide, ids: [b n] Index[V]) -> [b n V]:
    x = embedding(ids, m.wte)
    for l in 0..L:
        x = x + linear(relu(linear(x, m.w_up[l])), m.w_down[l])
    return linear(x, m.wte)

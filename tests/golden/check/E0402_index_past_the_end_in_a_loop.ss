# Reading the blocks' weights backwards, one past the end: at l = 0 the index is L.
dim D = 4
dim L = 3

model M:
    param blocks: [L D D] = normal(std=0.5)

fn forward(m: M, x: [b n D]) -> [b n D]:
    for l in 0..L:
        x = linear(x, m.blocks[L - l])
    return x

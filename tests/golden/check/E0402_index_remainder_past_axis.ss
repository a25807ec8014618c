# `l % 3` is one of 0, 1, 2, but `m.pair` has 2 rows.
dim L = 4

model M:
    param pair: [2 8 8] = normal(std=0.1)

fn f(m: M, x: [n 8]) -> [n 8]:
    for l in 0..L:
        x = linear(x, m.pair[l % 3])
    return x

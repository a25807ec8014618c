# `%` in an index divides by a fixed positive number: `k` varies per call.
dim L = 4

model M:
    param w: [L 8 8] = normal(std=0.1)

fn f(m: M, x: [k 8]) -> [k 8]:
    for l in 0..L:
        x = linear(x, m.w[l % k])
    return x

dim D = 64
dim L = 2

fn shrink(x: [b n D], w: [L D D]) -> [b n D]:
    for l in 0..L:
        x = mean(x, over=n)
    return x

dim D = 64
dim L = 4

## Python's `range`: a loop counts over `a..b`, the end left out as in `range`.
fn doubled(x: [b n D]) -> [b n D]:
    for i in range(4):
        x = x * 2
    return x

fn from_one(x: [b n D]) -> [b n D]:
    for l in range(1, L):
        x = x + x
    return x

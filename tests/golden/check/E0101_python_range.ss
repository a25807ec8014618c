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

## The body is checked as the loop the fix writes: `l` is an index below L.
model Stack:
    param w: [L D D] = normal(std=0.02)

fn layers(m: Stack, x: [b n D]) -> [b n D]:
    for l in range(L):
        x = linear(x, m.w[l])
    return x

## A loop over a value has no sure fix; its body is still checked (`offset` is not defined).
fn over_a_value(m: Stack, x: [b n D]) -> [b n D]:
    for layer in m.layers:
        x = layer(x)
        x = x + offset
    return x

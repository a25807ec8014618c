dim D = 64

## PyTorch's `chunk` and `split` into equal pieces: ShapeScript's `split` of a group, whose
## missing factor is the number of pieces (`(3 D) -> D`: three blocks of D, one after another).
fn first(qkv: [b n 3*D]) -> [b n D]:
    q, k, v = qkv.chunk(3, dim=-1)
    return q

fn by_size(qkv: [b n 3*D]) -> [b n D]:
    q, k, v = qkv.split(D, dim=-1)
    return q

fn gated(x: [b n 2*D]) -> [b n D]:
    g, u = x.chunk(2, -1)
    return g * u

fn halves(x: [b 2*k D], y: [b k D]) -> [b k D]:
    l, r = x.chunk(2, dim=1)
    return l + y

## No sure fix: the half of 8 has no name, and `(2 4) -> 4` would not say which factor is cut.
fn quarters(x: [b 8 D]) -> [b 4 D]:
    l, r = x.chunk(2, dim=1)
    return l

dim D = 64
dim H = 4
dim Dh = 16
dim V = 100

fn heads(x: [b n D]) -> [b n H Dh]:
    return x.view(b, n, H, Dh)

fn merged(x: [b n V]) -> [(b n) V]:
    return x.view(-1, V)

fn flat(t: [b n] Index[V]) -> [(b n)] Index[V]:
    return t.reshape(-1)

fn patches(x: [b c h w]) -> [b c (h w)]:
    return x.flatten(2)

fn back(x: [b n H Dh]) -> [b n D]:
    return x.reshape(b, n, D)

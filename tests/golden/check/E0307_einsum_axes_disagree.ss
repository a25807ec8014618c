dim D  = 64
dim H  = 4
dim Dh = D / H

fn scores(q: [b H n Dh], k: [b m H Dh]) -> [b H n m]:
    return einsum(q, k: b H n Dh, b H m Dh -> b H n m)

dim D = 64
dim H = 4
dim Dh = D / H

fn scores(q: [b H n Dh], k: [b H m Dh]) -> [b H n m]:
    return einsum(q, k: b H n d, b H m d -> b H n m)

## The heads were never split: `scores` takes [b H n Dh], and `D` is `H Dh`.
fn attention_scores(x: [b s D]) -> [b H s s]:
    return scores(x, x)

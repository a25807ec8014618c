# check: --tp 4
# Grouped-query attention: 4 query heads split over 4 devices, but 2 key/value heads don't.
dim D   = 64
dim H   = 4
dim Hkv = 2
dim Dh  = D / H
dim Dkv = Hkv * Dh
dim V   = 128
dim L   = 2

model Gqa:
    param wte: [V D]     = normal(std=0.02)
    param wq:  [L D D]   = normal(std=0.02)
    param wk:  [L Dkv D] = normal(std=0.02)
    param wv:  [L Dkv D] = normal(std=0.02)
    param wo:  [L D D]   = normal(std=0.02)

fn attention(x: [b n D], wq: [D D], wk: [Dkv D], wv: [Dkv D], wo: [D D]) -> [b n D]:
    q = linear(x, wq) |> rearrange(b n (H Dh) -> b H n Dh)
    k = linear(x, wk) |> rearrange(b n (Hkv Dh) -> b Hkv n Dh)
    v = linear(x, wv) |> rearrange(b n (Hkv Dh) -> b Hkv n Dh)
    return scaled_dot_product_attention(q, k, v, attn_mask=causal[n n]) |> rearrange(b H n Dh -> b n (H Dh)) |> linear(wo)

fn forward(m: Gqa, ids: [b n] Index[V]) -> [b n V]:
    x = embedding(ids, m.wte)
    for l in 0..L:
        x = x + attention(x, m.wq[l], m.wk[l], m.wv[l], m.wo[l])
    return linear(x, m.wte)

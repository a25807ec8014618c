# emit: --hf forward
# Heads cut by sizes along their features (DeepSeek's nope/rope parts) stay split across devices:
# the tensor-parallel plan keeps wq, wk, wv colwise and wo rowwise.
dim D  = 64
dim H  = 4
dim Dh = D / H
dim Da = 12
dim Db = 4
dim V  = 128
dim L  = 2

model Cut:
    param wte:  [V D]   = normal(std=0.02)
    param wq:   [L D D] = normal(std=0.02)
    param wk:   [L D D] = normal(std=0.02)
    param wv:   [L D D] = normal(std=0.02)
    param wo:   [L D D] = normal(std=0.02)
    param norm: [L D]   = ones

fn attention(x: [b n D], wq: [D D], wk: [D D], wv: [D D], wo: [D D]) -> [b n D]:
    q = linear(x, wq) |> rearrange(b n (H Dh) -> b H n Dh)
    k = linear(x, wk) |> rearrange(b n (H Dh) -> b H n Dh)
    v = linear(x, wv) |> rearrange(b n (H Dh) -> b H n Dh)
    qa, qb = q |> split(Da, Db, over=Dh)
    q = concat(qa, 2 * qb, over=Da)
    return scaled_dot_product_attention(q, k, v, attn_mask=causal[n n])
        |> rearrange(b H n Dh -> b n (H Dh))
        |> linear(wo)

fn forward(m: Cut, ids: [b n] Index[V]) -> [b n V] Logit over V:
    x = embedding(ids, m.wte)
    for l in 0..L:
        x = x + attention(rms_norm(x, over=D, weight=m.norm[l]), m.wq[l], m.wk[l], m.wv[l], m.wo[l])
    return linear(x, m.wte)

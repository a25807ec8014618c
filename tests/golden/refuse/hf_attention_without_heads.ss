# refuse: export {} --hf out
# Attention on [b n D], with no axis of heads.
dim D = 16
dim H = 2
dim V = 64
dim L = 2

model M:
    param wte: [V D] = normal(std=0.02)
    param wq: [L D D] = normal(std=0.02)

fn attend(x: [b n D], wq: [D D]) -> [b n D]:
    q = linear(x, wq)
    return scaled_dot_product_attention(q, q, q, attn_mask=causal[n n])

fn forward(m: M, ids: [b n] Index[V]) -> [b n V]:
    x = embedding(ids, m.wte)
    for l in 0..L:
        x = x + attend(x, m.wq[l])
    return linear(x, m.wte)

# refuse: export {} --hf out
# A block function that calls itself.
dim D = 16
dim H = 2
dim V = 64
dim L = 2

model M:
    param wte: [V D] = normal(std=0.02)
    param wq: [L D D] = normal(std=0.02)

fn attend(x: [b n D], wq: [D D]) -> [b n D]:
    q = rearrange(linear(x, wq), b n (H e) -> b H n e)
    y = rearrange(scaled_dot_product_attention(q, q, q, attn_mask=causal[n n]), b H n e -> b n (H e))
    return attend(y, wq)

fn forward(m: M, ids: [b n] Index[V]) -> [b n V]:
    x = embedding(ids, m.wte)
    for l in 0..L:
        x = x + attend(x, m.wq[l])
    return linear(x, m.wte)

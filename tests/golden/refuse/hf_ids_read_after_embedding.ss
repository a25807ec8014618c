# refuse: export {} --hf out
# The ids read other than by the embedding: a mask made of them.
dim D = 16
dim H = 2
dim V = 64
dim L = 2

model M:
    param wte: [V D] = normal(std=0.02)
    param w: [L D D] = normal(std=0.02)
    param wq: [L D D] = normal(std=0.02)


fn attend(x: [b n D], wq: [D D]) -> [b n D]:
    q = rearrange(linear(x, wq), b n (H e) -> b H n e)
    return rearrange(scaled_dot_product_attention(q, q, q, attn_mask=causal[n n]), b H n e -> b n (H e))

fn forward(m: M, ids: [b n] Index[V]) -> [b n V]:
    x = masked_fill(embedding(ids, m.wte), rearrange(ids == 0, b n -> b n 1), 0.0)
    for l in 0..L:
        x = x + attend(x, m.wq[l]) + linear(x, m.w[l])
    return linear(x, m.wte)

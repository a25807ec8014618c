# refuse: export {} --hf out
# The output layer's weight used before it too.
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

model N:
    param wte: [V D] = normal(std=0.02)
    param out: [V D] = normal(std=0.02)
    param w: [L D D] = normal(std=0.02)
    param wq: [L D D] = normal(std=0.02)

fn forward(m: N, ids: [b n] Index[V]) -> [b n V]:
    x = embedding(ids, m.wte) + embedding(ids, m.out)
    for l in 0..L:
        x = x + attend(x, m.wq[l]) + linear(x, m.w[l])
    return linear(x, m.out)

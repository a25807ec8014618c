# refuse: export {} --hf out
# Two sizes of window across the blocks.
dim D = 16
dim H = 2
dim V = 64
dim L = 2

model M:
    param wte: [V D] = normal(std=0.02)
    param wn: [1 D D] = normal(std=0.02)  # block 0's
    param wf: [1 D D] = normal(std=0.02)  # block 1's


fn near(x: [b n D], wq: [D D]) -> [b n D]:
    q = rearrange(linear(x, wq), b n (H e) -> b H n e)
    return rearrange(scaled_dot_product_attention(q, q, q, attn_mask=causal[n n], window=4), b H n e -> b n (H e))

fn far(x: [b n D], wq: [D D]) -> [b n D]:
    q = rearrange(linear(x, wq), b n (H e) -> b H n e)
    return rearrange(scaled_dot_product_attention(q, q, q, attn_mask=causal[n n], window=8), b H n e -> b n (H e))

fn forward(m: M, ids: [b n] Index[V]) -> [b n V]:
    x = embedding(ids, m.wte)
    for l in 0..L:
        if l == 0:
            x = x + near(x, m.wn[0])
        else:
            x = x + far(x, m.wf[0])
    return linear(x, m.wte)

# refuse: import-weights {} hf -o ckpt.pt
# An encoder whose attention is causal: a decoder's.
dim D = 16
dim V = 64
dim L = 2

model M:
    param wte: [V D] = normal(std=0.02)
    param w: [L D D] = normal(std=0.02)
    param s: [D] = ones


dim H = 2

fn forward(m: M, ids: [b n] Index[V]) -> [b n D]:
    x = embedding(ids, m.wte)
    for l in 0..L:
        q = rearrange(linear(x, m.w[l]), b n (H e) -> b H n e)
        x = x + rearrange(scaled_dot_product_attention(q, q, q, attn_mask=causal[n n]), b H n e -> b n (H e))
    return x

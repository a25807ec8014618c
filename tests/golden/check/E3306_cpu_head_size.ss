# check: --serving error
# vLLM's CPU attention has no kernel for heads of 16: a note whatever the severity.
dim D = 32
dim H = 2
dim V = 100

model M:
    param wte: [V D] = normal(std=0.02)
    param wq: [D D] = normal(std=0.02)

fn forward(m: M, ids: [b n] Index[V]) -> [b n V]:
    x = embedding(ids, m.wte)
    q = rearrange(linear(x, m.wq), b n (H e) -> b H n e)
    x = x + rearrange(scaled_dot_product_attention(q, q, q, attn_mask=causal[n n]), b H n e -> b n (H e))
    return linear(x, m.wte)

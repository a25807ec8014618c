# check: --serving error
# ALiBi as a bias on the scores: vLLM's Transformers backend gives its attention no bias.
dim D  = 64
dim H  = 4
dim Dh = D / H
dim V  = 128
dim P  = 128

model Alibi:
    param wte:  [V D]   = normal(std=0.02)
    param wqkv: [3*D D] = normal(std=0.02)

fn forward(m: Alibi, ids: [b n] Index[V], pos: [b n] Index[P]) -> [b n V] Logit over V:
    x = embedding(ids, m.wte)
    q, k, v = linear(x, m.wqkv) |> split(b n (3 H Dh) -> b H n Dh)
    slopes = H |> map(h => exp(-8 * (h + 1) / H * log(2)))
    alibi = rearrange(slopes, H -> H 1 1) * rearrange(pos, b m -> b 1 1 m)
    a = scaled_dot_product_attention(q, k, v, attn_mask=causal[n n], bias=alibi)
    return linear(x + rearrange(a, b H n Dh -> b n (H Dh)), m.wte)

# A small Command R7B (Cohere 2): examples/cohere.ss's parallel block (attention and SwiGLU read one
# layer_norm without a bias and are added at once), adjacent-pair rotary embeddings, grouped-query
# attention, the output tied to the embedding and scaled by `logit_scale` (0.0625), with what Cohere 2
# adds: per block, either a sliding window (4096 in Command R7B, 8 of 128 positions here) with the
# rotary embedding, or full attention with none at all (no positions but the causal mask). Command
# R7B slides three blocks of every four; with 2 blocks here, the first slides (`l % 2 == 0`,
# transformers' `layer_types` of this size).
dim D   = 64
dim H   = 2
dim Hkv = 1
dim Dh  = D / H
dim Dkv = Hkv * Dh
dim Dh2 = Dh / 2
dim F   = 128
dim V   = 128
dim L   = 2
dim P   = 128
dim W   = 8

model Cohere2:
    param wte:       [V D]     = normal(std=0.02)
    param ln_w:      [L D]     = ones
    param wq:        [L D D]   = normal(std=0.02)
    param wk:        [L Dkv D] = normal(std=0.02)
    param wv:        [L Dkv D] = normal(std=0.02)
    param wo:        [L D D]   = normal(std=0.02)
    param w_gate:    [L F D]   = normal(std=0.02)
    param w_up:      [L F D]   = normal(std=0.02)
    param w_down:    [L D F]   = normal(std=0.02)
    param norm:      [D]       = ones

## Rotates each adjacent pair (2i, 2i+1) of each of the g heads by the angle pos * 10000^(-2i/Dh).
fn rope(x: [b g n Dh], pos: [b n] Index[P]) -> [b g n Dh]:
    inv_freq = Dh2 |> map(i => exp(-2 * i / Dh * log(10000)))
    angle = rearrange(pos, b n -> b 1 n 1) * inv_freq
    x1, x2 = x |> split(b g n (h 2) -> b g n h)
    y = concat(x1 * cos(angle) - x2 * sin(angle), x2 * cos(angle) + x1 * sin(angle), over=h)
    return y |> rearrange(b g n (2 h) -> b g n (h 2))

## SwiGLU: silu(x W_gate) * (x W_up), projected back to D.
fn feed_forward(x: [b n D], w_gate: [F D], w_up: [F D], w_down: [D F]) -> [b n D]:
    return linear(silu(linear(x, w_gate)) * linear(x, w_up), w_down)

fn forward(m: Cohere2, ids: [b n] Index[V], pos: [b n] Index[P]) -> [b n V] Logit over V:
    x = embedding(ids, m.wte)
    for l in 0..L:
        h = layer_norm(x, over=D, weight=m.ln_w[l])
        q = linear(h, m.wq[l]) |> rearrange(b n (H Dh) -> b H n Dh)
        k = linear(h, m.wk[l]) |> rearrange(b n (Hkv Dh) -> b Hkv n Dh)
        v = linear(h, m.wv[l]) |> rearrange(b n (Hkv Dh) -> b Hkv n Dh)
        # The sliding blocks rotate their queries and keys; the others use no positions at all.
        if l % 2 == 0:
            a = scaled_dot_product_attention(rope(q, pos), rope(k, pos), v, attn_mask=causal[n n], window=W)
        else:
            a = scaled_dot_product_attention(q, k, v, attn_mask=causal[n n])
        o = a |> rearrange(b H n Dh -> b n (H Dh)) |> linear(m.wo[l])
        x = x + o + feed_forward(h, m.w_gate[l], m.w_up[l], m.w_down[l])
    return linear(layer_norm(x, over=D, weight=m.norm), m.wte) |> scale(0.0625)

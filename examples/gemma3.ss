# A small Gemma 3 (text): examples/gemma2.ss's blocks (embedding scaled by sqrt(D) and tied to the
# output, RMSNorm of (1 + w) with eps 1e-6, GeGLU, grouped-query attention, a norm before and after
# attention and the feed-forward layer) without its softcaps, and with what Gemma 3 adds: an RMSNorm
# of (1 + w) over each head of the queries and of the keys before the rotary embedding, attention
# scaled by 1/sqrt(query_pre_attn_scalar) (here S = Dh: llama.cpp's gemma3 scales by the head size),
# and a rotary base per block: the blocks with a sliding window (8 of 128 positions here, 512 to
# 1024 in Gemma 3) rotate with the local base 10000, the others, with full attention, with the
# global base 1000000. Gemma 3 slides five blocks of every six; with 2 blocks here, the first slides
# and the second sees everything (`l % 2 == 0`: transformers' `layer_types` of this size).
dim D   = 64
dim H   = 2
dim Hkv = 1
dim Dh  = D / H
dim Dkv = Hkv * Dh
dim Dh2 = Dh / 2
dim S   = 32
dim F   = 128
dim V   = 128
dim L   = 2
dim P   = 128
dim W   = 8

model Gemma3:
    param wte:       [V D]     = normal(std=0.02)
    param attn_norm: [L D]     = zeros
    param wq:        [L D D]   = normal(std=0.02)
    param wk:        [L Dkv D] = normal(std=0.02)
    param wv:        [L Dkv D] = normal(std=0.02)
    param q_norm:    [L Dh]    = zeros
    param k_norm:    [L Dh]    = zeros
    param wo:        [L D D]   = normal(std=0.02)
    param attn_post: [L D]     = zeros
    param ffn_norm:  [L D]     = zeros
    param w_gate:    [L F D]   = normal(std=0.02)
    param w_up:      [L F D]   = normal(std=0.02)
    param w_down:    [L D F]   = normal(std=0.02)
    param ffn_post:  [L D]     = zeros
    param norm:      [D]       = zeros

## Rotates each pair (i, i + Dh/2) of each of the g heads by the angle pos * base^(-2i/Dh).
fn rope(x: [b g n Dh], pos: [b n] Index[P], base: Real) -> [b g n Dh]:
    inv_freq = Dh2 |> map(i => exp(-2 * i / Dh * log(base)))
    angle = rearrange(pos, b n -> b 1 n 1) * inv_freq
    x1, x2 = x |> split(b g n (2 h) -> b g n h)
    return concat(x1 * cos(angle) - x2 * sin(angle), x2 * cos(angle) + x1 * sin(angle), over=h)

## GeGLU: gelu(x W_gate) * (x W_up), projected back to D.
fn feed_forward(x: [b n D], w_gate: [F D], w_up: [F D], w_down: [D F]) -> [b n D]:
    return linear(gelu(linear(x, w_gate), approximate="tanh") * linear(x, w_up), w_down)

fn forward(m: Gemma3, ids: [b n] Index[V], pos: [b n] Index[P]) -> [b n V] Logit over V:
    x = embedding(ids, m.wte) |> scale(sqrt(D))
    for l in 0..L:
        h = rms_norm(x, over=D, weight=1 + m.attn_norm[l], eps=1e-6)
        # Each head of the queries and of the keys RMS-normalized over Dh with the weight (1 + w).
        q = linear(h, m.wq[l]) |> rearrange(b n (H Dh) -> b H n Dh) |> rms_norm(over=Dh, weight=1 + m.q_norm[l], eps=1e-6)
        k = linear(h, m.wk[l]) |> rearrange(b n (Hkv Dh) -> b Hkv n Dh) |> rms_norm(over=Dh, weight=1 + m.k_norm[l], eps=1e-6)
        v = linear(h, m.wv[l]) |> rearrange(b n (Hkv Dh) -> b Hkv n Dh)
        # The sliding blocks: local rotary base and a window; the others: global base, every position.
        if l % 2 == 0:
            a = scaled_dot_product_attention(rope(q, pos, 10000), rope(k, pos, 10000), v, attn_mask=causal[n n], scale=1 / sqrt(S), window=W)
        else:
            a = scaled_dot_product_attention(rope(q, pos, 1000000), rope(k, pos, 1000000), v, attn_mask=causal[n n], scale=1 / sqrt(S))
        o = a |> rearrange(b H n Dh -> b n (H Dh)) |> linear(m.wo[l])
        x = x + rms_norm(o, over=D, weight=1 + m.attn_post[l], eps=1e-6)
        f = feed_forward(rms_norm(x, over=D, weight=1 + m.ffn_norm[l], eps=1e-6), m.w_gate[l], m.w_up[l], m.w_down[l])
        x = x + rms_norm(f, over=D, weight=1 + m.ffn_post[l], eps=1e-6)
    return linear(rms_norm(x, over=D, weight=1 + m.norm, eps=1e-6), m.wte)

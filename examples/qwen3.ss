# A small Qwen3: examples/qwen2.ss without the q/k/v biases, and with an RMSNorm over each head of
# the queries and of the keys (`q_norm`, `k_norm`: one weight of Dh, shared by the heads), applied
# after the projection is cut into heads and before the rotary embedding. Grouped-query attention
# (2 query heads over 1 key/value head), rotary base 1e6, RMSNorm eps 1e-6, SwiGLU, untied output.
# Heads of 32, a size vLLM's CPU attention has.
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

model Qwen3:
    param wte:       [V D]     = normal(std=0.02)
    param attn_norm: [L D]     = ones
    param wq:        [L D D]   = normal(std=0.02)
    param wk:        [L Dkv D] = normal(std=0.02)
    param wv:        [L Dkv D] = normal(std=0.02)
    param q_norm:    [L Dh]    = ones
    param k_norm:    [L Dh]    = ones
    param wo:        [L D D]   = normal(std=0.02)
    param ffn_norm:  [L D]     = ones
    param w_gate:    [L F D]   = normal(std=0.02)
    param w_up:      [L F D]   = normal(std=0.02)
    param w_down:    [L D F]   = normal(std=0.02)
    param norm:      [D]       = ones
    param w_out:     [V D]     = normal(std=0.02)

## Rotates each pair (i, i + Dh/2) of each of the g heads by the angle pos * 1000000^(-2i/Dh).
fn rope(x: [b g n Dh], pos: [b n] Index[P]) -> [b g n Dh]:
    inv_freq = Dh2 |> map(i => exp(-2 * i / Dh * log(1000000)))
    angle = rearrange(pos, b n -> b 1 n 1) * inv_freq
    x1, x2 = x |> split(b g n (2 h) -> b g n h)
    return concat(x1 * cos(angle) - x2 * sin(angle), x2 * cos(angle) + x1 * sin(angle), over=h)

## H query heads over Hkv key/value heads; each query and key head is RMS-normalized over Dh before
## it is rotated.
fn attention(x: [b n D], wq: [D D], wk: [Dkv D], wv: [Dkv D], q_norm: [Dh], k_norm: [Dh], wo: [D D], pos: [b n] Index[P]) -> [b n D]:
    q = linear(x, wq) |> rearrange(b n (H Dh) -> b H n Dh) |> rms_norm(over=Dh, weight=q_norm, eps=1e-6) |> rope(pos)
    k = linear(x, wk) |> rearrange(b n (Hkv Dh) -> b Hkv n Dh) |> rms_norm(over=Dh, weight=k_norm, eps=1e-6) |> rope(pos)
    v = linear(x, wv) |> rearrange(b n (Hkv Dh) -> b Hkv n Dh)
    return scaled_dot_product_attention(q, k, v, attn_mask=causal[n n])
        |> rearrange(b H n Dh -> b n (H Dh))
        |> linear(wo)

## SwiGLU: silu(x W_gate) * (x W_up), projected back to D.
fn feed_forward(x: [b n D], w_gate: [F D], w_up: [F D], w_down: [D F]) -> [b n D]:
    return linear(silu(linear(x, w_gate)) * linear(x, w_up), w_down)

fn forward(m: Qwen3, ids: [b n] Index[V], pos: [b n] Index[P]) -> [b n V] Logit over V:
    x = embedding(ids, m.wte)
    for l in 0..L:
        h = rms_norm(x, over=D, weight=m.attn_norm[l], eps=1e-6)
        x = x + attention(h, m.wq[l], m.wk[l], m.wv[l], m.q_norm[l], m.k_norm[l], m.wo[l], pos)
        x = x + feed_forward(rms_norm(x, over=D, weight=m.ffn_norm[l], eps=1e-6), m.w_gate[l], m.w_up[l], m.w_down[l])
    return linear(rms_norm(x, over=D, weight=m.norm, eps=1e-6), m.w_out)

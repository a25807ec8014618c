# A small OLMo 2: the norms come after, not before. Each block adds `post_attention_norm(attention(x))`
# and `post_feedforward_norm(feed_forward(x))` to the stream, which no norm precedes; the queries and
# keys are RMS-normalized over the whole projection (D for q, Dkv for k: one weight per channel,
# before the cut into heads and the rotary embedding). RMSNorm eps 1e-6, rotary base 500000, SwiGLU,
# a final norm and an untied output layer. Heads of 32, a size vLLM's CPU attention has.
dim D   = 64
dim H   = 2
dim Hkv = 2
dim Dh  = D / H
dim Dkv = Hkv * Dh
dim Dh2 = Dh / 2
dim F   = 128
dim V   = 128
dim L   = 2
dim P   = 128

model Olmo2:
    param wte:        [V D]     = normal(std=0.02)
    param wq:         [L D D]   = normal(std=0.02)
    param wk:         [L Dkv D] = normal(std=0.02)
    param wv:         [L Dkv D] = normal(std=0.02)
    param q_norm:     [L D]     = ones
    param k_norm:     [L Dkv]   = ones
    param wo:         [L D D]   = normal(std=0.02)
    param attn_post:  [L D]     = ones
    param w_gate:     [L F D]   = normal(std=0.02)
    param w_up:       [L F D]   = normal(std=0.02)
    param w_down:     [L D F]   = normal(std=0.02)
    param ffn_post:   [L D]     = ones
    param norm:       [D]       = ones
    param w_out:      [V D]     = normal(std=0.02)

## Rotates each pair (i, i + Dh/2) of each of the g heads by the angle pos * 500000^(-2i/Dh).
fn rope(x: [b g n Dh], pos: [b n] Index[P]) -> [b g n Dh]:
    inv_freq = Dh2 |> map(i => exp(-2 * i / Dh * log(500000)))
    angle = rearrange(pos, b n -> b 1 n 1) * inv_freq
    x1, x2 = x |> split(b g n (2 h) -> b g n h)
    return concat(x1 * cos(angle) - x2 * sin(angle), x2 * cos(angle) + x1 * sin(angle), over=h)

## The query and key projections are RMS-normalized whole (over D and Dkv), then cut into heads.
fn attention(x: [b n D], wq: [D D], wk: [Dkv D], wv: [Dkv D], q_norm: [D], k_norm: [Dkv], wo: [D D], pos: [b n] Index[P]) -> [b n D]:
    q = linear(x, wq) |> rms_norm(over=D, weight=q_norm, eps=1e-6) |> rearrange(b n (H Dh) -> b H n Dh) |> rope(pos)
    k = linear(x, wk) |> rms_norm(over=Dkv, weight=k_norm, eps=1e-6) |> rearrange(b n (Hkv Dh) -> b Hkv n Dh) |> rope(pos)
    v = linear(x, wv) |> rearrange(b n (Hkv Dh) -> b Hkv n Dh)
    return scaled_dot_product_attention(q, k, v, attn_mask=causal[n n])
        |> rearrange(b H n Dh -> b n (H Dh))
        |> linear(wo)

## SwiGLU: silu(x W_gate) * (x W_up), projected back to D.
fn feed_forward(x: [b n D], w_gate: [F D], w_up: [F D], w_down: [D F]) -> [b n D]:
    return linear(silu(linear(x, w_gate)) * linear(x, w_up), w_down)

fn forward(m: Olmo2, ids: [b n] Index[V], pos: [b n] Index[P]) -> [b n V] Logit over V:
    x = embedding(ids, m.wte)
    for l in 0..L:
        a = attention(x, m.wq[l], m.wk[l], m.wv[l], m.q_norm[l], m.k_norm[l], m.wo[l], pos)
        x = x + rms_norm(a, over=D, weight=m.attn_post[l], eps=1e-6)
        f = feed_forward(x, m.w_gate[l], m.w_up[l], m.w_down[l])
        x = x + rms_norm(f, over=D, weight=m.ffn_post[l], eps=1e-6)
    return linear(rms_norm(x, over=D, weight=m.norm, eps=1e-6), m.w_out)

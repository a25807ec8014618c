# A small Command R (Cohere): a parallel block, where attention and the SwiGLU feed-forward layer
# read the same norm of the stream and are added to it at once; layer_norm without a bias (Cohere's
# LayerNorm subtracts the mean and scales, but adds nothing); rotary embeddings that rotate adjacent
# pairs (2i, 2i+1), not Llama's (i, i + Dh/2); grouped-query attention (2 query heads over 1
# key/value head); an output layer tied to the embedding and followed by `logit_scale` (0.0625).
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

model Cohere:
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

fn attention(x: [b n D], wq: [D D], wk: [Dkv D], wv: [Dkv D], wo: [D D], pos: [b n] Index[P]) -> [b n D]:
    q = linear(x, wq) |> rearrange(b n (H Dh) -> b H n Dh) |> rope(pos)
    k = linear(x, wk) |> rearrange(b n (Hkv Dh) -> b Hkv n Dh) |> rope(pos)
    v = linear(x, wv) |> rearrange(b n (Hkv Dh) -> b Hkv n Dh)
    return scaled_dot_product_attention(q, k, v, attn_mask=causal[n n])
        |> rearrange(b H n Dh -> b n (H Dh))
        |> linear(wo)

## SwiGLU: silu(x W_gate) * (x W_up), projected back to D.
fn feed_forward(x: [b n D], w_gate: [F D], w_up: [F D], w_down: [D F]) -> [b n D]:
    return linear(silu(linear(x, w_gate)) * linear(x, w_up), w_down)

fn forward(m: Cohere, ids: [b n] Index[V], pos: [b n] Index[P]) -> [b n V] Logit over V:
    x = embedding(ids, m.wte)
    for l in 0..L:
        h = layer_norm(x, over=D, weight=m.ln_w[l])
        x = x + attention(h, m.wq[l], m.wk[l], m.wv[l], m.wo[l], pos) + feed_forward(h, m.w_gate[l], m.w_up[l], m.w_down[l])
    return linear(layer_norm(x, over=D, weight=m.norm), m.wte) |> scale(0.0625)

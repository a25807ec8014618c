# check: --tp 4
# A small Llama with grouped-query attention, as Llama 3, Mistral and TinyLlama have it: 4 query
# heads share 2 key/value heads, each pair of query heads reading one, so the keys and values (and a
# serving engine's cache of them) are half as wide. Otherwise examples/llama.ss: RMSNorm, rotary
# embeddings of positions passed in, a SwiGLU feed-forward layer, a final norm and an output layer.
# Heads of 64, a size every serving engine's attention supports.
dim D   = 256
dim H   = 4
dim Hkv = 2
dim Dh  = D / H
dim Dkv = Hkv * Dh
dim Dh2 = Dh / 2
dim F   = 512
dim V   = 512
dim L   = 2
dim P   = 256

model LlamaGqa:
    param wte:       [V D]     = normal(std=0.02)
    param attn_norm: [L D]     = ones
    param wq:        [L D D]   = normal(std=0.02)
    param wk:        [L Dkv D] = normal(std=0.02)
    param wv:        [L Dkv D] = normal(std=0.02)
    param wo:        [L D D]   = normal(std=0.02)
    param ffn_norm:  [L D]     = ones
    param w_gate:    [L F D]   = normal(std=0.02)
    param w_up:      [L F D]   = normal(std=0.02)
    param w_down:    [L D F]   = normal(std=0.02)
    param norm:      [D]       = ones
    param w_out:     [V D]     = normal(std=0.02)

## Rotates each pair (i, i + Dh/2) of each of the g heads by the angle pos * 10000^(-2i/Dh).
fn rope(x: [b g n Dh], pos: [b n] Index[P]) -> [b g n Dh]:
    inv_freq = Dh2 |> map(i => exp(-2 * i / Dh * log(10000)))
    angle = rearrange(pos, b n -> b 1 n 1) * inv_freq
    x1, x2 = x |> split(b g n (2 h) -> b g n h)
    return concat(x1 * cos(angle) - x2 * sin(angle), x2 * cos(angle) + x1 * sin(angle), over=h)

## H query heads over Hkv key/value heads: `scaled_dot_product_attention` checks that H is a whole
## multiple of Hkv and lowers to PyTorch's `enable_gqa=True`.
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

fn forward(m: LlamaGqa, ids: [b n] Index[V], pos: [b n] Index[P]) -> [b n V] Logit over V:
    x = embedding(ids, m.wte)
    for l in 0..L:
        x = x + attention(rms_norm(x, over=D, weight=m.attn_norm[l]), m.wq[l], m.wk[l], m.wv[l], m.wo[l], pos)
        x = x + feed_forward(rms_norm(x, over=D, weight=m.ffn_norm[l]), m.w_gate[l], m.w_up[l], m.w_down[l])
    return linear(rms_norm(x, over=D, weight=m.norm), m.w_out)

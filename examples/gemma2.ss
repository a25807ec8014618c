# A small Gemma 2: examples/gemma.ss (embedding scaled by sqrt(D) and tied to the output, RMSNorm of
# (1 + w) with eps 1e-6, GeGLU, grouped-query attention) with what Gemma 2 adds: a norm after
# attention and after the feed-forward layer as well as before each (four per block); attention
# scores capped softly, 50 * tanh(s / 50), before the mask and softmax (`softcap=50.0`); the logits
# capped the same way at 30 after the output layer; a sliding window (4096 in Gemma 2, here 8 of 128
# positions) on every other block, the first of each pair, and full attention on the rest. Which
# blocks slide is said by the block's index, `if l % 2 == 0:`, decided per block.
dim D   = 64
dim H   = 2
dim Hkv = 1
dim G   = H / Hkv
dim Dh  = D / H
dim Dkv = Hkv * Dh
dim Dh2 = Dh / 2
dim F   = 128
dim V   = 128
dim L   = 2
dim P   = 128
dim W   = 8

model Gemma2:
    param wte:       [V D]     = normal(std=0.02)
    param attn_norm: [L D]     = zeros
    param wq:        [L D D]   = normal(std=0.02)
    param wk:        [L Dkv D] = normal(std=0.02)
    param wv:        [L Dkv D] = normal(std=0.02)
    param wo:        [L D D]   = normal(std=0.02)
    param attn_post: [L D]     = zeros
    param ffn_norm:  [L D]     = zeros
    param w_gate:    [L F D]   = normal(std=0.02)
    param w_up:      [L F D]   = normal(std=0.02)
    param w_down:    [L D F]   = normal(std=0.02)
    param ffn_post:  [L D]     = zeros
    param norm:      [D]       = zeros

## Rotates each pair (i, i + Dh/2) of each of the g heads by the angle pos * 10000^(-2i/Dh).
fn rope(x: [b g n Dh], pos: [b n] Index[P]) -> [b g n Dh]:
    inv_freq = Dh2 |> map(i => exp(-2 * i / Dh * log(10000)))
    angle = rearrange(pos, b n -> b 1 n 1) * inv_freq
    x1, x2 = x |> split(b g n (2 h) -> b g n h)
    return concat(x1 * cos(angle) - x2 * sin(angle), x2 * cos(angle) + x1 * sin(angle), over=h)

## GeGLU: gelu(x W_gate) * (x W_up), projected back to D.
fn feed_forward(x: [b n D], w_gate: [F D], w_up: [F D], w_down: [D F]) -> [b n D]:
    return linear(gelu(linear(x, w_gate), approximate="tanh") * linear(x, w_up), w_down)

fn forward(m: Gemma2, ids: [b n] Index[V], pos: [b n] Index[P]) -> [b n V] Logit over V:
    x = embedding(ids, m.wte) |> scale(sqrt(D))
    for l in 0..L:
        # Causal attention of G query heads per key/value head, its scores capped at 50 * tanh(s / 50);
        # on the blocks that slide, each query sees only itself and the W - 1 positions before it.
        h = rms_norm(x, over=D, weight=1 + m.attn_norm[l], eps=1e-6)
        q = linear(h, m.wq[l]) |> rearrange(b n (H Dh) -> b H n Dh) |> rope(pos)
        k = linear(h, m.wk[l]) |> rearrange(b n (Hkv Dh) -> b Hkv n Dh) |> rope(pos)
        v = linear(h, m.wv[l]) |> rearrange(b n (Hkv Dh) -> b Hkv n Dh)
        if l % 2 == 0:
            a = scaled_dot_product_attention(q, k, v, attn_mask=causal[n n], window=W, softcap=50.0)
        else:
            a = scaled_dot_product_attention(q, k, v, attn_mask=causal[n n], softcap=50.0)
        a = linear(rearrange(a, b H n Dh -> b n (H Dh)), m.wo[l])
        x = x + rms_norm(a, over=D, weight=1 + m.attn_post[l], eps=1e-6)
        f = feed_forward(rms_norm(x, over=D, weight=1 + m.ffn_norm[l], eps=1e-6), m.w_gate[l], m.w_up[l], m.w_down[l])
        x = x + rms_norm(f, over=D, weight=1 + m.ffn_post[l], eps=1e-6)
    logits = linear(rms_norm(x, over=D, weight=1 + m.norm, eps=1e-6), m.wte)
    return 30 * tanh(logits / 30)

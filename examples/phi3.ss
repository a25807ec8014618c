# A small Phi-3 (mini): one fused projection to queries, keys and values, one fused projection to
# the feed-forward layer's gate and up halves (SwiGLU: silu of the first half times the second),
# RMSNorm, rotary embeddings over the whole head with base 10000, no biases, and an output layer of
# its own. As in Phi-3-mini, keys and values have as many heads as queries, so the fused projection
# splits into three equal parts. Heads of 64, a size every serving engine's attention supports.
dim D   = 256
dim H   = 4
dim Dh  = D / H
dim Dh2 = Dh / 2
dim F   = 512
dim V   = 512
dim L   = 2
dim P   = 256

model Phi3:
    param wte:       [V D]       = normal(std=0.02)
    param attn_norm: [L D]       = ones
    param w_qkv:     [L 3*D D]   = normal(std=0.02)
    param wo:        [L D D]     = normal(std=0.02)
    param ffn_norm:  [L D]       = ones
    param w_gate_up: [L 2*F D]   = normal(std=0.02)
    param w_down:    [L D F]     = normal(std=0.02)
    param norm:      [D]         = ones
    param w_out:     [V D]       = normal(std=0.02)

## Rotates each pair (i, i + Dh/2) of each head by the angle pos * 10000^(-2i/Dh).
fn rope(x: [b H n Dh], pos: [b n] Index[P]) -> [b H n Dh]:
    inv_freq = Dh2 |> map(i => exp(-2 * i / Dh * log(10000)))
    angle = rearrange(pos, b n -> b 1 n 1) * inv_freq
    x1, x2 = x |> split(b H n (2 h) -> b H n h)
    return concat(x1 * cos(angle) - x2 * sin(angle), x2 * cos(angle) + x1 * sin(angle), over=h)

## Queries, keys and values from one projection, in that order.
fn attention(x: [b n D], w_qkv: [3*D D], wo: [D D], pos: [b n] Index[P]) -> [b n D]:
    q, k, v = linear(x, w_qkv) |> split(b n (3 H Dh) -> b H n Dh)
    return scaled_dot_product_attention(rope(q, pos), rope(k, pos), v, attn_mask=causal[n n])
        |> rearrange(b H n Dh -> b n (H Dh))
        |> linear(wo)

## SwiGLU from one projection: its first half gates the second.
fn feed_forward(x: [b n D], w_gate_up: [2*F D], w_down: [D F]) -> [b n D]:
    gate, up = linear(x, w_gate_up) |> split(b n (2 F) -> b n F)
    return linear(silu(gate) * up, w_down)

fn forward(m: Phi3, ids: [b n] Index[V], pos: [b n] Index[P]) -> [b n V] Logit over V:
    x = embedding(ids, m.wte)
    for l in 0..L:
        x = x + attention(rms_norm(x, over=D, weight=m.attn_norm[l]), m.w_qkv[l], m.wo[l], pos)
        x = x + feed_forward(rms_norm(x, over=D, weight=m.ffn_norm[l]), m.w_gate_up[l], m.w_down[l])
    return linear(rms_norm(x, over=D, weight=m.norm), m.w_out)

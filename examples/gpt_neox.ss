# A small GPT-NeoX (Pythia): one fused query-key-value projection whose rows are grouped per head
# (q, k and v of head 0, then of head 1: `(H 3 Dh)`, not GPT-2's `(3 H Dh)`); rotary embeddings on
# only the first quarter of each head (`rotary_pct` 0.25: R = Dh/4 channels, the rest passed
# through); a parallel block, where attention and the feed-forward layer both read the stream, each
# through its own layer_norm, and both are added at once; layer_norm with biases, biases on every
# projection, GELU (exact), an untied output layer. Heads of 32, a size vLLM's CPU attention has.
dim D   = 64
dim H   = 2
dim Dh  = D / H
dim R   = Dh / 4
dim R2  = R / 2
dim F   = 256
dim V   = 128
dim L   = 2
dim P   = 128

model GptNeox:
    param wte:    [V D]     = normal(std=0.02)
    param ln1_w:  [L D]     = ones
    param ln1_b:  [L D]     = zeros
    param w_qkv:  [L 3*D D] = normal(std=0.02)
    param b_qkv:  [L 3*D]   = zeros
    param wo:     [L D D]   = normal(std=0.02)
    param bo:     [L D]     = zeros
    param ln2_w:  [L D]     = ones
    param ln2_b:  [L D]     = zeros
    param w_up:   [L F D]   = normal(std=0.02)
    param b_up:   [L F]     = zeros
    param w_down: [L D F]   = normal(std=0.02)
    param b_down: [L D]     = zeros
    param lnf_w:  [D]       = ones
    param lnf_b:  [D]       = zeros
    param w_out:  [V D]     = normal(std=0.02)

## Rotates each pair (i, i + R/2) of x's R channels by the angle pos * 10000^(-2i/R).
fn rope(x: [b H n R], pos: [b n] Index[P]) -> [b H n R]:
    inv_freq = R2 |> map(i => exp(-2 * i / R * log(10000)))
    angle = rearrange(pos, b n -> b 1 n 1) * inv_freq
    x1, x2 = x |> split(b H n (2 h) -> b H n h)
    return concat(x1 * cos(angle) - x2 * sin(angle), x2 * cos(angle) + x1 * sin(angle), over=h)

## The rotary embedding on the first R channels of each head; the other Dh - R pass through.
## `split` cuts only into equal pieces, so the head is cut into 4 pieces of R and the last three
## are joined again.
fn partial_rope(x: [b H n Dh], pos: [b n] Index[P]) -> [b H n Dh]:
    rot, pass1, pass2, pass3 = x |> split(b H n (4 R) -> b H n R)
    return concat(rope(rot, pos), concat(pass1, concat(pass2, pass3, over=R), over=R), over=R)

## q, k and v from one projection, its rows grouped per head.
fn attention(x: [b n D], w_qkv: [3*D D], b_qkv: [3*D], wo: [D D], bo: [D], pos: [b n] Index[P]) -> [b n D]:
    q, k, v = linear(x, w_qkv, b_qkv) |> split(b n (H 3 Dh) -> b H n Dh)
    return scaled_dot_product_attention(partial_rope(q, pos), partial_rope(k, pos), v, attn_mask=causal[n n])
        |> rearrange(b H n Dh -> b n (H Dh))
        |> linear(wo, bo)

fn mlp(x: [b n D], w_up: [F D], b_up: [F], w_down: [D F], b_down: [D]) -> [b n D]:
    return linear(gelu(linear(x, w_up, b_up)), w_down, b_down)

fn forward(m: GptNeox, ids: [b n] Index[V], pos: [b n] Index[P]) -> [b n V] Logit over V:
    x = embedding(ids, m.wte)
    for l in 0..L:
        a = attention(layer_norm(x, over=D, weight=m.ln1_w[l], bias=m.ln1_b[l]), m.w_qkv[l], m.b_qkv[l], m.wo[l], m.bo[l], pos)
        f = mlp(layer_norm(x, over=D, weight=m.ln2_w[l], bias=m.ln2_b[l]), m.w_up[l], m.b_up[l], m.w_down[l], m.b_down[l])
        x = x + a + f
    return linear(layer_norm(x, over=D, weight=m.lnf_w, bias=m.lnf_b), m.w_out)

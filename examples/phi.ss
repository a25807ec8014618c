# A small Phi-2: a parallel block, where attention and the feed-forward layer read the same
# layer_norm of the stream and are added to it at once; rotary embeddings on the first half of each
# head (`partial_rotary_factor` 0.5); biases on q, k, v, the attention's output and both feed-forward
# layers (fc1, GELU in its tanh form, fc2); a final layer_norm and an untied output layer WITH A
# BIAS, as Phi-1, Phi-1.5 and Phi-2 have it. Heads of 32, a size vLLM's CPU attention has.
dim D   = 64
dim H   = 2
dim Dh  = D / H
dim R   = Dh / 2
dim R2  = R / 2
dim F   = 256
dim V   = 128
dim L   = 2
dim P   = 128

model Phi:
    param wte:    [V D]     = normal(std=0.02)
    param ln_w:   [L D]     = ones
    param ln_b:   [L D]     = zeros
    param wq:     [L D D]   = normal(std=0.02)
    param b_q:    [L D]     = zeros
    param wk:     [L D D]   = normal(std=0.02)
    param b_k:    [L D]     = zeros
    param wv:     [L D D]   = normal(std=0.02)
    param b_v:    [L D]     = zeros
    param wo:     [L D D]   = normal(std=0.02)
    param b_o:    [L D]     = zeros
    param w_fc1:  [L F D]   = normal(std=0.02)
    param b_fc1:  [L F]     = zeros
    param w_fc2:  [L D F]   = normal(std=0.02)
    param b_fc2:  [L D]     = zeros
    param lnf_w:  [D]       = ones
    param lnf_b:  [D]       = zeros
    param w_out:  [V D]     = normal(std=0.02)
    param b_out:  [V]       = zeros

## Rotates each pair (i, i + R/2) of x's R channels by the angle pos * 10000^(-2i/R).
fn rope(x: [b H n R], pos: [b n] Index[P]) -> [b H n R]:
    inv_freq = R2 |> map(i => exp(-2 * i / R * log(10000)))
    angle = rearrange(pos, b n -> b 1 n 1) * inv_freq
    x1, x2 = x |> split(b H n (2 h) -> b H n h)
    return concat(x1 * cos(angle) - x2 * sin(angle), x2 * cos(angle) + x1 * sin(angle), over=h)

## The rotary embedding on the first half of each head; the second half passes through.
fn partial_rope(x: [b H n Dh], pos: [b n] Index[P]) -> [b H n Dh]:
    rot, pass = x |> split(b H n (2 R) -> b H n R)
    return concat(rope(rot, pos), pass, over=R)

fn attention(x: [b n D], wq: [D D], b_q: [D], wk: [D D], b_k: [D], wv: [D D], b_v: [D], wo: [D D], b_o: [D], pos: [b n] Index[P]) -> [b n D]:
    q = linear(x, wq, b_q) |> rearrange(b n (H Dh) -> b H n Dh) |> partial_rope(pos)
    k = linear(x, wk, b_k) |> rearrange(b n (H Dh) -> b H n Dh) |> partial_rope(pos)
    v = linear(x, wv, b_v) |> rearrange(b n (H Dh) -> b H n Dh)
    return scaled_dot_product_attention(q, k, v, attn_mask=causal[n n])
        |> rearrange(b H n Dh -> b n (H Dh))
        |> linear(wo, b_o)

## fc1, GELU (tanh), fc2.
fn mlp(x: [b n D], w_fc1: [F D], b_fc1: [F], w_fc2: [D F], b_fc2: [D]) -> [b n D]:
    return linear(gelu(linear(x, w_fc1, b_fc1), approximate="tanh"), w_fc2, b_fc2)

fn forward(m: Phi, ids: [b n] Index[V], pos: [b n] Index[P]) -> [b n V] Logit over V:
    x = embedding(ids, m.wte)
    for l in 0..L:
        h = layer_norm(x, over=D, weight=m.ln_w[l], bias=m.ln_b[l])
        a = attention(h, m.wq[l], m.b_q[l], m.wk[l], m.b_k[l], m.wv[l], m.b_v[l], m.wo[l], m.b_o[l], pos)
        x = x + a + mlp(h, m.w_fc1[l], m.b_fc1[l], m.w_fc2[l], m.b_fc2[l])
    return linear(layer_norm(x, over=D, weight=m.lnf_w, bias=m.lnf_b), m.w_out, m.b_out)

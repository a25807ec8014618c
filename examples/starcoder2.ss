# A small StarCoder2: layer_norm with biases (eps 1e-5) before attention, before the feed-forward
# layer and at the end; biases on every projection (q, k, v, o and both feed-forward layers); a
# feed-forward layer of two projections around GELU in its tanh form (`c_fc`, `c_proj`), with no
# gate; grouped-query attention (2 query heads over 1 key/value head) with rotary embeddings of
# base 10000 and a sliding window (StarCoder2's 4096, here 16 of 64 positions); the output layer is
# the embedding table. Heads of 32, a size vLLM's CPU attention has.
dim D   = 64
dim H   = 2
dim Hkv = 1
dim Dh  = D / H
dim Dkv = Hkv * Dh
dim Dh2 = Dh / 2
dim F   = 256
dim V   = 128
dim L   = 2
dim P   = 64
dim W   = 16

model Starcoder2:
    param wte:    [V D]     = normal(std=0.02)
    param ln1_w:  [L D]     = ones
    param ln1_b:  [L D]     = zeros
    param wq:     [L D D]   = normal(std=0.02)
    param bq:     [L D]     = zeros
    param wk:     [L Dkv D] = normal(std=0.02)
    param bk:     [L Dkv]   = zeros
    param wv:     [L Dkv D] = normal(std=0.02)
    param bv:     [L Dkv]   = zeros
    param wo:     [L D D]   = normal(std=0.02)
    param bo:     [L D]     = zeros
    param ln2_w:  [L D]     = ones
    param ln2_b:  [L D]     = zeros
    param w_fc:   [L F D]   = normal(std=0.02)
    param b_fc:   [L F]     = zeros
    param w_proj: [L D F]   = normal(std=0.02)
    param b_proj: [L D]     = zeros
    param lnf_w:  [D]       = ones
    param lnf_b:  [D]       = zeros

## Rotates each pair (i, i + Dh/2) of each of the g heads by the angle pos * 10000^(-2i/Dh).
fn rope(x: [b g n Dh], pos: [b n] Index[P]) -> [b g n Dh]:
    inv_freq = Dh2 |> map(i => exp(-2 * i / Dh * log(10000)))
    angle = rearrange(pos, b n -> b 1 n 1) * inv_freq
    x1, x2 = x |> split(b g n (2 h) -> b g n h)
    return concat(x1 * cos(angle) - x2 * sin(angle), x2 * cos(angle) + x1 * sin(angle), over=h)

## H query heads over Hkv key/value heads, each query seeing the last W positions; every
## projection adds its bias.
fn attention(x: [b n D], wq: [D D], bq: [D], wk: [Dkv D], bk: [Dkv], wv: [Dkv D], bv: [Dkv], wo: [D D], bo: [D], pos: [b n] Index[P]) -> [b n D]:
    q = linear(x, wq, bq) |> rearrange(b n (H Dh) -> b H n Dh) |> rope(pos)
    k = linear(x, wk, bk) |> rearrange(b n (Hkv Dh) -> b Hkv n Dh) |> rope(pos)
    v = linear(x, wv, bv) |> rearrange(b n (Hkv Dh) -> b Hkv n Dh)
    return scaled_dot_product_attention(q, k, v, attn_mask=causal[n n], window=W)
        |> rearrange(b H n Dh -> b n (H Dh))
        |> linear(wo, bo)

## c_fc, GELU (tanh), c_proj: no gate.
fn mlp(x: [b n D], w_fc: [F D], b_fc: [F], w_proj: [D F], b_proj: [D]) -> [b n D]:
    return linear(gelu(linear(x, w_fc, b_fc), approximate="tanh"), w_proj, b_proj)

fn forward(m: Starcoder2, ids: [b n] Index[V], pos: [b n] Index[P]) -> [b n V] Logit over V:
    x = embedding(ids, m.wte)
    for l in 0..L:
        h = layer_norm(x, over=D, weight=m.ln1_w[l], bias=m.ln1_b[l])
        x = x + attention(h, m.wq[l], m.bq[l], m.wk[l], m.bk[l], m.wv[l], m.bv[l], m.wo[l], m.bo[l], pos)
        x = x + mlp(layer_norm(x, over=D, weight=m.ln2_w[l], bias=m.ln2_b[l]), m.w_fc[l], m.b_fc[l], m.w_proj[l], m.b_proj[l])
    return linear(layer_norm(x, over=D, weight=m.lnf_w, bias=m.lnf_b), m.wte)

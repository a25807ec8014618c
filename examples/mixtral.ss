# A small Mixtral: examples/mistral.ss with a sparse feed-forward layer of E = 4 experts, each token
# going to the K = 2 its router scores highest (`topk`), their two weights renormalized to sum to 1,
# as Mixtral 8x7B routes its 8. `experts` runs each expert on the rows routed to it only, so the
# feed-forward cost grows with K, not with E. Grouped-query attention (2 query heads over 1
# key/value head), rotary base 1e6, RMSNorm, untied output. Heads of 32.
dim D   = 64
dim H   = 2
dim Hkv = 1
dim Dh  = D / H
dim Dkv = Hkv * Dh
dim Dh2 = Dh / 2
dim F   = 128
dim E   = 4
dim K   = 2
dim V   = 128
dim L   = 2
dim P   = 128

model Mixtral:
    param wte:       [V D]       = normal(std=0.02)
    param attn_norm: [L D]       = ones
    param wq:        [L D D]     = normal(std=0.02)
    param wk:        [L Dkv D]   = normal(std=0.02)
    param wv:        [L Dkv D]   = normal(std=0.02)
    param wo:        [L D D]     = normal(std=0.02)
    param ffn_norm:  [L D]       = ones
    param w_router:  [L E D]     = normal(std=0.02)
    param w_gate:    [L E F D]   = normal(std=0.02)
    param w_up:      [L E F D]   = normal(std=0.02)
    param w_down:    [L E D F]   = normal(std=0.02)
    param norm:      [D]         = ones
    param w_out:     [V D]       = normal(std=0.02)

## Rotates each pair (i, i + Dh/2) of each of the g heads by the angle pos * 1000000^(-2i/Dh).
fn rope(x: [b g n Dh], pos: [b n] Index[P]) -> [b g n Dh]:
    inv_freq = Dh2 |> map(i => exp(-2 * i / Dh * log(1000000)))
    angle = rearrange(pos, b n -> b 1 n 1) * inv_freq
    x1, x2 = x |> split(b g n (2 h) -> b g n h)
    return concat(x1 * cos(angle) - x2 * sin(angle), x2 * cos(angle) + x1 * sin(angle), over=h)

## H query heads over Hkv key/value heads: `scaled_dot_product_attention` lowers to `enable_gqa=True`.
fn attention(x: [b n D], wq: [D D], wk: [Dkv D], wv: [Dkv D], wo: [D D], pos: [b n] Index[P]) -> [b n D]:
    q = linear(x, wq) |> rearrange(b n (H Dh) -> b H n Dh) |> rope(pos)
    k = linear(x, wk) |> rearrange(b n (Hkv Dh) -> b Hkv n Dh) |> rope(pos)
    v = linear(x, wv) |> rearrange(b n (Hkv Dh) -> b Hkv n Dh)
    return scaled_dot_product_attention(q, k, v, attn_mask=causal[n n])
        |> rearrange(b H n Dh -> b n (H Dh))
        |> linear(wo)

## The K experts of E the router scores highest, each a SwiGLU, weighted by the router's softmax
## renormalized over the K chosen.
fn sparse_experts(x: [b n D], router: [E D], w_gate: [E F D], w_up: [E F D], w_down: [E D F]) -> [b n D]:
    scores = softmax(linear(x, router), over=E)
    top, chosen = topk(scores, k=K, over=E)
    weights = top / rearrange(sum(top, over=K), b n -> b n 1)
    return experts(x, chosen, weights, e => rows => linear(silu(linear(rows, w_gate[e])) * linear(rows, w_up[e]), w_down[e]))

fn forward(m: Mixtral, ids: [b n] Index[V], pos: [b n] Index[P]) -> [b n V] Logit over V:
    x = embedding(ids, m.wte)
    for l in 0..L:
        x = x + attention(rms_norm(x, over=D, weight=m.attn_norm[l]), m.wq[l], m.wk[l], m.wv[l], m.wo[l], pos)
        x = x + sparse_experts(rms_norm(x, over=D, weight=m.ffn_norm[l]), m.w_router[l], m.w_gate[l], m.w_up[l], m.w_down[l])
    return linear(rms_norm(x, over=D, weight=m.norm), m.w_out)

# A small Qwen2-MoE (Qwen1.5-MoE-A2.7B's layout): examples/qwen2.ss's attention (biases on the query,
# key and value projections, rotary base 1e6) with a sparse feed-forward layer in every block:
# E = 4 experts of F = 48 each, every token through the K = 2 its router scores highest (`topk`),
# weighted by the router's softmax as it is (Qwen2-MoE's norm_topk_prob is false: no
# renormalization), plus a shared SwiGLU expert of Fs = 128 whose output is scaled by a sigmoid gate
# of its own (`shared_expert_gate`, one number per token). Untied output layer.
dim D   = 64
dim H   = 2
dim Hkv = 1
dim Dh  = D / H
dim Dkv = Hkv * Dh
dim Dh2 = Dh / 2
dim F   = 48
dim Fs  = 128
dim E   = 4
dim K   = 2
dim G   = 1
dim V   = 128
dim L   = 2
dim P   = 128

model Qwen2Moe:
    param wte:          [V D]     = normal(std=0.02)
    param attn_norm:    [L D]     = ones
    param wq:           [L D D]   = normal(std=0.02)
    param bq:           [L D]     = zeros
    param wk:           [L Dkv D] = normal(std=0.02)
    param bk:           [L Dkv]   = zeros
    param wv:           [L Dkv D] = normal(std=0.02)
    param bv:           [L Dkv]   = zeros
    param wo:           [L D D]   = normal(std=0.02)
    param ffn_norm:     [L D]     = ones
    param w_router:     [L E D]   = normal(std=0.02)
    param w_gate:       [L E F D] = normal(std=0.02)
    param w_up:         [L E F D] = normal(std=0.02)
    param w_down:       [L E D F] = normal(std=0.02)
    param shared_score: [L G D]   = normal(std=0.02)
    param shared_gate:  [L Fs D]  = normal(std=0.02)
    param shared_up:    [L Fs D]  = normal(std=0.02)
    param shared_down:  [L D Fs]  = normal(std=0.02)
    param norm:         [D]       = ones
    param w_out:        [V D]     = normal(std=0.02)

## Rotates each pair (i, i + Dh/2) of each of the g heads by the angle pos * 1000000^(-2i/Dh).
fn rope(x: [b g n Dh], pos: [b n] Index[P]) -> [b g n Dh]:
    inv_freq = Dh2 |> map(i => exp(-2 * i / Dh * log(1000000)))
    angle = rearrange(pos, b n -> b 1 n 1) * inv_freq
    x1, x2 = x |> split(b g n (2 h) -> b g n h)
    return concat(x1 * cos(angle) - x2 * sin(angle), x2 * cos(angle) + x1 * sin(angle), over=h)

## H query heads over Hkv key/value heads; the projections to q, k and v add their biases.
fn attention(x: [b n D], wq: [D D], bq: [D], wk: [Dkv D], bk: [Dkv], wv: [Dkv D], bv: [Dkv], wo: [D D], pos: [b n] Index[P]) -> [b n D]:
    q = linear(x, wq, bq) |> rearrange(b n (H Dh) -> b H n Dh) |> rope(pos)
    k = linear(x, wk, bk) |> rearrange(b n (Hkv Dh) -> b Hkv n Dh) |> rope(pos)
    v = linear(x, wv, bv) |> rearrange(b n (Hkv Dh) -> b Hkv n Dh)
    return scaled_dot_product_attention(q, k, v, attn_mask=causal[n n])
        |> rearrange(b H n Dh -> b n (H Dh))
        |> linear(wo)

## SwiGLU: silu(x W_gate) * (x W_up), projected back to D.
fn swiglu(x: [b n D], w_gate: [f D], w_up: [f D], w_down: [D f]) -> [b n D]:
    return linear(silu(linear(x, w_gate)) * linear(x, w_up), w_down)

## The K experts of E the router scores highest, each a SwiGLU weighted by the router's softmax
## (not renormalized over the K), plus the shared expert times the sigmoid of its own score.
fn sparse_experts(x: [b n D], router: [E D], w_gate: [E F D], w_up: [E F D], w_down: [E D F], shared_score: [G D], shared_gate: [Fs D], shared_up: [Fs D], shared_down: [D Fs]) -> [b n D]:
    top, chosen = topk(softmax(linear(x, router), over=E), k=K, over=E)
    routed = experts(x, chosen, top, e => rows => linear(silu(linear(rows, w_gate[e])) * linear(rows, w_up[e]), w_down[e]))
    return routed + sigmoid(linear(x, shared_score)) * swiglu(x, shared_gate, shared_up, shared_down)

fn forward(m: Qwen2Moe, ids: [b n] Index[V], pos: [b n] Index[P]) -> [b n V] Logit over V:
    x = embedding(ids, m.wte)
    for l in 0..L:
        h = rms_norm(x, over=D, weight=m.attn_norm[l], eps=1e-6)
        x = x + attention(h, m.wq[l], m.bq[l], m.wk[l], m.bk[l], m.wv[l], m.bv[l], m.wo[l], pos)
        f = rms_norm(x, over=D, weight=m.ffn_norm[l], eps=1e-6)
        x = x + sparse_experts(f, m.w_router[l], m.w_gate[l], m.w_up[l], m.w_down[l], m.shared_score[l], m.shared_gate[l], m.shared_up[l], m.shared_down[l])
    return linear(rms_norm(x, over=D, weight=m.norm, eps=1e-6), m.w_out)

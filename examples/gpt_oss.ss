# A small gpt-oss (GptOssForCausalLM): attention with biases on every projection and a learned sink
# per query head (`sinks=`, a logit that joins each softmax's denominator and is then dropped), a
# sliding window (128 in gpt-oss, here 8) on every other block, the first of each pair, and full
# attention on the rest; sparse experts, each token through the K its router (with a bias) scores
# highest, weighted by a softmax over those K; each expert a clamped SwiGLU with biases: gate and up
# interleaved in one projection, gate capped at 7, up clamped to [-7, 7], (up + 1) * gate *
# sigmoid(1.702 gate). Rotary positions of base 10000 (gpt-oss scales them by YaRN; the tiny
# reference uses the default).
dim D   = 64
dim H   = 2
dim Hkv = 1
dim Dh  = D / H
dim Dkv = Hkv * Dh
dim Dh2 = Dh / 2
dim F   = 96
dim E   = 4
dim K   = 2
dim V   = 128
dim L   = 2
dim P   = 128
dim W   = 8

model GptOss:
    param wte:       [V D]       = normal(std=0.02)
    param attn_norm: [L D]       = ones
    param wq:        [L D D]     = normal(std=0.02)
    param bq:        [L D]       = zeros
    param wk:        [L Dkv D]   = normal(std=0.02)
    param bk:        [L Dkv]     = zeros
    param wv:        [L Dkv D]   = normal(std=0.02)
    param bv:        [L Dkv]     = zeros
    param wo:        [L D D]     = normal(std=0.02)
    param bo:        [L D]       = zeros
    param sinks:     [L H]       = zeros
    param ffn_norm:  [L D]       = ones
    param w_router:  [L E D]     = normal(std=0.02)
    param b_router:  [L E]       = zeros
    param w_gate_up: [L E 2*F D] = normal(std=0.02)
    param b_gate_up: [L E 2*F]   = zeros
    param w_down:    [L E D F]   = normal(std=0.02)
    param b_down:    [L E D]     = zeros
    param norm:      [D]         = ones
    param w_out:     [V D]       = normal(std=0.02)

fn rope(x: [b g n Dh], pos: [b n] Index[P]) -> [b g n Dh]:
    inv_freq = Dh2 |> map(i => exp(-2 * i / Dh * log(10000)))
    angle = rearrange(pos, b n -> b 1 n 1) * inv_freq
    x1, x2 = x |> split(b g n (2 h) -> b g n h)
    return concat(x1 * cos(angle) - x2 * sin(angle), x2 * cos(angle) + x1 * sin(angle), over=h)

## gpt-oss's clamped SwiGLU of gate and up, interleaved in one projection (gate at even columns).
fn clamped_swiglu(gate_up: [r 2*F]) -> [r F]:
    gate, up = gate_up |> split(r (F 2) -> r F)
    g = clamp(gate, max=7.0)
    return (clamp(up, min=-7.0, max=7.0) + 1) * (g * sigmoid(g * 1.702))

fn sparse_experts(x: [b n D], router: [E D], router_b: [E], w_gate_up: [E 2*F D], b_gate_up: [E 2*F], w_down: [E D F], b_down: [E D]) -> [b n D]:
    top, chosen = topk(linear(x, router, router_b), k=K, over=E)
    weights = softmax(top, over=K)
    return experts(x, chosen, weights, e => rows => linear(clamped_swiglu(linear(rows, w_gate_up[e], b_gate_up[e])), w_down[e], b_down[e]))

fn forward(m: GptOss, ids: [b n] Index[V], pos: [b n] Index[P]) -> [b n V] Logit over V:
    x = embedding(ids, m.wte)
    for l in 0..L:
        h = rms_norm(x, over=D, weight=m.attn_norm[l])
        q = linear(h, m.wq[l], m.bq[l]) |> rearrange(b n (H Dh) -> b H n Dh) |> rope(pos)
        k = linear(h, m.wk[l], m.bk[l]) |> rearrange(b n (Hkv Dh) -> b Hkv n Dh) |> rope(pos)
        v = linear(h, m.wv[l], m.bv[l]) |> rearrange(b n (Hkv Dh) -> b Hkv n Dh)
        if l % 2 == 0:
            a = scaled_dot_product_attention(q, k, v, attn_mask=causal[n n], window=W, sinks=m.sinks[l])
        else:
            a = scaled_dot_product_attention(q, k, v, attn_mask=causal[n n], sinks=m.sinks[l])
        x = x + linear(rearrange(a, b H n Dh -> b n (H Dh)), m.wo[l], m.bo[l])
        f = rms_norm(x, over=D, weight=m.ffn_norm[l])
        x = x + sparse_experts(f, m.w_router[l], m.b_router[l], m.w_gate_up[l], m.b_gate_up[l], m.w_down[l], m.b_down[l])
    return linear(rms_norm(x, over=D, weight=m.norm), m.w_out)

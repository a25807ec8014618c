# emit: --hf forward
# Two sparse layers per block: one SiLU-gated, its product written up-first, which `--hf` packs into
# an `experts` module (gate_up_proj, down_proj) vLLM fuses; one gated by GELU, which FusedMoE doesn't
# compute, so it stays the `_experts` loop (E3309).
dim D = 32
dim H = 1
dim F = 64
dim E = 4
dim K = 2
dim V = 64
dim L = 2

model Moe:
    param wte:      [V D]     = normal(std=0.02)
    param wqkv:     [L 3*D D] = normal(std=0.02)
    param router:   [L E D]   = normal(std=0.02)
    param w_gate:   [L E F D] = normal(std=0.02)
    param w_up:     [L E F D] = normal(std=0.02)
    param w_down:   [L E D F] = normal(std=0.02)
    param router2:  [L E D]   = normal(std=0.02)
    param w_gate2:  [L E F D] = normal(std=0.02)
    param w_up2:    [L E F D] = normal(std=0.02)
    param w_down2:  [L E D F] = normal(std=0.02)

fn attention(x: [b n D], wqkv: [3*D D]) -> [b n D]:
    q, k, v = linear(x, wqkv) |> split(b n (3 H D) -> b H n D)
    return scaled_dot_product_attention(q, k, v, attn_mask=causal[n n]) |> rearrange(b H n D -> b n (H D))

fn silu_experts(x: [b n D], router: [E D], w_gate: [E F D], w_up: [E F D], w_down: [E D F]) -> [b n D]:
    top, chosen = topk(softmax(linear(x, router), over=E), k=K, over=E)
    return experts(x, chosen, top, e => rows => linear(linear(rows, w_up[e]) * silu(linear(rows, w_gate[e])), w_down[e]))

fn gelu_experts(x: [b n D], router: [E D], w_gate: [E F D], w_up: [E F D], w_down: [E D F]) -> [b n D]:
    top, chosen = topk(softmax(linear(x, router), over=E), k=K, over=E)
    return experts(x, chosen, top, e => rows => linear(gelu(linear(rows, w_gate[e])) * linear(rows, w_up[e]), w_down[e]))

fn forward(m: Moe, ids: [b n] Index[V]) -> [b n V] Logit over V:
    x = embedding(ids, m.wte)
    for l in 0..L:
        x = x + attention(x, m.wqkv[l])
        x = x + silu_experts(x, m.router[l], m.w_gate[l], m.w_up[l], m.w_down[l])
        x = x + gelu_experts(x, m.router2[l], m.w_gate2[l], m.w_up2[l], m.w_down2[l])
    return linear(x, m.wte)

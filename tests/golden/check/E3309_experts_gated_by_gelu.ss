# check: --serving error
# Experts gated by GELU: vLLM's FusedMoE computes SiLU-gated experts only, so the folder keeps its own
# loop over experts, which vLLM runs as written (a note; the model is servable).
dim D = 64
dim F = 128
dim E = 4
dim K = 2
dim V = 128

model Moe:
    param wte:    [V D]   = normal(std=0.02)
    param router: [E D]   = normal(std=0.02)
    param w_gate: [E F D] = normal(std=0.02)
    param w_up:   [E F D] = normal(std=0.02)
    param w_down: [E D F] = normal(std=0.02)

fn moe(x: [b n D], router: [E D], w_gate: [E F D], w_up: [E F D], w_down: [E D F]) -> [b n D]:
    top, chosen = topk(softmax(linear(x, router), over=E), k=K, over=E)
    return experts(x, chosen, top, e => rows => linear(gelu(linear(rows, w_gate[e])) * linear(rows, w_up[e]), w_down[e]))

fn forward(m: Moe, ids: [b n] Index[V]) -> [b n V] Logit over V:
    x = embedding(ids, m.wte)
    return linear(x + moe(x, m.router, m.w_gate, m.w_up, m.w_down), m.wte)

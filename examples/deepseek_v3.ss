# A small DeepSeek-V3 (DeepseekV3ForCausalLM): multi-head latent attention and, after a first dense
# block, sparse experts with a shared one.
#
# Attention (MLA): queries go through a low-rank bottleneck (q_a_proj, RMSNorm, q_b_proj); keys and
# values are compressed into one latent of C per token plus a rotary part of Dr that every head
# shares (kv_a_proj_with_mqa, cut unequally by `split`), the latent is RMS-normalized and expanded
# into each head's key part without rotary (Dn) and its value (Dv) (kv_b_proj). The engines cache
# the latent and the shared part, not each head's keys and values (`--hf`'s `expand_kv`, vLLM's MLA
# layer, llama.cpp's deepseek2). Rotary applies to
# the Dr parts only, on interleaved pairs (rope_interleave), and the scores are scaled by
# 1/sqrt(Dn + Dr), the queries' and keys' own size, which `scaled_dot_product_attention` uses.
#
# Experts: the router's sigmoid scores, plus a correction bias used only to choose the K of E
# experts (n_group = topk_group = 1: one group, chosen whole), the chosen scores renormalized to
# sum to 1 (norm_topk_prob) and scaled by 2.5 (routed_scaling_factor); a shared expert adds to
# every token. Block 0 is a dense SwiGLU (first_k_dense_replace = 1), the other Lm blocks sparse.
dim D   = 64
dim H   = 2
dim Cq  = 40         # q_lora_rank
dim C   = 512        # kv_lora_rank: the latent each token's keys and values come from
dim Dn  = 64         # qk_nope_head_dim
dim Dr  = 64         # qk_rope_head_dim (C + Dr = 576: the latent and shared key part vLLM's MLA kernels cache)
dim Dv  = 16         # v_head_dim
dim Dr2 = Dr / 2
dim Eq  = Dn + Dr    # a query's and a key's size per head
dim Ekv = Dn + Dv    # what kv_b_proj gives per head
dim Ckv = C + Dr     # what kv_a_proj_with_mqa gives per token
dim F   = 128        # the dense block's SwiGLU
dim Fe  = 24         # each expert's, and the shared expert's (n_shared_experts = 1)
dim E   = 4
dim K   = 2
dim V   = 128
dim L   = 2
dim Ld  = 1          # first_k_dense_replace
dim Lm  = L - Ld
dim P   = 128

model DeepseekV3:
    param wte:          [V D]          = normal(std=0.02)
    param attn_norm:    [L D]          = ones
    param wq_a:         [L Cq D]       = normal(std=0.02)
    param q_norm:       [L Cq]         = ones
    param wq_b:         [L (H Eq) Cq]  = normal(std=0.02)
    param wkv_a:        [L Ckv D]      = normal(std=0.02)
    param kv_norm:      [L C]          = ones
    param wkv_b:        [L (H Ekv) C]  = normal(std=0.02)
    param wo:           [L D (H Dv)]   = normal(std=0.02)
    param ffn_norm:     [L D]          = ones
    param w_gate:       [Ld F D]       = normal(std=0.02)
    param w_up:         [Ld F D]       = normal(std=0.02)
    param w_down:       [Ld D F]       = normal(std=0.02)
    param w_router:     [Lm E D]       = normal(std=0.02)
    param router_bias:  [Lm E]         = zeros
    param expert_gate:  [Lm E Fe D]    = normal(std=0.02)
    param expert_up:    [Lm E Fe D]    = normal(std=0.02)
    param expert_down:  [Lm E D Fe]    = normal(std=0.02)
    param shared_gate:  [Lm Fe D]      = normal(std=0.02)
    param shared_up:    [Lm Fe D]      = normal(std=0.02)
    param shared_down:  [Lm D Fe]      = normal(std=0.02)
    param norm:         [D]            = ones
    param w_out:        [V D]          = normal(std=0.02)

## Rotates each interleaved pair (2i, 2i + 1) of each of the g heads by the angle
## pos * 10000^(-2i/Dr), and lays the rotated pairs out as halves, as transformers' rope_interleave
## does (the queries and keys alike, so their products are the pairs').
fn rope(x: [b g n Dr], pos: [b n] Index[P]) -> [b g n Dr]:
    inv_freq = Dr2 |> map(i => exp(-2 * i / Dr * log(10000)))
    angle = rearrange(pos, b n -> b 1 n 1) * inv_freq
    x1, x2 = x |> split(b g n (h 2) -> b g n h)
    return concat(x1 * cos(angle) - x2 * sin(angle), x2 * cos(angle) + x1 * sin(angle), over=h)

## Multi-head latent attention: the queries through their bottleneck, the keys and values from one
## compressed latent per token and one rotary key part all heads share.
fn attention(x: [b n D], wq_a: [Cq D], q_norm: [Cq], wq_b: [(H Eq) Cq], wkv_a: [Ckv D], kv_norm: [C], wkv_b: [(H Ekv) C], wo: [D (H Dv)], pos: [b n] Index[P]) -> [b n D]:
    q = linear(rms_norm(linear(x, wq_a), over=Cq, weight=q_norm, eps=1e-6), wq_b) |> rearrange(b n (H Eq) -> b H n Eq)
    q_nope, q_rope = q |> split(Dn, Dr, over=Eq)
    latent, k_rope = linear(x, wkv_a) |> split(C, Dr, over=Ckv)
    kv = linear(rms_norm(latent, over=C, weight=kv_norm, eps=1e-6), wkv_b) |> rearrange(b n (H Ekv) -> b H n Ekv)
    k_nope, v = kv |> split(Dn, Dv, over=Ekv)
    k_shared = rearrange(k_rope, b n r -> b 1 n r) |> rope(pos)
    q = concat(q_nope, rope(q_rope, pos), over=Dn)
    k = concat(k_nope, expand[b H n Dr](k_shared), over=Dn)
    return scaled_dot_product_attention(q, k, v, attn_mask=causal[n n])
        |> rearrange(b H n Dv -> b n (H Dv))
        |> linear(wo)

fn swiglu(x: [b n D], w_gate: [F D], w_up: [F D], w_down: [D F]) -> [b n D]:
    return linear(silu(linear(x, w_gate)) * linear(x, w_up), w_down)

## The K of E experts whose sigmoid scores plus the correction bias are highest, each weighted by
## its score alone, renormalized over the K and scaled by 2.5; plus the shared expert.
fn sparse_experts(x: [b n D], router: [E D], bias: [E], expert_gate: [E Fe D], expert_up: [E Fe D], expert_down: [E D Fe], shared_gate: [Fe D], shared_up: [Fe D], shared_down: [D Fe]) -> [b n D]:
    scores = sigmoid(linear(x, router))
    biased, chosen = topk(scores + bias, k=K, over=E)
    top = biased - (embedding(chosen, rearrange(bias, e -> e 1)) |> rearrange(b n k 1 -> b n k))
    weights = top / (rearrange(sum(top, over=K), b n -> b n 1) + 1e-20) * 2.5
    routed = experts(x, chosen, weights, e => rows => linear(silu(linear(rows, expert_gate[e])) * linear(rows, expert_up[e]), expert_down[e]))
    return routed + linear(silu(linear(x, shared_gate)) * linear(x, shared_up), shared_down)

fn forward(m: DeepseekV3, ids: [b n] Index[V], pos: [b n] Index[P]) -> [b n V] Logit over V:
    x = embedding(ids, m.wte)
    for l in 0..L:
        h = rms_norm(x, over=D, weight=m.attn_norm[l], eps=1e-6)
        x = x + attention(h, m.wq_a[l], m.q_norm[l], m.wq_b[l], m.wkv_a[l], m.kv_norm[l], m.wkv_b[l], m.wo[l], pos)
        h = rms_norm(x, over=D, weight=m.ffn_norm[l], eps=1e-6)
        if l < Ld:
            d = l as Index[Ld]
            x = x + swiglu(h, m.w_gate[d], m.w_up[d], m.w_down[d])
        else:
            s = (l - Ld) as Index[Lm]
            x = x + sparse_experts(h, m.w_router[s], m.router_bias[s], m.expert_gate[s], m.expert_up[s], m.expert_down[s], m.shared_gate[s], m.shared_up[s], m.shared_down[s])
    return linear(rms_norm(x, over=D, weight=m.norm, eps=1e-6), m.w_out)

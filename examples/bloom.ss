# A small BLOOM: no rotary or learned positions but ALiBi, a bias added to each attention score that
# grows with the key's position, at a slope of its own per head (2^(-8(h+1)/H) for head h of H);
# a layer_norm right after the embedding (`word_embeddings_layernorm`); one fused query-key-value
# projection grouped per head (`(H 3 Dh)`); layer_norm with biases, biases on every projection,
# GELU (tanh), and an output layer tied to the embedding.
# The ALiBi bias is computed from the positions and added to the scores by `bias=`; vLLM's
# Transformers backend passes no bias to its attention, so vLLM can't serve it (E3308).
dim D  = 64
dim H  = 4
dim Dh = D / H
dim F  = 4 * D
dim V  = 128
dim L  = 2
dim P  = 128

model Bloom:
    param wte:    [V D]     = normal(std=0.02)
    param lne_w:  [D]       = ones
    param lne_b:  [D]       = zeros
    param ln1_w:  [L D]     = ones
    param ln1_b:  [L D]     = zeros
    param w_qkv:  [L 3*D D] = normal(std=0.02)
    param b_qkv:  [L 3*D]   = zeros
    param wo:     [L D D]   = normal(std=0.02)
    param b_o:    [L D]     = zeros
    param ln2_w:  [L D]     = ones
    param ln2_b:  [L D]     = zeros
    param w_up:   [L F D]   = normal(std=0.02)
    param b_up:   [L F]     = zeros
    param w_down: [L D F]   = normal(std=0.02)
    param b_down: [L D]     = zeros
    param lnf_w:  [D]       = ones
    param lnf_b:  [D]       = zeros

## Causal attention with ALiBi: score(n, m) = q_n . k_m / sqrt(Dh) + slope_h * pos_m.
fn attention(x: [b n D], w_qkv: [3*D D], b_qkv: [3*D], wo: [D D], b_o: [D], pos: [b n] Index[P]) -> [b n D]:
    q, k, v = linear(x, w_qkv, b_qkv) |> split(b n (H 3 Dh) -> b H n Dh)
    slopes = H |> map(h => exp(-8 * (h + 1) / H * log(2)))
    alibi = rearrange(slopes, H -> H 1 1) * rearrange(pos, b m -> b 1 1 m)
    return scaled_dot_product_attention(q, k, v, attn_mask=causal[n n], bias=alibi)
        |> rearrange(b H n Dh -> b n (H Dh))
        |> linear(wo, b_o)

fn mlp(x: [b n D], w_up: [F D], b_up: [F], w_down: [D F], b_down: [D]) -> [b n D]:
    return linear(gelu(linear(x, w_up, b_up), approximate="tanh"), w_down, b_down)

fn forward(m: Bloom, ids: [b n] Index[V], pos: [b n] Index[P]) -> [b n V] Logit over V:
    x = embedding(ids, m.wte) |> layer_norm(over=D, weight=m.lne_w, bias=m.lne_b)
    for l in 0..L:
        x = x + attention(layer_norm(x, over=D, weight=m.ln1_w[l], bias=m.ln1_b[l]), m.w_qkv[l], m.b_qkv[l], m.wo[l], m.b_o[l], pos)
        x = x + mlp(layer_norm(x, over=D, weight=m.ln2_w[l], bias=m.ln2_b[l]), m.w_up[l], m.b_up[l], m.w_down[l], m.b_down[l])
    return linear(layer_norm(x, over=D, weight=m.lnf_w, bias=m.lnf_b), m.wte)

# emit: --hf forward
# Learned positions, layer_norm and GELU: llama.cpp's gpt2.
# A small GPT-2, the model `shapescript export --gguf` writes as llama.cpp's `gpt2`: learned
# position embeddings, layer_norm with biases, one fused query-key-value projection, GELU in its
# tanh form, biases on every projection, and an output layer tied to the token embedding.
dim D  = 64
dim H  = 4
dim Dh = D / H
dim F  = 4 * D
dim V  = 500
dim L  = 2
dim P  = 128

model Gpt2:
    param wte:    [V D]     = normal(std=0.02)
    param wpe:    [P D]     = normal(std=0.01)
    param ln1_w:  [L D]     = ones
    param ln1_b:  [L D]     = zeros
    param w_qkv:  [L 3*D D] = normal(std=0.02)
    param b_qkv:  [L 3*D]   = zeros
    param w_o:    [L D D]   = normal(std=0.02)
    param b_o:    [L D]     = zeros
    param ln2_w:  [L D]     = ones
    param ln2_b:  [L D]     = zeros
    param w_up:   [L F D]   = normal(std=0.02)
    param b_up:   [L F]     = zeros
    param w_down: [L D F]   = normal(std=0.02)
    param b_down: [L D]     = zeros
    param lnf_w:  [D]       = ones
    param lnf_b:  [D]       = zeros

fn attention(x: [b n D], w_qkv: [3*D D], b_qkv: [3*D], w_o: [D D], b_o: [D]) -> [b n D]:
    q, k, v = linear(x, w_qkv, b_qkv) |> split(b n (3 H Dh) -> b H n Dh)
    return scaled_dot_product_attention(q, k, v, attn_mask=causal[n n])
        |> rearrange(b H n Dh -> b n (H Dh))
        |> linear(w_o, b_o)

fn mlp(x: [b n D], w_up: [F D], b_up: [F], w_down: [D F], b_down: [D]) -> [b n D]:
    return linear(gelu(linear(x, w_up, b_up), approximate="tanh"), w_down, b_down)

fn forward(m: Gpt2, ids: [b n] Index[V], pos: [b n] Index[P]) -> [b n V] Logit over V:
    x = embedding(ids, m.wte) + embedding(pos, m.wpe)
    for l in 0..L:
        x = x + attention(layer_norm(x, over=D, weight=m.ln1_w[l], bias=m.ln1_b[l]), m.w_qkv[l], m.b_qkv[l], m.w_o[l], m.b_o[l])
        x = x + mlp(layer_norm(x, over=D, weight=m.ln2_w[l], bias=m.ln2_b[l]), m.w_up[l], m.b_up[l], m.w_down[l], m.b_down[l])
    return linear(layer_norm(x, over=D, weight=m.lnf_w, bias=m.lnf_b), m.wte)

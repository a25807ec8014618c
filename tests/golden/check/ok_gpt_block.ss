# A GPT-2 style block: pre-norm attention and an MLP with the tanh GELU.
dim D  = 128
dim H  = 4
dim Dh = D / H
dim F  = 4 * D
dim V  = 1000
dim P  = 256
dim L  = 3

model Gpt:
    param wte:    [V D]     = normal(std=0.02)
    param wpe:    [P D]     = normal(std=0.01)
    param ln1_w:  [L D]     = ones
    param ln1_b:  [L D]     = zeros
    param w_qkv:  [L 3*D D] = normal(std=0.02)
    param w_o:    [L D D]   = normal(std=0.02)
    param ln2_w:  [L D]     = ones
    param ln2_b:  [L D]     = zeros
    param w_fc:   [L F D]   = normal(std=0.02)
    param w_proj: [L D F]   = normal(std=0.02)
    param lnf_w:  [D]       = ones
    param lnf_b:  [D]       = zeros

fn attention(x: [b n D], w_qkv: [3*D D], w_o: [D D]) -> [b n D]:
    q, k, v = linear(x, w_qkv) |> split(b n (3 H Dh) -> b H n Dh)
    return scaled_dot_product_attention(q, k, v, attn_mask=causal[n n])
        |> rearrange(b H n Dh -> b n (H Dh))
        |> linear(w_o)

fn mlp(x: [b n D], w_fc: [F D], w_proj: [D F]) -> [b n D]:
    return linear(x, w_fc) |> gelu(approximate="tanh") |> linear(w_proj)

fn forward(m: Gpt, ids: [b n] Index[V], pos: [b n] Index[P]) -> [b n V] Logit over V:
    x = embedding(ids, m.wte) + embedding(pos, m.wpe)
    for l in 0..L:
        h = layer_norm(x, over=D, weight=m.ln1_w[l], bias=m.ln1_b[l])
        x = x + attention(h, m.w_qkv[l], m.w_o[l])
        h = layer_norm(x, over=D, weight=m.ln2_w[l], bias=m.ln2_b[l])
        x = x + mlp(h, m.w_fc[l], m.w_proj[l])
    x = layer_norm(x, over=D, weight=m.lnf_w, bias=m.lnf_b)
    return linear(x, m.wte)

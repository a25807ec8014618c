# A small OPT (do_layer_norm_before=True, as every OPT but the 350M one): learned position
# embeddings read at pos + 2 (OPT's table keeps two rows before position 0, so it has P + 2 rows);
# layer_norm with biases before attention, before the feed-forward layer and at the end; biases on
# every projection; a ReLU feed-forward layer (fc1, fc2); an output layer tied to the embedding.
# ReLU is written as `masked_fill(x, x < 0, 0)`. Heads of 32, a size vLLM's CPU attention has.
dim D  = 64
dim H  = 2
dim Dh = D / H
dim F  = 256
dim V  = 128
dim L  = 2
dim P  = 64
dim P2 = P + 2

model Opt:
    param wte:    [V D]     = normal(std=0.02)
    param wpe:    [P2 D]    = normal(std=0.02)
    param ln1_w:  [L D]     = ones
    param ln1_b:  [L D]     = zeros
    param wq:     [L D D]   = normal(std=0.02)
    param bq:    [L D]     = zeros
    param wk:     [L D D]   = normal(std=0.02)
    param bk:    [L D]     = zeros
    param wv:     [L D D]   = normal(std=0.02)
    param bv:    [L D]     = zeros
    param wo:     [L D D]   = normal(std=0.02)
    param bo:    [L D]     = zeros
    param ln2_w:  [L D]     = ones
    param ln2_b:  [L D]     = zeros
    param w_fc1:  [L F D]   = normal(std=0.02)
    param b_fc1:  [L F]     = zeros
    param w_fc2:  [L D F]   = normal(std=0.02)
    param b_fc2:  [L D]     = zeros
    param lnf_w:  [D]       = ones
    param lnf_b:  [D]       = zeros

fn attention(x: [b n D], wq: [D D], bq: [D], wk: [D D], bk: [D], wv: [D D], bv: [D], wo: [D D], bo: [D]) -> [b n D]:
    q = linear(x, wq, bq) |> rearrange(b n (H Dh) -> b H n Dh)
    k = linear(x, wk, bk) |> rearrange(b n (H Dh) -> b H n Dh)
    v = linear(x, wv, bv) |> rearrange(b n (H Dh) -> b H n Dh)
    return scaled_dot_product_attention(q, k, v, attn_mask=causal[n n])
        |> rearrange(b H n Dh -> b n (H Dh))
        |> linear(wo, bo)

## fc1, ReLU, fc2.
fn mlp(x: [b n D], w_fc1: [F D], b_fc1: [F], w_fc2: [D F], b_fc2: [D]) -> [b n D]:
    h = linear(x, w_fc1, b_fc1)
    return linear(masked_fill(h, h < 0, 0), w_fc2, b_fc2)

fn forward(m: Opt, ids: [b n] Index[V], pos: [b n] Index[P]) -> [b n V] Logit over V:
    x = embedding(ids, m.wte) + embedding((pos + 2) as [b n] Index[P2], m.wpe)
    for l in 0..L:
        x = x + attention(layer_norm(x, over=D, weight=m.ln1_w[l], bias=m.ln1_b[l]), m.wq[l], m.bq[l], m.wk[l], m.bk[l], m.wv[l], m.bv[l], m.wo[l], m.bo[l])
        x = x + mlp(layer_norm(x, over=D, weight=m.ln2_w[l], bias=m.ln2_b[l]), m.w_fc1[l], m.b_fc1[l], m.w_fc2[l], m.b_fc2[l])
    return linear(layer_norm(x, over=D, weight=m.lnf_w, bias=m.lnf_b), m.wte)

# BERT's encoder (transformers' BertModel): word, position and token-type embeddings summed and
# layer-normed, post-LN blocks with biases on every projection and GELU, and a padding mask: keys
# where `mask` is false are not attended to. It returns the last hidden state, as BertModel's
# `last_hidden_state` (the pooler is left out). `shapescript import-weights` maps a BertModel
# folder onto it, and `shapescript verify --weights HF_DIR` runs it in .pt2, AOTInductor,
# transformers (BertModel) and vLLM's pooling runner (heads of 32: vLLM's CPU attention has no
# kernel for heads of 16).
dim D  = 64
dim H  = 2
dim Dh = D / H
dim F  = 4 * D
dim V  = 128
dim T  = 2
dim P  = 64
dim L  = 2

model Bert:
    param word:   [V D]   = normal(std=0.02)
    param pos:    [P D]   = normal(std=0.02)
    param types:  [T D]   = normal(std=0.02)
    param emb_w:  [D]     = ones
    param emb_b:  [D]     = zeros
    param wq:     [L D D] = normal(std=0.02)
    param bq:     [L D]   = zeros
    param wk:     [L D D] = normal(std=0.02)
    param bk:     [L D]   = zeros
    param wv:     [L D D] = normal(std=0.02)
    param bv:     [L D]   = zeros
    param wo:     [L D D] = normal(std=0.02)
    param bo:     [L D]   = zeros
    param ln1_w:  [L D]   = ones
    param ln1_b:  [L D]   = zeros
    param w_up:   [L F D] = normal(std=0.02)
    param b_up:   [L F]   = zeros
    param w_down: [L D F] = normal(std=0.02)
    param b_down: [L D]   = zeros
    param ln2_w:  [L D]   = ones
    param ln2_b:  [L D]   = zeros

## Every query attends to the keys the mask keeps: `[b 1 1 n]` broadcasts over heads and queries.
fn attention(x: [b n D], keep: [b 1 1 n] Bool, wq: [D D], bq: [D], wk: [D D], bk: [D], wv: [D D], bv: [D], wo: [D D], bo: [D]) -> [b n D]:
    q = linear(x, wq, bq) |> rearrange(b n (H Dh) -> b H n Dh)
    k = linear(x, wk, bk) |> rearrange(b n (H Dh) -> b H n Dh)
    v = linear(x, wv, bv) |> rearrange(b n (H Dh) -> b H n Dh)
    return scaled_dot_product_attention(q, k, v, attn_mask=keep)
        |> rearrange(b H n Dh -> b n (H Dh))
        |> linear(wo, bo)

fn forward(m: Bert, ids: [b n] Index[V], token_types: [b n] Index[T], mask: [b n] Bool) -> [b n D]:
    positions = (n |> map(i => i)) as [n] Index[P]
    x = embedding(ids, m.word) + embedding(positions, m.pos) + embedding(token_types, m.types)
    x = layer_norm(x, over=D, weight=m.emb_w, bias=m.emb_b, eps=1e-12)
    keep = mask |> rearrange(b n -> b 1 1 n)
    for l in 0..L:
        a = attention(x, keep, m.wq[l], m.bq[l], m.wk[l], m.bk[l], m.wv[l], m.bv[l], m.wo[l], m.bo[l])
        x = layer_norm(x + a, over=D, weight=m.ln1_w[l], bias=m.ln1_b[l], eps=1e-12)
        f = linear(gelu(linear(x, m.w_up[l], m.b_up[l])), m.w_down[l], m.b_down[l])
        x = layer_norm(x + f, over=D, weight=m.ln2_w[l], bias=m.ln2_b[l], eps=1e-12)
    return x

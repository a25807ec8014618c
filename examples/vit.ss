# A Vision Transformer's encoder (transformers' ViTModel): the image cut into Pt×Pt patches with
# `rearrange`, each patch projected with `linear` (the checkpoint's convolution [D C Pt Pt] is the
# same weight flattened over (c p q)), a class token before them, learned position embeddings,
# pre-LN blocks with biases and GELU, and a final layer norm. It returns the last hidden state,
# as ViTModel's `last_hidden_state` (the pooler is left out).
dim D  = 64
dim H  = 4
dim Dh = D / H
dim F  = 4 * D
dim C  = 3
dim S  = 32
dim Pt = 8
dim Gh = S / Pt
dim Gw = S / Pt
dim N  = Gh * Gw + 1
dim L  = 2

model Vit:
    param patch_w: [D C*Pt*Pt] = normal(std=0.02)
    param patch_b: [D]         = zeros
    param cls:     [D]         = zeros
    param pos:     [N D]       = normal(std=0.02)
    param ln1_w:   [L D]       = ones
    param ln1_b:   [L D]       = zeros
    param wq:      [L D D]     = normal(std=0.02)
    param bq:      [L D]       = zeros
    param wk:      [L D D]     = normal(std=0.02)
    param bk:      [L D]       = zeros
    param wv:      [L D D]     = normal(std=0.02)
    param bv:      [L D]       = zeros
    param wo:      [L D D]     = normal(std=0.02)
    param bo:      [L D]       = zeros
    param ln2_w:   [L D]       = ones
    param ln2_b:   [L D]       = zeros
    param w_up:    [L F D]     = normal(std=0.02)
    param b_up:    [L F]       = zeros
    param w_down:  [L D F]     = normal(std=0.02)
    param b_down:  [L D]       = zeros
    param lnf_w:   [D]         = ones
    param lnf_b:   [D]         = zeros

fn attention(x: [b n D], wq: [D D], bq: [D], wk: [D D], bk: [D], wv: [D D], bv: [D], wo: [D D], bo: [D]) -> [b n D]:
    q = linear(x, wq, bq) |> rearrange(b n (H Dh) -> b H n Dh)
    k = linear(x, wk, bk) |> rearrange(b n (H Dh) -> b H n Dh)
    v = linear(x, wv, bv) |> rearrange(b n (H Dh) -> b H n Dh)
    return scaled_dot_product_attention(q, k, v)
        |> rearrange(b H n Dh -> b n (H Dh))
        |> linear(wo, bo)

fn forward(m: Vit, pixels: [b C S S]) -> [b N D]:
    patches = pixels |> rearrange(b c (Gh p) (Gw q) -> b (Gh Gw) (c p q)) |> linear(m.patch_w, m.patch_b)
    cls = expand[b 1 D](m.cls)
    x = concat(cls, patches, over=1) + m.pos
    for l in 0..L:
        x = x + attention(layer_norm(x, over=D, weight=m.ln1_w[l], bias=m.ln1_b[l], eps=1e-12),
                          m.wq[l], m.bq[l], m.wk[l], m.bk[l], m.wv[l], m.bv[l], m.wo[l], m.bo[l])
        h = layer_norm(x, over=D, weight=m.ln2_w[l], bias=m.ln2_b[l], eps=1e-12)
        x = x + linear(gelu(linear(h, m.w_up[l], m.b_up[l])), m.w_down[l], m.b_down[l])
    return layer_norm(x, over=D, weight=m.lnf_w, bias=m.lnf_b, eps=1e-12)

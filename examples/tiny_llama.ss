# The chapter's exercise 4: Tiny with the blocks of examples/llama.ss (an RMSNorm and a SwiGLU
# feed-forward layer after attention, rotary embeddings, a final norm). `--gguf` writes it as
# llama.cpp's `llama`, with the output layer tied to the embedding, and llama-server serves it.
dim D   = 64
dim H   = 4
dim Dh  = D / H
dim Dh2 = Dh / 2
dim F   = 4 * D
dim V   = 500
dim L   = 2
dim P   = 512

model Tiny:
    param wte:       [V D]   = normal(std=0.02)
    param norm:      [L D]   = ones
    param wq:        [L D D] = normal(std=0.02)
    param wk:        [L D D] = normal(std=0.02)
    param wv:        [L D D] = normal(std=0.02)
    param w_o:       [L D D] = normal(std=0.02)
    param ffn_norm:  [L D]   = ones
    param w_gate:    [L F D] = normal(std=0.02)
    param w_up:      [L F D] = normal(std=0.02)
    param w_down:    [L D F] = normal(std=0.02)
    param final:     [D]     = ones

fn rope(x: [b H n Dh], pos: [b n] Index[P]) -> [b H n Dh]:
    inv_freq = Dh2 |> map(i => exp(-2 * i / Dh * log(10000)))
    angle = rearrange(pos, b n -> b 1 n 1) * inv_freq
    x1, x2 = x |> split(b H n (2 h) -> b H n h)
    return concat(x1 * cos(angle) - x2 * sin(angle), x2 * cos(angle) + x1 * sin(angle), over=h)

fn attention(x: [b n D], wq: [D D], wk: [D D], wv: [D D], w_o: [D D], pos: [b n] Index[P]) -> [b n D]:
    q = linear(x, wq) |> rearrange(b n (H Dh) -> b H n Dh) |> rope(pos)
    k = linear(x, wk) |> rearrange(b n (H Dh) -> b H n Dh) |> rope(pos)
    v = linear(x, wv) |> rearrange(b n (H Dh) -> b H n Dh)
    return scaled_dot_product_attention(q, k, v, attn_mask=causal[n n])
        |> rearrange(b H n Dh -> b n (H Dh))
        |> linear(w_o)

fn swiglu(x: [b n D], w_gate: [F D], w_up: [F D], w_down: [D F]) -> [b n D]:
    return linear(silu(linear(x, w_gate)) * linear(x, w_up), w_down)

fn forward(m: Tiny, ids: [b n] Index[V], pos: [b n] Index[P]) -> [b n V] Logit over V:
    x = embedding(ids, m.wte)
    for l in 0..L:
        x = x + attention(rms_norm(x, over=D, weight=m.norm[l]), m.wq[l], m.wk[l], m.wv[l], m.w_o[l], pos)
        x = x + swiglu(rms_norm(x, over=D, weight=m.ffn_norm[l]), m.w_gate[l], m.w_up[l], m.w_down[l])
    return linear(rms_norm(x, over=D, weight=m.final), m.wte)

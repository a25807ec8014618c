# Mistral 7B v0.1's attention: a sliding window. Each query sees only the keys of its last W
# positions (itself and W - 1 before it), so the key-value cache an engine keeps per sequence stops
# growing at W tokens; information from further back still reaches a token through the layers below.
# v0.1's window is 4096 of its 32768 positions; here it is 32 of 256, so every prompt past 32 tokens
# shows it. Otherwise the model is examples/mistral.ss: 4 query heads sharing one key/value head,
# RMSNorm, rotary embeddings with base 1e6, SwiGLU and an untied output layer.
# llama.cpp's Llama has no sliding window, so `--gguf` refuses this one (see docs/cli.md).
dim D   = 256
dim H   = 4
dim Hkv = 1
dim Dh  = D / H
dim Dkv = Hkv * Dh
dim Dh2 = Dh / 2
dim F   = 768
dim V   = 512
dim L   = 2
dim P   = 256
dim W   = 32

model MistralSliding:
    param wte:       [V D]     = normal(std=0.02)
    param attn_norm: [L D]     = ones
    param wq:        [L D D]   = normal(std=0.02)
    param wk:        [L Dkv D] = normal(std=0.02)
    param wv:        [L Dkv D] = normal(std=0.02)
    param wo:        [L D D]   = normal(std=0.02)
    param ffn_norm:  [L D]     = ones
    param w_gate:    [L F D]   = normal(std=0.02)
    param w_up:      [L F D]   = normal(std=0.02)
    param w_down:    [L D F]   = normal(std=0.02)
    param norm:      [D]       = ones
    param w_out:     [V D]     = normal(std=0.02)

## Rotates each pair (i, i + Dh/2) of each of the g heads by the angle pos * 1000000^(-2i/Dh).
fn rope(x: [b g n Dh], pos: [b n] Index[P]) -> [b g n Dh]:
    inv_freq = Dh2 |> map(i => exp(-2 * i / Dh * log(1000000)))
    angle = rearrange(pos, b n -> b 1 n 1) * inv_freq
    x1, x2 = x |> split(b g n (2 h) -> b g n h)
    return concat(x1 * cos(angle) - x2 * sin(angle), x2 * cos(angle) + x1 * sin(angle), over=h)

## H query heads over Hkv key/value heads (`enable_gqa=True`), each query seeing the last W positions.
fn attention(x: [b n D], wq: [D D], wk: [Dkv D], wv: [Dkv D], wo: [D D], pos: [b n] Index[P]) -> [b n D]:
    q = linear(x, wq) |> rearrange(b n (H Dh) -> b H n Dh) |> rope(pos)
    k = linear(x, wk) |> rearrange(b n (Hkv Dh) -> b Hkv n Dh) |> rope(pos)
    v = linear(x, wv) |> rearrange(b n (Hkv Dh) -> b Hkv n Dh)
    return scaled_dot_product_attention(q, k, v, attn_mask=causal[n n], window=W)
        |> rearrange(b H n Dh -> b n (H Dh))
        |> linear(wo)

## SwiGLU: silu(x W_gate) * (x W_up), projected back to D.
fn feed_forward(x: [b n D], w_gate: [F D], w_up: [F D], w_down: [D F]) -> [b n D]:
    return linear(silu(linear(x, w_gate)) * linear(x, w_up), w_down)

fn forward(m: MistralSliding, ids: [b n] Index[V], pos: [b n] Index[P]) -> [b n V] Logit over V:
    x = embedding(ids, m.wte)
    for l in 0..L:
        x = x + attention(rms_norm(x, over=D, weight=m.attn_norm[l]), m.wq[l], m.wk[l], m.wv[l], m.wo[l], pos)
        x = x + feed_forward(rms_norm(x, over=D, weight=m.ffn_norm[l]), m.w_gate[l], m.w_up[l], m.w_down[l])
    return linear(rms_norm(x, over=D, weight=m.norm), m.w_out)

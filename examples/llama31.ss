# A small Llama 3.1: examples/llama_gqa.ss with Llama 3.1's rope scaling (`rope_type` "llama3"). Each
# rotary frequency is kept, divided by `factor`, or blended between the two, by how its wavelength
# 2*pi/f compares with the context the model was first trained on (`original_max_position_embeddings`):
# wavelengths under context/high_freq_factor are kept, those over context/low_freq_factor are divided
# by factor, and those between are blended by s = (context/wavelength - low) / (high - low). Llama
# 3.1's numbers are factor 8, low 1, high 4 over a context of 8192, rotary base 500000; here the
# context is 64 and the base 10000, so that of the 16 frequencies of a head of 32, two are kept,
# three blended and eleven divided.
# The choice of three is two `where`s. Heads of 32, a size vLLM's CPU attention has.
dim D   = 64
dim H   = 2
dim Hkv = 1
dim Dh  = D / H
dim Dkv = Hkv * Dh
dim Dh2 = Dh / 2
dim F   = 128
dim V   = 128
dim L   = 2
dim P   = 128

model Llama31:
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

## Llama 3.1's scaling of the rotary frequencies f: factor 8, low_freq_factor 1, high_freq_factor 4,
## original context 64.
fn llama3_scaled(inv_freq: [Dh2]) -> [Dh2]:
    ratio = inv_freq * 64 / 6.283185307179586    # the original context over each wavelength 2*pi/f
    smooth = (ratio - 1) / (4 - 1)
    blended = (1 - smooth) * inv_freq / 8 + smooth * inv_freq
    long_waves = ratio < 1                         # wavelength over context / low_freq_factor
    short_waves = ratio > 4                        # wavelength under context / high_freq_factor
    return where(short_waves, inv_freq, where(long_waves, inv_freq / 8, blended))

## Rotates each pair (i, i + Dh/2) of each of the g heads by the angle pos * f_i, f the frequencies
## 10000^(-2i/Dh) scaled.
fn rope(x: [b g n Dh], pos: [b n] Index[P]) -> [b g n Dh]:
    inv_freq = Dh2 |> map(i => exp(-2 * i / Dh * log(10000)))
    angle = rearrange(pos, b n -> b 1 n 1) * llama3_scaled(inv_freq)
    x1, x2 = x |> split(b g n (2 h) -> b g n h)
    return concat(x1 * cos(angle) - x2 * sin(angle), x2 * cos(angle) + x1 * sin(angle), over=h)

fn attention(x: [b n D], wq: [D D], wk: [Dkv D], wv: [Dkv D], wo: [D D], pos: [b n] Index[P]) -> [b n D]:
    q = linear(x, wq) |> rearrange(b n (H Dh) -> b H n Dh) |> rope(pos)
    k = linear(x, wk) |> rearrange(b n (Hkv Dh) -> b Hkv n Dh) |> rope(pos)
    v = linear(x, wv) |> rearrange(b n (Hkv Dh) -> b Hkv n Dh)
    return scaled_dot_product_attention(q, k, v, attn_mask=causal[n n])
        |> rearrange(b H n Dh -> b n (H Dh))
        |> linear(wo)

## SwiGLU: silu(x W_gate) * (x W_up), projected back to D.
fn feed_forward(x: [b n D], w_gate: [F D], w_up: [F D], w_down: [D F]) -> [b n D]:
    return linear(silu(linear(x, w_gate)) * linear(x, w_up), w_down)

fn forward(m: Llama31, ids: [b n] Index[V], pos: [b n] Index[P]) -> [b n V] Logit over V:
    x = embedding(ids, m.wte)
    for l in 0..L:
        x = x + attention(rms_norm(x, over=D, weight=m.attn_norm[l]), m.wq[l], m.wk[l], m.wv[l], m.wo[l], pos)
        x = x + feed_forward(rms_norm(x, over=D, weight=m.ffn_norm[l]), m.w_gate[l], m.w_up[l], m.w_down[l])
    return linear(rms_norm(x, over=D, weight=m.norm), m.w_out)

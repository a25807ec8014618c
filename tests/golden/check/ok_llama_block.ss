# A Llama-style block: RMSNorm, rotary position embeddings, SwiGLU.
dim D    = 64
dim H    = 4
dim Dh   = D / H
dim Half = Dh / 2
dim F    = 172
dim P    = 2048

fn rotate(x: [b H n Dh], cos_t: [n Dh], sin_t: [n Dh]) -> [b H n Dh]:
    x1, x2 = x |> split(b H n (2 Half) -> b H n Half)
    rotated = concat(-x2, x1, over=Half) |> rearrange(b H n s -> b H n s)
    return x * cos_t + (rotated as [b H n Dh]) * sin_t

fn rope_tables(pos: [n] Index[P]) -> [n Dh]:
    freq = Half |> map(j => exp(-9.21 * j / Half))
    angles = pos |> map(p => freq * p)
    return concat(angles, angles, over=Half) |> rearrange(n s -> n s) |> cos

fn swiglu(x: [b n D], w_gate: [F D], w_up: [F D], w_down: [D F]) -> [b n D]:
    return (silu(linear(x, w_gate)) * linear(x, w_up)) |> linear(w_down)

fn block(x: [b n D], pos: [n] Index[P], w_qkv: [3*D D], w_o: [D D], norm1: [D], norm2: [D], w_gate: [F D], w_up: [F D], w_down: [D F]) -> [b n D]:
    h = rms_norm(x, over=D, weight=norm1, eps=1e-6)
    q, k, v = linear(h, w_qkv) |> split(b n (3 H Dh) -> b H n Dh)
    c = rope_tables(pos)
    q = rotate(q, c, c)
    k = rotate(k, c, c)
    att = scaled_dot_product_attention(q, k, v, attn_mask=causal[n n]) |> rearrange(b H n Dh -> b n (H Dh))
    x = x + linear(att, w_o)
    return x + swiglu(rms_norm(x, over=D, weight=norm2), w_gate, w_up, w_down)

dim D = 64
dim H = 4
dim Dh = D / H

fn attention(x: [b n D], w_qkv: [3*D D], w_o: [D D]) -> [b n D]:
    q, k, v = linear(x, w_qkv) |> split(b n (3 H Dh) -> b H n Dh)
    return scaled_dot_product_attention(q, k, v, attn_mask=causal[n n])
        |> rearrange(b H n Dh -> b n (H Dh))
        |> linear(w_o)

fn block(x: [b n D], w_qkv: [D D], w_o: [D D]) -> [b n D]:
    return x + attention(x, w_qkv, w_o)

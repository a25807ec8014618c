# Grouped projection, then attention with torch's causal mask.
# Dynamic: b, n. Fixed: D, H, Dh.
dim D  = 32
dim H  = 2
dim Dh = D / H

## Causal self-attention with scaled_dot_product_attention and causal[n n].
export fn attention_sdpa(x: [b n D], w_qkv: [3*D D], w_o: [D D]) -> [b n D]:
    q, k, v = linear(x, w_qkv) |> split(b n (3 H Dh) -> b H n Dh)
    return scaled_dot_product_attention(q, k, v, attn_mask=causal[n n])
        |> rearrange(b H n Dh -> b n (H Dh))
        |> linear(w_o)

dim D   = 96
dim H   = 6
dim Hkv = 4
dim Dh  = D / H

## 6 query heads can't be split into 4 equal groups of key/value heads.
fn attention(x: [b n D], wq: [D D], wkv: [2*Hkv*Dh D]) -> [b H n Dh]:
    q = linear(x, wq) |> rearrange(b n (H Dh) -> b H n Dh)
    k, v = linear(x, wkv) |> split(b n (2 Hkv Dh) -> b Hkv n Dh)
    return scaled_dot_product_attention(q, k, v, attn_mask=causal[n n])

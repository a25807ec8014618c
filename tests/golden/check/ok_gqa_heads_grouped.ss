dim D   = 96
dim H   = 6
dim Hkv = 2
dim Dh  = D / H

## Grouped-query attention: 6 query heads in 2 groups of 3, each reading one key/value head.
fn attention(x: [b n D], wq: [D D], wkv: [2*Hkv*Dh D]) -> [b H n Dh]:
    q = linear(x, wq) |> rearrange(b n (H Dh) -> b H n Dh)
    k, v = linear(x, wkv) |> split(b n (2 Hkv Dh) -> b Hkv n Dh)
    return scaled_dot_product_attention(q, k, v, attn_mask=causal[n n])

## The same with sizes only: `(3 g)` query heads over `g` key/value heads is a whole multiple.
fn grouped(q: [b (3 g) n e], k: [b g m e], v: [b g m e]) -> [b (3 g) n e]:
    return scaled_dot_product_attention(q, k, v)

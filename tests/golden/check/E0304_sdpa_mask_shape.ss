## The mask is over the positions n and m; `causal[m n]` has them the other way round.
fn attention(q: [b h n e], k: [b h m e], v: [b h m e]) -> [b h n e]:
    return scaled_dot_product_attention(q, k, v, attn_mask=causal[m n])

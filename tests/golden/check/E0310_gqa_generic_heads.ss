## Query heads `h` and key/value heads `g`: nothing says h is a multiple of g.
fn attention(q: [b h n e], k: [b g m e], v: [b g m e]) -> [b h n e]:
    return scaled_dot_product_attention(q, k, v)

## q, k and v disagree on their leading axes: the batch (4, 7, 2) and the heads (4, 3, 5).
fn attention(q: [b 4 n e], k: [7 3 m e], v: [2 5 m e]) -> [b 4 n e]:
    return scaled_dot_product_attention(q, k, v)

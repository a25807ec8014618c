# Attention over [b n D] whose heads were never split: the pattern that expects them says what to
# check (no sure fix exists here: where to split is the author's choice), and labels where `o` was made.
dim D = 64
dim H = 4
dim Dh = D / H
model M:
    param wq: [D D] = normal(std=0.02)
    param wo: [D D] = normal(std=0.02)
fn attn(m: M, x: [b n D]) -> [b n D]:
    q = linear(x, m.wq)
    o = scaled_dot_product_attention(q, q, q)
    return rearrange(o, b H n Dh -> b n (H Dh)) |> linear(m.wo)

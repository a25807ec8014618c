dim Dn = 16
dim Dr = 8
dim H = 2

# DeepSeek's query heads: a part without rotary and a part with it, of unequal sizes.
fn rope_part(x: [b n (H (Dn + Dr))]) -> [b H n Dr]:
    q = x |> rearrange(b n (H e) -> b H n e)
    q_nope, q_rope = q |> split(Dn, Dr, over=e)
    return q_rope

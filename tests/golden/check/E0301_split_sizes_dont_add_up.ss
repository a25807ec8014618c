dim Dn = 16
dim Dr = 8

fn rope_part(q: [b H n 32]) -> [b H n Dr]:
    q_nope, q_rope = q |> split(Dn, Dr, over=32)
    return q_rope

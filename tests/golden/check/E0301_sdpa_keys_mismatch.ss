dim D  = 64
dim H  = 4
dim Dh = D / H

fn attend(q: [b H n Dh], k: [b H m D], v: [b H m Dh]) -> [b H n Dh]:
    return scaled_dot_product_attention(q, k, v)

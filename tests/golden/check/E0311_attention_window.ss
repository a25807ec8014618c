dim D  = 64
dim H  = 2
dim Dh = D / H
dim W  = 16

## A window needs a causal mask to slide along, and a size fixed when checking.
fn no_mask(q: [b H n Dh], k: [b H n Dh], v: [b H n Dh]) -> [b H n Dh]:
    return scaled_dot_product_attention(q, k, v, window=W)

fn per_sequence(q: [b H n Dh], k: [b H n Dh], v: [b H n Dh]) -> [b H n Dh]:
    return scaled_dot_product_attention(q, k, v, attn_mask=causal[n n], window=n)

fn empty(q: [b H n Dh], k: [b H n Dh], v: [b H n Dh]) -> [b H n Dh]:
    return scaled_dot_product_attention(q, k, v, attn_mask=causal[n n], window=W - 16)

fn fraction(q: [b H n Dh], k: [b H n Dh], v: [b H n Dh]) -> [b H n Dh]:
    return scaled_dot_product_attention(q, k, v, attn_mask=causal[n n], window=0.5)

fn sliding(q: [b H n Dh], k: [b H n Dh], v: [b H n Dh]) -> [b H n Dh]:
    return scaled_dot_product_attention(q, k, v, attn_mask=causal[n n], window=W)

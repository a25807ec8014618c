dim H   = 4
dim Hkv = 2

## Sinks are one logit per query head; a softcap is a fixed positive number.
fn kv_sinks(q: [b H n e], k: [b Hkv n e], v: [b Hkv n e], s: [Hkv]) -> [b H n e]:
    return scaled_dot_product_attention(q, k, v, attn_mask=causal[n n], sinks=s)

fn zero_cap(q: [b H n e], k: [b H n e], v: [b H n e]) -> [b H n e]:
    return scaled_dot_product_attention(q, k, v, attn_mask=causal[n n], softcap=0)

fn tensor_cap(q: [b H n e], k: [b H n e], v: [b H n e], c: [H]) -> [b H n e]:
    return scaled_dot_product_attention(q, k, v, attn_mask=causal[n n], softcap=c)

fn integer_bias(q: [b H n e], k: [b H n e], v: [b H n e], a: [n n] Index[H]) -> [b H n e]:
    return scaled_dot_product_attention(q, k, v, attn_mask=causal[n n], bias=a)

fn fine(q: [b H n e], k: [b Hkv n e], v: [b Hkv n e], s: [H], a: [H 1 n]) -> [b H n e]:
    return scaled_dot_product_attention(q, k, v, attn_mask=causal[n n], softcap=50.0, sinks=s, bias=a)

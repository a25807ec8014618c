# Attention written by hand: einsum, scale, masked_fill with causal[n m], softmax.
# Dynamic: b, n. Fixed: D, H, Dh.
dim D  = 32
dim H  = 4
dim Dh = D / H

## Causal attention, by hand.
export fn attention_einsum(x: [b n D], w_qkv: [3*D D], w_o: [D D]) -> [b n D]:
    q, k, v = linear(x, w_qkv) |> split(b n (3 H Dh) -> b H n Dh)
    att = einsum(q, k: b H n Dh, b H m Dh -> b H n m)
        |> scale(1 / sqrt(Dh))
        |> masked_fill(!causal[n m], -inf)
        |> softmax(over=m)
    return einsum(att, v: b H n m, b H m Dh -> b H n Dh)
        |> rearrange(b H n Dh -> b n (H Dh))
        |> linear(w_o)

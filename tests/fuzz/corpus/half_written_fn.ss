dim D = 64
dim H = 4
dim Dh = D / H

fn attention(x: [b n D], w_qkv: [3*D D], w_o: [D D]) -> [b n D]:
    q, k, v = linear(x, w_qkv) |> split(b n (3 H Dh) -> b H n
    att = einsum(q, k: b H n Dh, b H m Dh ->
        |> scale(1 / sqrt(
        |> softmax(over=
    return einsum(att, v: b H n m, b H m Dh -> b H n Dh)
        |> rearrange(b H n Dh -> b n (H

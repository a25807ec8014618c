dim D  = 64
dim H  = 4
dim Dh = D / H

fn qkv(x: [b n D], w_qkv: [2*D D]) -> [b H n Dh]:
    q, k, v = linear(x, w_qkv) |> split(b n (3 H Dh) -> b H n Dh)
    return q

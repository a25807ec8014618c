dim D  = 64
dim H  = 4
dim Dh = D / H

fn qk(x: [b n D], w_qkv: [3*D D]) -> [b H n Dh]:
    q, k = linear(x, w_qkv) |> split(b n (3 H Dh) -> b H n Dh)
    return q

# split into q, k, v and combine them element-wise.
# Dynamic: b, n.
dim D  = 16
dim H  = 2
dim Dh = D / H

## Splits a fused projection into q, k, v heads.
export fn gate(x: [b n D], w_qkv: [3*D D]) -> [b H n Dh]:
    q, k, v = linear(x, w_qkv) |> split(b n (3 H Dh) -> b H n Dh)
    return q * sigmoid(k) + v

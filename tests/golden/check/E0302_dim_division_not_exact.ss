dim D  = 100
dim H  = 8
dim Dh = D / H

fn heads(x: [b n D]) -> [b H n Dh]:
    return x |> rearrange(b n (H Dh) -> b H n Dh)

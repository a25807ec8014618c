dim D = 64

fn heads(x: [b n D]) -> [b n D]:
    return x |> rearrange(b n D -> b m D)

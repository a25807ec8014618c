dim D = 64

fn grid(x: [b n D]) -> [b n D]:
    y = x |> rearrange(b (h w) D -> b h w D)
    return x

dim D = 64

export fn unpatch(x: [b (gh gw) D]) -> [b gh gw D]:
    return x |> rearrange(b (gh gw) D -> b gh gw D)

dim D = 64

fn maybe_pool(x: [b 2*n D], flag: Bool) -> [b 2*n D]:
    if flag:
        x = x |> rearrange(b (h 2) D -> b h D)
    return x

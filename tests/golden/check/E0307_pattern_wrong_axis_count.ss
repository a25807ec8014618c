dim D = 64

fn flatten(x: [b n D]) -> [b (n D)]:
    return x |> rearrange(b n h D -> b (n h D))

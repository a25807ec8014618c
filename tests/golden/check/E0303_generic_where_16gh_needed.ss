dim D = 768

export fn patchify(img: [b 3 16gh 16gw]) -> [b (gh gw) D]:
    return img |> rearrange(b c (gh p1) (gw p2) -> b (gh gw) (p1 p2 c))

fn embed_any(img: [b 3 h w]) -> [b ?k D]:
    return patchify(img) as [b ?k D]

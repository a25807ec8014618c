dim D = 768

fn patchify(img: [b 3 16gh 16gw]) -> [b (gh gw) D]:
    return img |> rearrange(b c (gh p1) (gw p2) -> b (gh gw) (p1 p2 c))

## Three independent errors: neither `h` nor `w` is known to be a multiple of 16, and the result
## would be `[b (h/16 w/16) D]`, which the declared `[b ?k D]` doesn't say.
fn embed_any(img: [b 3 h w]) -> [b ?k D]:
    return patchify(img)

dim D = 32

## `over=` picks an axis with no name by its size: a group, a scaled axis.
fn patchify(img: [b 3 16gh 16gw], w: [D 768]) -> [b (gh gw) D]:
    return img |> rearrange(b c (gh p1) (gw p2) -> b (gh gw) (p1 p2 c)) |> linear(w)

export fn pooled(img: [b 3 16gh 16gw], w: [D 768]) -> [b D]:
    x = patchify(img, w)
    return softmax(x, over=gh*gw) |> mean(over=gh*gw)

export fn strongest(rows: [b 16gh D]) -> [b D]:
    return max(rows, over=16*gh)

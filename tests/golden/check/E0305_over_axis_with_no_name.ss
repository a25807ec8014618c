dim D = 64

## One vector per 16×16 patch.
fn patchify(img: [b 3 16gh 16gw], w: [D 768]) -> [b (gh gw) D]:
    return img |> rearrange(b c (gh p1) (gw p2) -> b (gh gw) (p1 p2 c)) |> linear(w)

## Mean over the patches: the axis `(gh gw)` has no name of its own.
fn pooled(img: [b 3 16gh 16gw], w: [D 768]) -> [b D]:
    return patchify(img, w) |> mean(over=gh)

## The strongest row of each image: `16gh` has no name either.
fn strongest(rows: [b 16gh D]) -> [b D]:
    return max(rows, over=gh)

dim D = 8

fn pairs(x: [b 2*n D]) -> [b n (2 D)]:
    return x |> rearrange(b (n two) D -> b n (two D))

fn with_cls(x: [b n D], cls: [b 1 D]) -> [b n+1 D]:
    return concat(x, cls, over=n)

export fn patches(img: [b 3 16gh 16gw]) -> [b gh gw 768]:
    return img |> rearrange(b c (gh p1) (gw p2) -> b gh gw (p1 p2 c))

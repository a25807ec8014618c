dim D = 768

export fn patchify(img: [b 3 16gh 16gw] -> [b (gh gw) D]:
    return img |> rearrange(b c (gh p1) (gw p2) -> b (gh gw) (p1 p2 c)

fn pairs(x: [b 2*n D]) -> [b n (2 D
    return x |> rearrange(b (n two) D -> b n (two D))

fn pool(x: [b n D]) -> [b 3*D]:
	s = sum(x, over=n)
    m = mean(x over=n)
    return concat(s, m, over=D)

dim D = 64

## The mean of each window of 8 positions.
fn window_means(x: [b n D]) -> [b 8*D]:
    w = x |> rearrange(b (k 8) D -> b k (8 D))
    return mean(w, over=k)

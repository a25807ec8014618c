dim D = 64

## Each row of `x`, doubled, through `map` over the slices along `b`.
fn rows(x: [b D]) -> [b D]:
    return x |> map(r => r * 2)

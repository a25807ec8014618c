dim D = 16

fn center(x: [b n D]) -> [b n D]:
    mu = mean(x, over=D) |> rearrange(b n -> b n 1)
    return x - mu

fn add_bias(x: [b n D], bias: [D]) -> [b n D]:
    return x + bias

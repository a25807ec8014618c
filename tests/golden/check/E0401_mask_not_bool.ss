dim D = 64

fn masked(att: [b n m], keep: [n m] Int) -> [b n m]:
    return att |> masked_fill(keep, -inf)

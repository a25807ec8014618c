fn masked(att: [n m], keep: [b n m] Bool) -> [n m]:
    return att |> masked_fill(keep, -inf)

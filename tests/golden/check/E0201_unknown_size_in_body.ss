dim D = 64

fn masked(att: [b n m]) -> [b n m]:
    return att |> masked_fill(!causal[n k], -inf)

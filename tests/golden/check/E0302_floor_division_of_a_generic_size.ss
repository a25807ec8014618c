# `n // 2` is a size only for some n: no polynomial of n says it for odd and even n alike.
fn halve(x: [n]) -> [n // 2]:
    return x

# `as` may name an axis of its own (k): it is bound by the assertion, not checked.
dim D = 8

export fn f(x: [n D]) -> [n D]:
    y = x as [k D]
    return x + ((y |> sum(over=k)) |> rearrange(D -> 1 D))

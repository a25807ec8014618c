dim D = 64

fn positions(x: [b n D]) -> [n] Index[n]:
    return n |> map(relu)

dim D = 64
dim

fn f(x: [b D]) -> [b D]:
    return x |> sofmax(over=D)

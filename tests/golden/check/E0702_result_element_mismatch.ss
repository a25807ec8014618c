dim D = 64
dim V = 500

fn predict(x: [b D], w: [V D]) -> [b] Index[V]:
    return linear(x, w) |> max(over=V)

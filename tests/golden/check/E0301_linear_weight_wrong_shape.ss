dim D = 64
dim F = 256

fn mlp(x: [b n D], w_fc: [D F], w_proj: [D F]) -> [b n D]:
    return linear(x, w_fc) |> gelu |> linear(w_proj)

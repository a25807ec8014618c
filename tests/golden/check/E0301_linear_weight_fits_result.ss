dim D = 64
dim F = 256

## The weight should map D to D, as the result says: `[D D]`, not the transpose `[F D]`.
fn project(x: [b n D], w: [D F]) -> [b n D]:
    return linear(x, w)

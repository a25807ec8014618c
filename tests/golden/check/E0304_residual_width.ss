# A residual around a layer that changed the width: the line that made `h` is labelled, and the
# help says to project it back.
dim D = 64
dim F = 256
model Mlp:
    param up: [F D] = normal(std=0.02)
    param down: [D F] = normal(std=0.02)
fn mlp(m: Mlp, x: [b n D]) -> [b n D]:
    h = linear(x, m.up)
    return x + h

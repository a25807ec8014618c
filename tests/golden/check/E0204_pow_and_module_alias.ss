dim D = 64
dim F = 256

model MLP:
    param up: [F D] = normal(std=0.02)
    param down: [D F] = normal(std=0.02)

## PyTorch's `x.pow(2)` is `(x * x)`, whose value is x's, so the line goes on being checked.
fn mean_square(x: [b n D]) -> [b n]:
    return x.pow(2).mean(dim=-1)

## `F.gelu` in a file with `dim F`: PyTorch's module alias, not a method of the size `F`; the fix
## writes ShapeScript's own `gelu`, not `gelu(F, ..)`.
fn mlp(m: MLP, x: [b n D]) -> [b n D]:
    h = F.gelu(linear(x, m.up))
    return linear(h, m.down)

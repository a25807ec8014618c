## PyTorch's `nn.Linear` as a param: the weight it holds, `[out in]`, with its type.
dim D = 64
dim F = 256

model Mlp:
    param up = nn.Linear(D, F)
    param down = nn.Linear(F, D, bias=False)

fn forward(m: Mlp, x: [b n D]) -> [b n D]:
    return linear(gelu(linear(x, m.up)), m.down)

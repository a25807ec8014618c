dim D = 32

fn activate(x: [b D], kind: Int) -> [b D]:
    if kind == 0:
        return relu(x)
    elif kind == 1:
        return gelu(x, approximate="tanh")
    else:
        return silu(x)

dim D = 64
dim V = 100

## PyTorch's methods that are built-ins here, `x.mean(dim=1)`, `x.softmax(dim=-1)`, `x.exp()`: each
## is reported with the call its fix writes and has that call's value, so the lines after it are
## checked in the same round. Here, that the pooled `[b D]` meets a weight stored as `[D V]`.
fn pool(x: [b n D], w: [D V]) -> [b V]:
    m = x.mean(dim=1)
    return linear(m, w)

fn probs(x: [b n D], w: [V D]) -> [b n V]:
    p = x.softmax(dim=-1)
    return linear(p, w)

fn act(x: [b n D]) -> [b n D]:
    return x.exp() + x.tanh()

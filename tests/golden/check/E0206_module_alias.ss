dim D = 64

## `F` is what Python code imports torch.nn.functional as: a built-in's own name is offered first,
## and a Python call is the module's whole name, which `import python` has no alias for.
fn act(x: [b D]) -> [b D]:
    return F.gelu(x)

fn glu(x: [b D]) -> [b D]:
    return F.hardshrink(x) as [b D]

## A module's function that is a built-in is checked as the built-in its fix writes, so PyTorch's
## keywords get their fixes in the same round, and its value is known after it.
fn probs(att: [b n m]) -> [b n m]:
    p = F.softmax(att, dim=-1)
    return p

fn joined(x: [b n D], y: [b n D]) -> [b n 2*D]:
    return torch.cat(x, y, dim=-1)

fn gated(x: [b n D]) -> [b n D]:
    return torch.relu(x) * F.softmax(x, dim=1)

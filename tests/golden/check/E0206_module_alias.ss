dim D = 64

## `F` is what Python code imports torch.nn.functional as: a built-in's own name is offered first,
## and a Python call is the module's whole name, which `import python` has no alias for.
fn act(x: [b D]) -> [b D]:
    return F.gelu(x)

fn glu(x: [b D]) -> [b D]:
    return F.hardshrink(x) as [b D]

# Checks, but torch has no such function: the export fails in Python.
extern fn nope(x: Real) -> Real = "torch.special.no_such_function"

export fn broken(x: [b n]) -> [b n]:
    return nope(x)

# if / elif / else on a Bool input: nested torch.cond, rebinding a parameter.
# Dynamic: b, n.
dim D = 8

## Negates, doubles or keeps x, by two flags.
export fn choose(x: [b n D], negate: Bool, double: Bool) -> [b n D]:
    if negate:
        x = -x
    elif double and !negate:
        x = x * 2.0
    return x + 1.0

dim H = 4
dim Dh = 16

## Python's ways to write infinity: ShapeScript's is `inf`.
fn masked(q: [b H n Dh]) -> [b H n n]:
    s = einsum(q, q: b H n d, b H m d -> b H n m) / sqrt(Dh)
    s = masked_fill(s, !causal[n n], float("-inf"))
    return softmax(s, over=m)

fn floor(x: [b n]) -> [b n]:
    return maximum(x, -math.inf)

fn ceiling(x: [b n]) -> [b n]:
    return minimum(x, torch.inf)

## No sure fix: `float(x)` of a tensor.
fn as_real(x: [b n] Int) -> [b n]:
    return float(x)

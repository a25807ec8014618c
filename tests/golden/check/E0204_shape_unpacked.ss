dim D = 64
dim H = 4

## PyTorch's `B, T, C = x.shape`: the sizes are the axes' names, which the fix writes where they are used.
fn scaled(x: [b n D]) -> [b n D]:
    B, N, C = x.shape
    return x / sqrt(C)

fn heads(x: [b n D]) -> [b n H D/H]:
    B, T, C = x.size()
    y = x |> rearrange(b n (H Dh) -> b n H Dh)
    return y * (T / T)

## Kept names need only the line gone; `_` names nothing.
fn same(x: [b n D]) -> [b n D]:
    b, n, _ = x.shape
    return x * (n / n)

## No sure fix: `C` is assigned again.
fn rebound(x: [b n D]) -> [b n D]:
    B, N, C = x.shape
    C = 2
    return x * C

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

## An axis with no name of its own is its size, where the function can write it: `(n+1)`.
fn grown(x: [b n+1 n+1]) -> [b n+1 n+1]:
    B, M, K = x.shape
    return x * (M / K)

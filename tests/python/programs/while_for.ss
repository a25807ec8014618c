# `for` over a dynamic size: torch.while_loop.
# Dynamic: b, n.
dim D = 4

## Applies `h = h / 2 + x` once per position of the sequence (n times).
export fn repeat_n(x: [b D], seq: [b n D]) -> [b D]:
    h = x
    for i in 0..n:
        h = h * 0.5 + x
    return h

dim D = 64

## HF's test for an argument left out: every parameter is passed, so the `if` is checked as it stands.
fn masked(x: [b n D], mask: [b n D] Bool) -> [b n D]:
    if mask is not None:
        x = where(mask, x, 0.0)
    if mask is None:
        return x
    return x

## `None` itself, and Python's `assert` and single quotes.
fn defaults(x: [b n D]) -> [b n D]:
    mask = None
    assert D % 2 == 0
    y = masked_fill(x, x > 0.0, float('-inf'))
    return x

dim D = 64

## Python's `with` block: the parser can't read it, and the function is cut short there; that it
## then "does not return" is not said as well, since its `return` may be in what was not read.
fn frozen(x: [b n D]) -> [b n D]:
    with torch.no_grad():
        y = x * 2
    return y

## A function that truly lacks its `return` is still told so.
fn forgotten(x: [b n D]) -> [b n D]:
    y = x * 2

## Python's `while`.
fn halved(x: [b n D]) -> [b n D]:
    while x > 1:
        x = x / 2
    return x

dim D = 64

## Python's `with` block: its lines are read as the body's own, and the fix takes them back a level.
fn frozen(x: [b n D]) -> [b n D]:
    with torch.no_grad():
        y = x * 2

        z = y + 1
    return z

## Python's `while`: its lines are checked once; no sure fix.
fn halved(x: [b n D]) -> [b n D]:
    while x > 1:
        x = x / 2
    return x

## `with .. as ..` binds a Python object: no sure fix.
fn opened(x: [b n D]) -> [b n D]:
    with open("f") as f:
        y = x * 2
    return y

## `try` is not read: the function is cut short there, and that it then "does not return" is not
## said as well, since its `return` may be in what was not read.
fn guarded(x: [b n D]) -> [b n D]:
    try:
        y = x * 2
    except:
        y = x
    return y

## A function that truly lacks its `return` is still told so.
fn forgotten(x: [b n D]) -> [b n D]:
    y = x * 2

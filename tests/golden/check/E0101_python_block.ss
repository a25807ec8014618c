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

## Python's `try`: its lines are read as the body's own, an `except`'s are not (they run only on an
## error, and a shape can't go wrong as the program runs). The fix removes `try` and each `except`,
## lines and all, and takes the `try`'s and a `finally`'s lines back a level.
fn guarded(x: [b n D]) -> [b n D]:
    try:
        y = x * 2
    except ValueError as e:
        y = x
        print(e)
    finally:
        z = 1
    return y

## A bare `except:` is one too.
fn caught(x: [b n D]) -> [b n D]:
    try:
        y = x * 2
    except:
        y = x
    return y

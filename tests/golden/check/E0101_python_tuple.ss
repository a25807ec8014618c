dim D = 64
dim H = 4

## PyTorch's shape as a tuple, `x.reshape((b, -1))`, is read as its arguments, so the call is
## checked (here: `.reshape` is `rearrange`), and the fix drops the parentheses and a trailing comma.
fn flat(x: [b n D]) -> [b n*D]:
    return x.reshape((b, -1,))

fn double(x: [b n D]) -> [b n D]:
    return x * 2

fn twice(x: [b n D]) -> [b n D]:
    return double((x,))

## A tuple of one is the value itself.
fn scaled(x: [b n D]) -> [b n D]:
    s = (D,)
    return x * s

## A function returns one value; a tuple elsewhere has no sure fix, but its line is still read.
fn both(x: [b n D], y: [b n D]) -> [b n D]:
    return x, y

fn pair(x: [b n D], y: [b n D]) -> [b n D]:
    t = (x, y)
    return x + y

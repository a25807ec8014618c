dim D = 64
dim H = 4
dim Dh = 16

## Python's `**`: for the powers models use, the fix writes the operation the language has, in
## parentheses since it stands for one operand; the value is the base's, so the lines after it are
## checked.
fn scores(q: [b H n Dh], k: [b H m Dh]) -> [b H n m]:
    return einsum(q, k: b H n Dh, b H m Dh -> b H n m) * Dh ** -0.5

## `x.size(-1)` is the axis's size, and its fix comes in the same round.
fn scaled(q: [b H n Dh]) -> [b H n Dh]:
    return q * q.size(-1) ** -0.5

fn energy(x: [b n D]) -> [b n]:
    return sum(x ** 2, over=D)

fn root(x: [b n D] NonNeg) -> [b n D]:
    return x ** 0.5

fn sign_first(x: [b n D]) -> [b n D]:
    return -x ** 2

## No sure fix: another power.
fn cubic_root(x: [b n D] NonNeg) -> [b n D]:
    return x ** 0.25

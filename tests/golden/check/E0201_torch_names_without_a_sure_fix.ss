dim D = 64

## PyTorch's names where no sure fix exists: the help says how ShapeScript writes them.
fn pairs(x: [b n D]) -> [b n D]:
    return reshape(x, b, n, D)

## Two axes written alike can't be told apart in a pattern.
fn square(x: [b n n]) -> [b n n]:
    return transpose(x, 1, 2)

## A `-1` among sizes split out of one axis has no name to write.
fn heads(x: [b n D]) -> [b n 8 8]:
    return x.view(b, n, 8, -1)

dim D = 64

## PyTorch's names where no sure fix exists: the help says how ShapeScript writes them.
fn pairs(x: [b n D]) -> [b n D]:
    return reshape(x, b, n, D)

## `16gh` has no name of its own, which a pattern needs.
fn moved(x: [b 16gh D]) -> [b D 16gh]:
    return transpose(x, 1, 2)

## A `-1` among sizes split out of one axis has no name to write.
fn heads(x: [b n D]) -> [b n 8 8]:
    return x.view(b, n, 8, -1)

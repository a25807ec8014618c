# `stack` makes an axis of as many entries as tensors; a dim of another size can't name it.
dim D = 8
dim Three = 3

export fn pair(x: [n D], y: [n D]) -> [Three n D]:
    return stack(x, y, over=Three)

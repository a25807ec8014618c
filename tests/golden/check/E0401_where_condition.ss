# `where` picks by a Bool condition; a Real one is refused.
dim D = 8

export fn pick(x: [n D], y: [n D]) -> [n D]:
    return where(x - y, x, y)

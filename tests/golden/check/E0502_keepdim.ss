dim D = 64

## keepdim=True: the reduced axis is gone, and a pattern puts it back as a 1.
fn centered(x: [b n D]) -> [b n D]:
    return x - mean(x, over=D, keepdim=True)

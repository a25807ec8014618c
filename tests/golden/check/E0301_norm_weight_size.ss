dim D = 64
dim F = 256

fn normed(x: [b n D], w: [F]) -> [b n D]:
    return rms_norm(x, over=D, weight=w)

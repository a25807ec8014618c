dim D = 64

fn maybe_norm(x: [b D], flag: Int) -> [b D]:
    if flag:
        return rms_norm(x, over=D)
    return x

# 768 is known, and is not a multiple of 10: the message says so rather than "may not be".
dim D = 768
fn heads(x: [b n D]) -> [b n D]:
    y = rearrange(x, b n (10 h) -> b n 10 h)
    return x

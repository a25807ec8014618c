dim D = 64

fn flat(x: [b n D]) -> [b (n D)]:
    return rearrange(x)

fn probs(x: [b n D]) -> [b n D]:
    return softmax(x, b n D -> b n D, over=D)

dim D = 64

fn probs(x: [b n D]) -> [b n D]:
    return softmax(x, ovr=D)

dim D = 64

fn softmax(x: [b D]) -> [b D]:
    return exp(x)

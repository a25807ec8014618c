dim V = 100

fn loss(logits: [b n V], t: [b n]) -> []:
    return cross_entropy(logits, t, over=V)

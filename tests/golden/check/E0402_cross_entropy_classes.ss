# Targets of `Index[8]` against logits of 10 classes.
dim C = 10
dim K = 8

export fn loss(logits: [b n C], targets: [b n] Index[K]) -> Real:
    return cross_entropy(logits, targets, over=C)

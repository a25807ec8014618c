# The targets must be the logits without their class axis: one class index per position.
dim C = 10
dim b = 4

## One position's logits against a batch of targets.
export fn one(logits: [C], targets: [b] Index[C]) -> Real:
    return cross_entropy(logits, targets, over=C)

## Five positions' logits against one position's targets.
export fn five(logits: [1 5 C], targets: [1 1] Index[C]) -> Real:
    return cross_entropy(logits, targets, over=C)

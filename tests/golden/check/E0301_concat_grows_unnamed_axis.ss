## The declared result grows the second axis, which has no name: `over=` takes its size,
fn joined(a: [b 8 D], c: [b 8 D]) -> [b 16 D]:
    return concat(a, c, over=D)

## unless another axis has that size too.
fn square(a: [b 8 8 D], c: [b 8 8 D]) -> [b 16 8 D]:
    return concat(a, c, over=D)

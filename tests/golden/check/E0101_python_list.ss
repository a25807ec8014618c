dim D = 64

## A Python list of tensors: the fix writes them as the arguments they are.
fn joined(x: [b n D], y: [b n D]) -> [b n 2*D]:
    return concat([x, y], over=D)

fn stacked(x: [b n D], y: [b n D]) -> [2 b n D]:
    return stack(
        [x, y],
        over=2,
    )

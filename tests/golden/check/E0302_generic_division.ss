dim D = 16

## Pairs up neighbouring positions.
fn pairs(x: [b n D]) -> [b n/2 (2 D)]:
    return x

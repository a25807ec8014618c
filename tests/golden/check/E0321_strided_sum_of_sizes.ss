dim C = 4

## `t+1` is no single name to write as `2t`: every term but the number must be a multiple of 2.
fn strided(x: [b C t+1], w: [C C 3]) -> [b C t]:
    return conv1d(x, w, stride=2, padding=1)

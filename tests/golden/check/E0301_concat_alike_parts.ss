dim D = 64

## Parts of one shape joined along the wrong axis: nothing disagrees but the declared result, which
## says which axis grows; the error is at `over=`.
fn join(a: [b n D], c: [b n D]) -> [b 2*n D]:
    return concat(a, c, over=D)


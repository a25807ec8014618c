## A dim without its value is read as one, so the lines after it are read as they are.
dim D = 64
dim F

## A size that varies from call to call needs no dim: it is named where it is used.
dim b, n

fn mlp(x: [b n D], up: [F D]) -> [b n F]:
    return linear(x, up)

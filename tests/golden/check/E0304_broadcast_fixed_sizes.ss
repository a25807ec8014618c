dim D = 64
dim F = 256

fn add_bias(x: [b n D], bias: [F]) -> [b n D]:
    return x + bias

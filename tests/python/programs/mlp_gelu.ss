# A GPT-2 feed-forward block with the tanh approximation of GELU.
# Dynamic: b, n.
dim D = 16
dim F = 4 * D

## Linear, GELU (tanh), linear, with biases.
export fn mlp(x: [b n D], w1: [F D], b1: [F], w2: [D F], b2: [D]) -> [b n D]:
    h = gelu(linear(x, w1) + b1, approximate="tanh")
    return linear(h, w2) + b2

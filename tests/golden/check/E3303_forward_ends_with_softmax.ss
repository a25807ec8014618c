# check: --serving error
# The engine runs the output layer itself, for the tokens it samples: forward must end with it.
dim D = 32
dim V = 100

model M:
    param wte: [V D] = normal(std=0.02)

fn forward(m: M, ids: [b n] Index[V]) -> [b n V]:
    x = embedding(ids, m.wte)
    return linear(x, m.wte) |> softmax(over=V)

# check: --serving warning
# Cutting the sequence by sizes cuts a packed batch's requests at the wrong places; cutting the
# features by sizes (DeepSeek's heads) is served.
dim D = 32
dim V = 100

model Cut:
    param wte: [V D] = normal(std=0.02)

fn forward(m: Cut, ids: [b n] Index[V]) -> [b n V]:
    x = embedding(ids, m.wte)
    low, high = x |> split(16, 16, over=D)
    first, rest = x |> split(1, n - 1, over=n)
    return linear(concat(low, high, over=16) + concat(first, rest, over=1), m.wte)

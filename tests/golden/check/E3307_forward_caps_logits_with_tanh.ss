# check: --serving error
# vLLM applies only a softcap and then a scale after its output layer: a bare tanh it can't.
dim D = 32
dim V = 100

model M:
    param wte: [V D] = normal(std=0.02)

fn forward(m: M, ids: [b n] Index[V]) -> [b n V] Logit over V:
    x = embedding(ids, m.wte)
    z = linear(x, m.wte)
    return tanh(z)

# refuse: export {} --hf out --vllm
# vLLM replaces each block's attention with its own: blocks without one leave it nothing to replace.
dim D = 16
dim V = 64
dim L = 2

model M:
    param wte: [V D] = normal(std=0.02)
    param w: [L D D] = normal(std=0.02)

fn forward(m: M, ids: [b n] Index[V]) -> [b n V]:
    x = embedding(ids, m.wte)
    for l in 0..L:
        x = x + linear(x, m.w[l])
    return linear(x, m.wte)

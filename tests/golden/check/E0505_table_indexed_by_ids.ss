dim V = 100
dim D = 64
dim P = 128

model Gpt:
    param wte: [V D] = normal(std=0.02)
    param wpe: [P D] = normal(std=0.02)

## PyTorch's `wte[idx]`, a table indexed by a tensor of ids, is `embedding(idx, wte)`; the lookup
## has its value at once, so the sum after it is checked in the same round.
fn embed(m: Gpt, idx: [b n] Index[V], pos: [b n] Index[P]) -> [b n D]:
    tok = m.wte[idx]
    return tok + m.wpe[pos]

fn wrong(m: Gpt, idx: [b n] Index[V]) -> [b n V]:
    return m.wte[idx]

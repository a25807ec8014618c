# check: --serving error
# The chapter's exercise 3 done wrong: in a packed batch, the index along n is not a position.
dim D = 32
dim V = 100
dim P = 64

model Tiny:
    param wte: [V D] = normal(std=0.02)
    param wpe: [P D] = normal(std=0.02)

fn forward(m: Tiny, ids: [b n] Index[V]) -> [b n V]:
    pos = n |> map(i => i)
    x = embedding(ids, m.wte) + embedding(pos as [n] Index[P], m.wpe)
    return linear(x, m.wte)

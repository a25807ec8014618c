# Index inputs: token and position embeddings.
# Dynamic: b, n. Fixed: V, P, D.
dim V = 50
dim P = 40
dim D = 16

## Token plus position embeddings, normalized.
export fn embed(ids: [b n] Index[V], pos: [b n] Index[P], wte: [V D], wpe: [P D]) -> [b n D]:
    return rms_norm(embedding(ids, wte) + embedding(pos, wpe), over=D)

dim D = 64
dim V = 100

## `torch.matmul(a, b)` and `a.matmul(b)` are `a @ b`: the fix writes the einsum (the transposed
## operand as itself, its axes in its own order), and the call has the product's value, so what
## follows it is checked.
fn scores(q: [b n D], k: [b n D]) -> [b n n]:
    return torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(D)

fn scores_method(q: [b n D], k: [b n D]) -> [b n n]:
    return q.matmul(k.transpose(1, 2)) * 0.125

## A size asked of a tensor is a size of the new shape: `logits.view(-1, logits.size(-1))` is
## `rearrange(logits, b n V -> (b n) V)`, and `cross_entropy` gets its `over=` in the same round.
fn loss(logits: [b n V], targets: [b n] Index[V]) -> []:
    return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))

dim D = 16
dim E = 4
dim K = 2

## The weights passed where the chosen experts go: `experts` routes by `Index[E]` only.
fn moe(x: [b D], router: [E D], w: [E D D]) -> [b D]:
    top, chosen = topk(softmax(linear(x, router), over=E), k=K, over=E)
    return experts(x, top, top, e => rows => linear(rows, w[e]))

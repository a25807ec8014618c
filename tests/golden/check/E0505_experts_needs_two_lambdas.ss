dim D = 16
dim E = 4
dim K = 2

## The expert is a lambda of its index and then of its rows: `e => rows => body`.
fn moe(x: [b D], router: [E D], w: [E D D]) -> [b D]:
    top, chosen = topk(softmax(linear(x, router), over=E), k=K, over=E)
    return experts(x, chosen, top, e => linear(x, w[e]))

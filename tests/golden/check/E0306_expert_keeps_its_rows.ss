dim D = 16
dim E = 4
dim K = 2

## An expert must give one row per row routed to it; summing them away loses the tokens.
fn moe(x: [b D], router: [E D], w: [E D D]) -> [b D]:
    top, chosen = topk(softmax(linear(x, router), over=E), k=K, over=E)
    return experts(x, chosen, top, e => rows => sum(linear(rows, w[e]), over=t))

# Sparse experts: each token through the 2 of 4 experts its router scores highest; the rows routed
# to each expert are a data-dependent size. Dynamic: b and n.
dim D = 8
dim F = 16
dim E = 4
dim K = 2

export fn moe(x: [b n D], router: [E D], w_up: [E F D], w_down: [E D F]) -> [b n D]:
    top, chosen = topk(softmax(linear(x, router), over=E), k=K, over=E)
    return experts(x, chosen, top, e => rows => linear(relu(linear(rows, w_up[e])), w_down[e]))

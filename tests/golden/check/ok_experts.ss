dim D = 16
dim F = 32
dim E = 4
dim K = 2

## Each token through the K of E experts its router scores highest: `chosen` is `[b n K] Index[E]`,
## and each expert sees the rows routed to it, `[t D]`, t known only when it runs.
fn moe(x: [b n D], router: [E D], w_up: [E F D], w_down: [E D F]) -> [b n D]:
    top, chosen = topk(softmax(linear(x, router), over=E), k=K, over=E)
    return experts(x, chosen, top, e => rows => linear(relu(linear(rows, w_up[e])), w_down[e]))

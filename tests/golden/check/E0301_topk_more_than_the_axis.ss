dim D = 16
dim E = 4
dim K = 8

## Top 8 of 4 experts: there are not that many.
fn route(x: [b D], router: [E D]) -> [b K] Index[E]:
    top, chosen = topk(linear(x, router), k=K, over=E)
    return chosen

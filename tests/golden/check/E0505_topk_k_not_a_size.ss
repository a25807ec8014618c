dim D = 16
dim E = 4

## k= must be a size the checker knows, not a value computed when the program runs.
fn route(x: [b D], router: [E D], k: Int) -> [b E]:
    top, chosen = topk(linear(x, router), k=k, over=E)
    return top

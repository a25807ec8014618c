dim D = 64

## PyTorch's axis as a position or `dim=`: ShapeScript's `over=` names it.
fn total(x: [b n D]) -> [b n]:
    return sum(x, -1)

fn probs(x: [b n D]) -> [b n D]:
    return x |> softmax(-1)

fn average(x: [b n D]) -> [b n]:
    return x.mean(dim=-1)

fn largest(x: [b n D]) -> [b D]:
    return x.amax(1)

fn summed(x: [b n D]) -> [b D]:
    return x.sum(1)

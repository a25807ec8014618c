import python torch

dim D = 16

## The rows a Python helper selects: how many is known only when the program runs.
fn selected(x: [n D]) -> [?k D]:
    rows = torch.index_select(x, 0, torch.arange(3)) as [?k D]
    return rows

fn summed(x: [n D]) -> [D]:
    rows = selected(x)
    return sum(rows, over=k)

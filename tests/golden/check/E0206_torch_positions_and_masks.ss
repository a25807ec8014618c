## PyTorch's `arange` and `triu` have no one call here: the helps say what to write.
fn positions(x: [b n D]) -> [b n D]:
    pos = torch.arange(0, n)
    return x

fn masked(s: [b n n]) -> [b n n]:
    upper = torch.triu(s, diagonal=1)
    return s

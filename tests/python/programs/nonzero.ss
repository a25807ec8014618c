# `?k` from a data-dependent op: the rows where the mask is true.
# Dynamic: n, and k at run time.
dim D = 4

extern fn nonzero(x: [n] Bool) -> [?k 1] Int = "torch.nonzero"

## The positions of the positive entries.
export fn positive_positions(x: [n]) -> [?k 1] Int:
    return nonzero(x > 0.0)

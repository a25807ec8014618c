# A size used as an index is one past the last entry: `c[n]` on an axis of n.
fn last_row(c: [n n] Bool, x: [n]) -> [n]:
    return masked_fill(x, c[n], 0)

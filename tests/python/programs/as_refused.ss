# An `as` assertion the program checks when it runs: exactly three positive entries.
# Dynamic: n. The number of positives is data dependent (?k), asserted to be 3.

extern fn nonzero(x: [n] Bool) -> [?k 1] Int = "torch.nonzero"

## The positions of the three positive entries; refuses an input with another count.
export fn three_positives(x: [n]) -> [3] Int:
    rows = nonzero(x > 0.0) as [3 1] Int
    return rows |> rearrange(k 1 -> k)

dim L = 4

## `%` floors as Python does, on integers: the block's index, not a Real.
fn every_other(x: [L] Real) -> [L] Int:
    return x % 2

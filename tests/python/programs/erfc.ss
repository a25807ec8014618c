# An extern fn under torch.: scalar parameters lift element-wise.
# Dynamic: b, n.
extern fn erfc(x: Real) -> NonNeg = "torch.special.erfc"

## The Gaussian tail probability of each value.
export fn gaussian_tail(x: [b n]) -> [b n] NonNeg:
    return erfc(x / sqrt(2)) * 0.5

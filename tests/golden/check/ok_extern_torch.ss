# Extern fns under torch. and math. may be exported.
dim D = 32

extern fn erfc(x: Real) -> NonNeg = "torch.special.erfc"
extern fn ln(x: Real) -> Real = "torch.log"
extern fn softplus(x: Real) -> NonNeg = "torch.nn.functional.softplus"

fn smooth(x: [b D]) -> [b D]:
    return softplus(x) + erfc(x)

export fn features(x: [b D]) -> [b D]:
    return ln(smooth(x) + 1.0)

dim D = 64

extern fn erfcx(x: Real) -> NonNeg = "scipy.special.erfcx"
extern fn erfc(x: Real) -> NonNeg = "torch.special.erfc"

fn tail(x: [b D]) -> [b D]:
    return erfcx(x) + erfc(x)

fn head(x: [b D]) -> [b D]:
    return tail(x * 2)

export fn act(x: [b D]) -> [b D]:
    return head(x)

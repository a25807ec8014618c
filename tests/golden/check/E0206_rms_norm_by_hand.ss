dim D = 64

## RMSNorm as PyTorch code writes it by hand: `torch.rsqrt` is `(1 / sqrt(..))`, `.pow(2)` is
## `(x * x)`, and `.mean(-1, keepdim=True)` keeps the axis with size 1. The outermost fix writes
## the parts' fixes too, so the line is one fix, and each call has the value its fix gives, so the
## product with the weight is checked in the same round.
fn rms_norm_by_hand(x: [b n D], w: [D]) -> [b n D]:
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 0.000001) * w

## The method form of the same.
fn rms_scale(x: [b n D]) -> [b n 1]:
    return (x.pow(2).mean(-1, keepdim=True) + 0.000001).rsqrt()

dim D = 64
dim F = 256

## PyTorch's modules: a weight is made by an initializer and applied with `linear`.
model Mlp:
    param up: [F D] = torch.randn(F, D) * 0.02
    param down: [D F] = 0.02 * randn(D, F)
    param down_bias: [D] = torch.zeros(D)
    param gain: [D] = torch.ones(D)

fn forward(self: Mlp, x: [b n D]) -> [b n D]:
    h = gelu(self.up(x))
    return linear(h, self.down.weight) + self.down_bias

## No sure fix: the bias is a param of its own.
fn shifted(self: Mlp, x: [b n F]) -> [b n D]:
    return linear(x, self.down) + self.down.bias

## Nor where the input's last axis is not the weight's `in`.
fn unfit(self: Mlp, x: [b n F]) -> [b n F]:
    return self.up(x)

dim D = 64
dim F = 256

model MLP:
    param c_fc: [F D] = normal(std=0.02)
    param c_proj: [D F] = normal(std=0.02)

## GPT-2's MLP as PyTorch writes it: each `nn.Linear` called is `linear(x, w)`, and the call has
## that value, so the next line's call is checked (and fixed) in the same round.
fn mlp(self: MLP, x: [b n D]) -> [b n D]:
    x = self.c_fc(x)
    x = F.gelu(x)
    x = self.c_proj(x)
    return x

## A tuple first, keywords after: `torch.cat((x, y), dim=-1)` is read as `torch.cat(x, y, dim=-1)`.
fn joined(x: [b n D], y: [b n D]) -> [b n (2*D)]:
    return torch.cat((x, y), dim=-1)

## `stack`'s `over=` names the axis it makes, first: PyTorch's `dim=1` is no axis of `x`, so no
## `over=` is written for it (the help says what to do).
fn stacked(x: [b D], y: [b D]) -> [b 2 D]:
    return torch.stack((x, y), dim=1)

## PyTorch's causal-free attention as a PyTorch user writes it: every line is read and checked, and
## the first fix of each error gives the ShapeScript, in one round.
dim D = 64
dim H = 4
dim Dh = 16

model Attn:
    param qkv: [3*D D] = normal(std=0.02)
    param proj: [D D] = normal(std=0.02)

fn attend(m: Attn, x: [b n D]) -> [b n D]:
    q, k, v = linear(x, m.qkv).split(D, dim=2)
    q = q.view(b, n, H, Dh).transpose(1, 2)
    k = k.view(b, n, H, Dh).transpose(1, 2)
    v = v.view(b, n, H, Dh).transpose(1, 2)
    att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
    att = F.softmax(att, dim=-1)
    y = att @ v
    y = y.transpose(1, 2).contiguous().view(b, n, D)
    return linear(y, m.proj)

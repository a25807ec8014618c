## A Llama block as PyTorch code writes it, in a file with `dim F` (so `F.silu` is the module
## alias, not the size): RMSNorm by hand, heads split with `.view(..).transpose(1, 2)`, attention
## with `is_causal=True`, heads merged back, SwiGLU. Each line is read and checked in one round (each
## call has the value its fix gives), and the first fix of every diagnostic gives a program that
## checks clean.
dim D = 64
dim H = 4
dim Dh = 16
dim F = 128

model Block:
    param wq: [D D] = normal(std=0.02)
    param wk: [D D] = normal(std=0.02)
    param wv: [D D] = normal(std=0.02)
    param wo: [D D] = normal(std=0.02)
    param w1: [F D] = normal(std=0.02)
    param w2: [D F] = normal(std=0.02)
    param w3: [F D] = normal(std=0.02)
    param norm: [D] = ones

fn block(m: Block, x: [b n D]) -> [b n D]:
    h = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 0.00001) * m.norm
    q = linear(h, m.wq).view(b, n, H, Dh).transpose(1, 2)
    k = linear(h, m.wk).view(b, n, H, Dh).transpose(1, 2)
    v = linear(h, m.wv).view(b, n, H, Dh).transpose(1, 2)
    y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    y = y.transpose(1, 2).contiguous().view(b, n, D)
    x = x + linear(y, m.wo)
    g = F.silu(linear(x, m.w1)) * linear(x, m.w3)
    return x + linear(g, m.w2)

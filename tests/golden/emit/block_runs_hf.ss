# emit: --hf forward
# Params stacked over runs of the blocks, each block's layer given only the weights it reads: a
# dense first block (`w_up[d]`, d = `l as Index[La]`), the sparse ones after it (`(l - La) as Index[Lb]`, a name
# bound from the block's index), and a norm on every other block read at `l // 2` (as transformers'
# DeepseekV3 builds its first `first_k_dense_replace` layers dense and the rest with experts).
dim D = 32
dim H = 1
dim F = 64
dim V = 64
dim L = 4
dim La = 1
dim Lb = L - La
dim Lc = L / 2

model Runs:
    param wte:    [V D]      = normal(std=0.02)
    param wqkv:   [L 3*D D]  = normal(std=0.02)
    param w_up:   [La F D]   = normal(std=0.02)
    param w_down: [La D F]   = normal(std=0.02)
    param w_b:    [Lb D D]   = normal(std=0.02)
    param norm_c: [Lc D]     = ones
    param w_out:  [V D]      = normal(std=0.02)

fn attention(x: [b n D], wqkv: [3*D D]) -> [b n D]:
    q, k, v = linear(x, wqkv) |> split(b n (3 H D) -> b H n D)
    return scaled_dot_product_attention(q, k, v, attn_mask=causal[n n]) |> rearrange(b H n D -> b n (H D))

fn forward(m: Runs, ids: [b n] Index[V]) -> [b n V] Logit over V:
    x = embedding(ids, m.wte)
    for l in 0..L:
        x = x + attention(x, m.wqkv[l])
        if l < La:
            d = l as Index[La]
            x = x + linear(relu(linear(x, m.w_up[d])), m.w_down[d])
        else:
            s = (l - La) as Index[Lb]
            x = x + linear(x, m.w_b[s])
        if l % 2 == 0:
            c = (l // 2) as Index[Lc]
            x = rms_norm(x, over=D, weight=m.norm_c[c], eps=1e-6)
    return linear(x, m.w_out)

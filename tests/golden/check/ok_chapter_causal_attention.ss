# Causal multi-head self-attention, written to be exported:
#     shapescript export causal_attention.ss -o causal_attention.pt2
# Its weights are parameters rather than a model's fields, because an exported
# function may not use a model. In the exported program `b` and `n` are dynamic
# (torch.export Dims); D, H, Dh and 3*D are fixed.

dim D  = 64
dim H  = 4
dim Dh = D / H

## Causal multi-head self-attention: each position attends to itself and the positions
## before it. `w_qkv` stacks the query, key and value projections; `w_o` is the output one.
export fn causal_attention(x: [b n D], w_qkv: [3*D D], w_o: [D D]) -> [b n D]:
    q, k, v = linear(x, w_qkv) |> split(b n (3 H Dh) -> b H n Dh)
    return scaled_dot_product_attention(q, k, v, attn_mask=causal[n n])
        |> rearrange(b H n Dh -> b n (H Dh))
        |> linear(w_o)

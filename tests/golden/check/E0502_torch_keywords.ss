dim D = 64
dim H = 4
dim Dh = D / H

## PyTorch's keywords, as someone coming from torch writes them.
fn probs(x: [b n D]) -> [b n D] NonNeg:
    return softmax(x, dim=-1)

fn pooled(x: [b n D]) -> [b D]:
    return mean(x, dim=1)

fn patches(img: [b 3 16gh 16gw]) -> [b 768]:
    x = img |> rearrange(b c (gh p1) (gw p2) -> b (gh gw) (p1 p2 c))
    return x |> max(axis=1)

fn attend(x: [b n D], wqkv: [3*D D]) -> [b H n Dh]:
    q, k, v = linear(x, wqkv) |> split(b n (3 H Dh) -> b H n Dh)
    return scaled_dot_product_attention(q, k, v, is_causal=True)

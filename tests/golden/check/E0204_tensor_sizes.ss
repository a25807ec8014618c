dim D = 64
dim H = 4
dim Dh = D / H

## PyTorch asks a tensor for its sizes; here they are the names in its type.
fn scores(q: [b n Dh], k: [b m Dh]) -> [b n m]:
    return einsum(q, k: b n d, b m d -> b n m) / sqrt(q.shape[2])

fn scaled(q: [b n Dh]) -> [b n Dh]:
    return q / sqrt(q.size(-1))

fn batch(x: [b n D]) -> Int:
    return len(x)

fn positions(img: [b 3 16gh 16gw]) -> Int:
    return img.shape[2] * img.shape[3] // 256

fn rank(x: [b n D]) -> Int:
    return x.ndim

fn batch_piped(x: [b n D]) -> Int:
    return x |> len

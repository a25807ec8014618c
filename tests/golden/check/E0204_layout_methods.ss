dim D = 64

## PyTorch's methods for memory layout, copies and the default element type change nothing here.
fn norm(x: [b n D], w: [D]) -> [b n D]:
    return rms_norm(x.float(), over=D, weight=w)

fn heads(x: [b n D]) -> [b D n]:
    y = x.contiguous()
    return y |> rearrange(b n D -> b D n)

fn copy(x: [b n D]) -> [b n D]:
    return x.clone()

dim D = 64

## PyTorch's methods for memory layout, copies and the default element type change nothing here.
fn norm(x: [b n D], w: [D]) -> [b n D]:
    return rms_norm(x.float(), over=D, weight=w)

fn heads(x: [b n D]) -> [b D n]:
    y = x.contiguous()
    return y |> rearrange(b n D -> b D n)

fn copy(x: [b n D]) -> [b n D]:
    return x.clone()

## Nor do devices and the float precision, which the compiled program and export decide.
fn placed(x: [b n D]) -> [b n D]:
    return x.to(x.device) + x.cuda()

fn matched(x: [b n D], y: [b n D]) -> [b n D]:
    return x.type_as(y) * y.half()

fn upcast(x: [b n D], y: [b n D]) -> [b n D]:
    return x.to(torch.float32) + y.to(x.dtype)

## An integer tensor's `.float()` is a conversion, and `.to(torch.long)` one too: no sure fix.
fn counts(x: [b n] Int) -> [b n]:
    return x.float()

fn longs(x: [b n D]) -> [b n D] Int:
    return x.to(torch.long)

dim D = 64

## PyTorch's `F.layer_norm(x, (D,), w, b, eps)` gives by position what ShapeScript names: the fix
## names them, the shape `(D,)` being `over=D`, and the call is checked as the fix writes it, so
## its value is known to the line after it.
fn ln(x: [b n D], w: [D], bias: [D]) -> [b n D]:
    h = F.layer_norm(x, (D,), w, bias, 1e-5)
    return h + x

fn rms(x: [b n D], w: [D]) -> [b n D]:
    return F.rms_norm(x, (D,), w)

## `training=` is the program's mode, not the call's: the fix removes it.
fn drop(x: [b n D]) -> [b n D]:
    return F.dropout(x, 0.1, training=True)

## The shape as a list, `[D]`, is the same one size: a list of one is the value itself.
fn rms_list(x: [b n D], w: [D]) -> [b n D]:
    return F.rms_norm(x, [D], w)

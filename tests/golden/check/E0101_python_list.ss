dim D = 64

## A Python list of tensors: the fix writes them as the arguments they are.
fn joined(x: [b n D], y: [b n D]) -> [b n 2*D]:
    return concat([x, y], over=D)

fn stacked(x: [b n D], y: [b n D]) -> [2 b n D]:
    return stack(
        [x, y],
        over=2,
    )

## The list is read as the tensors it holds, so the call is checked in the same round: PyTorch's
## `torch.cat([..], dim=-1)` gets its fixes for `concat` and `over=`, and a result that doesn't
## fit the signature is found at once.
fn joined_torch(x: [b n D], y: [b n D]) -> [b n 2*D]:
    return torch.cat([x, y], dim=-1)

fn joined_wrong(x: [b n D], y: [b n D]) -> [b n D]:
    return concat([x, y], over=D)

## A list as a value: one tensor of several is `stack`'s, along an axis it names.
fn pair(x: [b n D], y: [b n D]) -> [b n D]:
    both = [x, y]
    return x

## Several axes where a keyword takes one: a reduction over two is two calls.
fn total(x: [b n D]) -> [b]:
    return sum(x, dim=[1, 2])

import python torch
import python
extern fn mish(x: Real) -> Real = "torch.nn.functional.mish
extern fn erfc(x: Real) ->

dim Half = D / 2
dim D = 64

fn positions(x: [b n D]) -> [n] Index[n]:
    return n |> map(i =>

fn sinusoid(x: [b n D]) -> [n Half]:
    angles = n |> map(i => (Half |> map(j => i * j)) / 10000.0
    if angles
    elif:
    else
    return sin(angles) as [?k

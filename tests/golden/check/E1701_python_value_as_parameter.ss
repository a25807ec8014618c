import python torch

dim D = 64

## A Python value with a type, in the exported function itself: the fix takes it as a parameter.
export fn shifted(x: [b D]) -> [b D]:
    return x + (torch.load("bias.pt") as [D])

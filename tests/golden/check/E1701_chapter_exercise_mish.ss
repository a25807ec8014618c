import python torch

dim D = 64

export fn act(x: [b D]) -> [b D]:
    return x |> torch.nn.functional.mish

import python torch

dim D = 768

fn load_qkv() -> [3*D D]:
    w = torch.load("w_qkv.pt")
    return w

# Outside export, Python is fine once `as` says what it returns.
import python torch
import python numpy

dim D = 768

fn load_qkv() -> [3*D D]:
    return torch.load("w_qkv.pt") as [3*D D]

fn table() -> [D]:
    t = numpy.ones(768) as [D]
    return t

import python torch

dim D = 768

fn load() -> [D]:
    return numpy.load("w.npy") as [D]

import torch
from torch import nn

dim D = 64

fn project(x: [b n D], w: [D D]) -> [b n D]:
    return x @ w

fn square(x: [b n D]) -> [b n D]:
    return x ** 2

fn width(x: [b n D]) -> Int:
    return x.shape[-1]

fn last(x: [b n D]) -> [b D]:
    return x[:, -1, :]

fn first(x: [b n D]) -> [b D]:
    return x[:, 0]

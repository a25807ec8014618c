"""`%` and `//` written inside a subscript and a size (issue 20): `m.w[l % 2]` and `m.b[l // 2]` in the
block loop compute what the same program computes with the blocks written out in pairs, and a
parameter sized `[D // 2 D]` has D // 2 rows. The compiled forward of one source runs both."""
from __future__ import annotations

import pytest
import torch

import shapescript

SOURCE = """\
dim D = 16
dim L = 4
dim Pairs = L // 2

model Shared:
    param w: [2 D D] = normal(std=0.3)
    param b: [Pairs D] = normal(std=0.3)
    param down: [D // 2 D] = normal(std=0.3)

## Block l reads the weight of l % 2 and the bias of l // 2: 0 0, 1 0, 0 1, 1 1.
fn forward(m: Shared, x: [n D]) -> [n D // 2]:
    for l in 0..L:
        x = tanh(linear(x, m.w[l % 2]) + m.b[l // 2])
    return linear(x, m.down)

## The same blocks written out in pairs, without `%` or `//`.
fn by_pairs(m: Shared, x: [n D]) -> [n D // 2]:
    for p in 0..Pairs:
        x = tanh(linear(x, m.w[0]) + m.b[p])
        x = tanh(linear(x, m.w[1]) + m.b[p])
    return linear(x, m.down)
"""


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    path = tmp_path_factory.mktemp("index_arithmetic") / "shared.ss"
    path.write_text(SOURCE)
    return shapescript.compile(path)


def test_remainder_and_floor_division_index_the_blocks_as_written_out(compiled):
    torch.manual_seed(0)
    model = compiled.Shared()
    assert tuple(model.down.shape) == (8, 16)
    x = torch.randn(5, 16)
    with torch.no_grad():
        got = compiled.forward(model, x)
        expected = compiled.by_pairs(model, x)
        # Each weight matters: block 1 with the weight of block 0 differs.
        model.w[1].copy_(model.w[0])
        changed = compiled.forward(model, x)
    assert got.shape == (5, 8)
    torch.testing.assert_close(got, expected, rtol=0, atol=0)
    assert not torch.allclose(got, changed)

"""ShapeScript programs, exported with `shapescript export` and run without ShapeScript.

For each program (the examples with an `export fn`, and the programs in tests/python/programs/),
the test exports the function to a .pt2 with the CLI, loads it in a fresh `python -I` from an
empty folder (torch only: ShapeScript is not on the path and einops is blocked), runs it on random
inputs of at least three sizes per dynamic axis, and compares the results with a reference
written here in plain PyTorch (not the generated code).

Each case names the axes the exported program must treat as dynamic, as the CLI reports them
(`dynamic x[0] = b, x[1] = n`), and its inputs give every dynamic axis three or more sizes.

Run with the Python that has torch and einops:
    /root/.cache/shapescript/venv/bin/python -m pytest tests/python/test_export_programs.py
The binary is $SHAPESCRIPT_BIN, by default <repo>/build/shapescript. The AOTInductor test
compiles C++ and is marked `slow`.
"""

from __future__ import annotations

import math
import os
import re
import textwrap
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import pytest
import torch

from conftest import EXAMPLES, LOUD_PACKAGE, PROGRAMS, PYTHON, chapter_block, chapter_refusal, export_pt2 as export, fresh_python, place, run_fresh


# ---------------------------------------------------------------------------------------------
# References, in plain PyTorch


def rms(x, weight=None, eps=1e-5, dim=-1):
    y = x * torch.rsqrt(x.pow(2).mean(dim, keepdim=True) + eps)
    return y if weight is None else y * weight


def layer(x, weight, bias, eps):
    mean = x.mean(-1, keepdim=True)
    var = (x - mean).pow(2).mean(-1, keepdim=True)
    return (x - mean) / torch.sqrt(var + eps) * weight + bias


def heads(x, w_qkv, H):
    b, n, D = x.shape
    qkv = (x @ w_qkv.T).reshape(b, n, 3, H, D // H).permute(2, 0, 3, 1, 4)
    return qkv[0], qkv[1], qkv[2]


def experts_ref(x, router, w_up, w_down):
    """Every expert on every token, then each token's 2 highest-scored experts' outputs, weighted."""
    top, chosen = torch.softmax(x @ router.T, -1).topk(2, dim=-1)
    every = torch.einsum("bnef,edf->bned", torch.relu(torch.einsum("bnd,efd->bnef", x, w_up)), w_down)
    picked = every.gather(2, chosen[..., None].expand(*chosen.shape, x.shape[-1]))
    return (top[..., None] * picked).sum(2)


def causal_attention_ref(x, w_qkv, w_o, H):
    q, k, v = heads(x, w_qkv, H)
    n, Dh = q.shape[-2], q.shape[-1]
    scores = q @ k.transpose(-1, -2) / math.sqrt(Dh)
    keep = torch.arange(n)[None, :] <= torch.arange(n)[:, None]  # key j at or before query i
    att = scores.masked_fill(~keep, float("-inf")).softmax(-1)
    out = (att @ v).transpose(1, 2).reshape(x.shape)
    return out @ w_o.T


def patches_ref(img, p):
    b, c, h, w = img.shape
    x = img.reshape(b, c, h // p, p, w // p, p).permute(0, 2, 4, 3, 5, 1)
    return x.reshape(b, (h // p) * (w // p), p * p * c)


def gelu_tanh(x):
    return 0.5 * x * (1 + torch.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))


def norms_ref(x, g, w, bias, y, gc):
    h = layer(rms(x, g), w, bias, 1e-6)
    z = rms(y.transpose(1, 2), gc)  # [b n C]
    return h + z.sum(-1, keepdim=True)


def fold_ref(x):
    y = x * 2.0 if x.sum() > 0 else -x
    return y + 1.0


def repeat_ref(x, seq):
    h = x
    for _ in range(seq.shape[1]):
        h = h * 0.5 + x
    return h


def residual_ref(x, w, g):
    for l in range(w.shape[0]):
        x = x + rms(x, g[l]) @ w[l].T
    return x


def per_layer_ref(x, w, g):
    for p in range(2):
        x = x + (x @ w[2 * p].T) * math.cos(3.14159 * p)
    for l in range(4):
        if l % 2 == 0 and l // 2 != 1:
            x = x + rms(x, g[l])
        elif l >= 2:
            x = x / math.log(10000)
        else:
            x = x * 0.5
        x = x + (x * math.cos(l * 3.14159 / 4) if l < 3 else torch.zeros_like(x))
    return x


def sinusoid_ref(x):
    n, half = x.shape[1], x.shape[2]
    angles = torch.arange(n)[:, None].float() * torch.arange(half)[None, :].float() / 100.0
    return x + torch.sin(angles)


# ---------------------------------------------------------------------------------------------
# Cases


@dataclass
class Case:
    id: str
    source: Path
    dynamic: str  # what the CLI reports, e.g. "x[0] = b, x[1] = n"
    sizes: list[dict]  # one dict of dynamic sizes per run; each dynamic axis takes >= 3 values
    make: Callable[[dict, torch.Generator], tuple]  # sizes -> inputs
    ref: Callable[..., torch.Tensor]
    fn: str | None = None
    exact: bool = False  # integer results
    refused: list[tuple[dict, str]] = field(default_factory=list)  # inputs the program refuses: (sizes, message regex)


def randn(g, *shape):
    return torch.randn(*shape, generator=g)


BN = [{"b": 2, "n": 3}, {"b": 3, "n": 8}, {"b": 5, "n": 13}]

CASES = [
    # ---- the examples
    Case("example_patchify", EXAMPLES / "patches.ss", "img[0] = b, img[2] = 16*gh, img[3] = 16*gw",
         [{"b": 2, "gh": 2, "gw": 3}, {"b": 4, "gh": 14, "gw": 10}, {"b": 3, "gh": 5, "gw": 2}],
         lambda s, g: (randn(g, s["b"], 3, 16 * s["gh"], 16 * s["gw"]),),
         lambda img: patches_ref(img, 16)),
    Case("example_causal_attention", EXAMPLES / "causal_attention.ss", "x[0] = b, x[1] = n", BN,
         lambda s, g: (randn(g, s["b"], s["n"], 64), randn(g, 192, 64) * 0.1, randn(g, 64, 64) * 0.1),
         lambda x, wqkv, wo: causal_attention_ref(x, wqkv, wo, 4)),
    # ---- attention
    Case("attention_sdpa", PROGRAMS / "attention_sdpa.ss", "x[0] = b, x[1] = n", BN,
         lambda s, g: (randn(g, s["b"], s["n"], 32), randn(g, 96, 32) * 0.2, randn(g, 32, 32) * 0.2),
         lambda x, wqkv, wo: causal_attention_ref(x, wqkv, wo, 2)),
    Case("attention_einsum", PROGRAMS / "attention_einsum.ss", "x[0] = b, x[1] = n", BN,
         lambda s, g: (randn(g, s["b"], s["n"], 32), randn(g, 96, 32) * 0.2, randn(g, 32, 32) * 0.2),
         lambda x, wqkv, wo: causal_attention_ref(x, wqkv, wo, 4)),
    # ---- patch embedding: rearrange + linear
    Case("patch_embed", PROGRAMS / "patch_embed.ss", "img[0] = b, img[2] = 8*gh, img[3] = 8*gw",
         [{"b": 2, "gh": 2, "gw": 5}, {"b": 3, "gh": 4, "gw": 3}, {"b": 6, "gh": 7, "gw": 2}],
         lambda s, g: (randn(g, s["b"], 3, 8 * s["gh"], 8 * s["gw"]), randn(g, 48, 192) * 0.1, randn(g, 48)),
         lambda img, w, bias: patches_ref(img, 8) @ w.T + bias),
    # ---- `as`: a flattened axis asserted; a data-dependent size asserted and refused when wrong
    Case("as_assert", PROGRAMS / "as_assert.ss", "img[0] = b, img[2] = 2*gh, img[3] = 2*gw",
         [{"b": 2, "gh": 3, "gw": 2}, {"b": 3, "gh": 5, "gw": 4}, {"b": 4, "gh": 2, "gw": 7}],
         lambda s, g: (randn(g, s["b"], 4, 2 * s["gh"], 2 * s["gw"]),),
         lambda img: patches_ref(img, 2)),
    Case("as_refused", PROGRAMS / "as_refused.ss", "x[0] = n",
         [{"n": 5, "positives": 3}, {"n": 9, "positives": 3}, {"n": 17, "positives": 3}],
         lambda s, g: (signs(g, s["n"], s["positives"]),),
         lambda x: torch.nonzero(x > 0).flatten(), exact=True,
         refused=[({"n": 9, "positives": 4}, r"Runtime assertion failed for expression u\d+ <= 3"),
                  ({"n": 6, "positives": 2}, r"Runtime assertion failed for expression u\d+ >= 3")]),
    Case("as_index", PROGRAMS / "as_index.ss", "ids[0] = n",
         [{"n": 3}, {"n": 7}, {"n": 12}],
         lambda s, g: (ids_with(g, s["n"], 16, s.get("bad")), randn(g, 16, 8)),
         lambda ids, table: table[ids],
         refused=[({"n": 5, "bad": 16}, r"expected \[n\] Index\[P\]: an index is outside 0\.\.15"),
                  ({"n": 4, "bad": -1}, r"expected \[n\] Index\[P\]: an index is outside 0\.\.15")]),
    Case("as_new_axis", PROGRAMS / "as_new_axis.ss", "x[0] = n",
         [{"n": 3}, {"n": 7}, {"n": 12}],
         lambda s, g: (randn(g, s["n"], 8),),
         lambda x: x + x.sum(0, keepdim=True)),
    # ---- ?k: a data-dependent size from an extern fn over torch.nonzero
    Case("nonzero", PROGRAMS / "nonzero.ss", "x[0] = n",
         [{"n": 4}, {"n": 11}, {"n": 30}],
         lambda s, g: (randn(g, s["n"]),),
         lambda x: torch.nonzero(x > 0), exact=True),
    # ---- sparse experts: the rows routed to each expert, a data-dependent size (none for some at b = n = 1)
    Case("experts", PROGRAMS / "experts.ss", "x[0] = b, x[1] = n",
         [{"b": 1, "n": 1}, {"b": 2, "n": 5}, {"b": 3, "n": 17}],
         lambda s, g: (randn(g, s["b"], s["n"], 8), randn(g, 4, 8), randn(g, 4, 16, 8), randn(g, 4, 8, 16)),
         experts_ref),
    Case("masked_mean", PROGRAMS / "masked_mean.ss", "x[0] = b, x[1] = n",
         [{"b": 2, "n": 3, "t": 0.0}, {"b": 3, "n": 9, "t": 0.5}, {"b": 6, "n": 4, "t": -0.5}],
         lambda s, g: (randn(g, s["b"], s["n"]), torch.tensor(s["t"])),
         lambda x, t: x[x > t].mean() + (x > t).sum().float()),
    # ---- control flow
    Case("cond_if", PROGRAMS / "cond_if.ss", "x[0] = b, x[1] = n",
         [{"b": 2, "n": 3, "shift": 1.0}, {"b": 3, "n": 8, "shift": -1.0}, {"b": 5, "n": 13, "shift": 1.0},
          {"b": 4, "n": 2, "shift": -1.0}],
         lambda s, g: (randn(g, s["b"], s["n"], 8) + s["shift"],),
         fold_ref),
    Case("if_elif", PROGRAMS / "if_elif.ss", "x[0] = b, x[1] = n",
         [{"b": 2, "n": 3, "negate": True, "double": False}, {"b": 3, "n": 8, "negate": False, "double": True},
          {"b": 5, "n": 13, "negate": False, "double": False}, {"b": 4, "n": 2, "negate": True, "double": True}],
         lambda s, g: (randn(g, s["b"], s["n"], 8), torch.tensor(s["negate"]), torch.tensor(s["double"])),
         lambda x, negate, double: (-x if negate else x * 2.0 if double else x) + 1.0),
    Case("if_return", PROGRAMS / "if_return.ss", "x[0] = b, y[0] = b",
         [{"b": 2, "shift": 1.0}, {"b": 7, "shift": -1.0}, {"b": 12, "shift": 1.0}],
         lambda s, g: (randn(g, s["b"], 5) + s["shift"], randn(g, s["b"], 5)),
         lambda x, y: x - y if x.mean() > y.mean() else y - x),
    Case("while_for", PROGRAMS / "while_for.ss", "seq[0] = b, seq[1] = n, x[0] = b",
         [{"b": 2, "n": 3}, {"b": 3, "n": 7}, {"b": 5, "n": 12}],
         lambda s, g: (randn(g, s["b"], 4), randn(g, s["b"], s["n"], 4)),
         repeat_ref),
    Case("unrolled_for", PROGRAMS / "unrolled_for.ss", "x[0] = b, x[1] = n", BN,
         lambda s, g: (randn(g, s["b"], s["n"], 8), randn(g, 3, 8, 8) * 0.3, randn(g, 3, 8)),
         residual_ref),
    Case("per_layer", PROGRAMS / "per_layer.ss", "x[0] = b, x[1] = n", BN,
         lambda s, g: (randn(g, s["b"], s["n"], 8), randn(g, 4, 8, 8) * 0.3, randn(g, 4, 8)),
         per_layer_ref),
    # ---- map
    Case("map_axis", PROGRAMS / "map_axis.ss", "xs[0] = b, xs[1] = n", BN,
         lambda s, g: (randn(g, s["b"], s["n"], 6), randn(g, 5, 6)),
         lambda xs, w: torch.stack([xs[i] @ w.T for i in range(xs.shape[0])])),
    Case("map_positions", PROGRAMS / "map_positions.ss", "x[0] = b, x[1] = n", BN,
         lambda s, g: (randn(g, s["b"], s["n"], 4),),
         sinusoid_ref),
    # ---- extern fn under torch.
    Case("erfc", PROGRAMS / "erfc.ss", "x[0] = b, x[1] = n", BN,
         lambda s, g: (randn(g, s["b"], s["n"]),),
         lambda x: 0.5 * (1 - torch.erf(x / math.sqrt(2)))),
    # ---- built-ins
    Case("norms", PROGRAMS / "norms.ss", "x[0] = b, x[1] = n, y[0] = b, y[2] = n", BN,
         lambda s, g: (randn(g, s["b"], s["n"], 24), randn(g, 24), randn(g, 24), randn(g, 24),
                       randn(g, s["b"], 6, s["n"]), randn(g, 6)),
         norms_ref),
    Case("mlp_gelu", PROGRAMS / "mlp_gelu.ss", "x[0] = b, x[1] = n", BN,
         lambda s, g: (randn(g, s["b"], s["n"], 16), randn(g, 64, 16) * 0.3, randn(g, 64), randn(g, 16, 64) * 0.2,
                       randn(g, 16)),
         lambda x, w1, b1, w2, b2: gelu_tanh(x @ w1.T + b1) @ w2.T + b2),
    Case("concat", PROGRAMS / "concat.ss", "p[0] = b, p[1] = n, x[0] = b, x[1] = m",
         [{"b": 2, "n": 3, "m": 5}, {"b": 3, "n": 7, "m": 2}, {"b": 4, "n": 2, "m": 11}],
         lambda s, g: (randn(g, s["b"], s["n"], 8), randn(g, s["b"], s["m"], 8)),
         lambda p, x: (lambda seq: torch.cat([seq, seq * 2], 2))(torch.cat([p, x], 1))),
    Case("reductions", PROGRAMS / "reductions.ss", "x[0] = b, x[1] = n", BN,
         lambda s, g: (randn(g, s["b"], s["n"], 12),),
         lambda x: x.sum(1) + x.mean(1) + x.max(1).values),
    Case("split_qkv", PROGRAMS / "split_qkv.ss", "x[0] = b, x[1] = n", BN,
         lambda s, g: (randn(g, s["b"], s["n"], 16), randn(g, 48, 16) * 0.3),
         lambda x, w: (lambda q, k, v: q * torch.sigmoid(k) + v)(*heads(x, w, 2))),
    Case("einsum_bilinear", PROGRAMS / "einsum_bilinear.ss", "x[0] = b, x[1] = n, y[0] = b, y[1] = m",
         [{"b": 2, "n": 3, "m": 4}, {"b": 3, "n": 9, "m": 2}, {"b": 5, "n": 4, "m": 7}],
         lambda s, g: (randn(g, s["b"], s["n"], 8), randn(g, s["b"], s["m"], 6), randn(g, 8, 6)),
         lambda x, y, w: (x @ w) @ y.transpose(1, 2)),
    Case("broadcast", PROGRAMS / "broadcast.ss", "rowscale[0] = n, x[0] = b, x[1] = n", BN,
         lambda s, g: (randn(g, s["b"], s["n"], 10), randn(g, 10), randn(g, 10), randn(g, s["n"], 1)),
         lambda x, gamma, beta, rs: (x * gamma + beta) * rs - x / 2 + 1),
    Case("select_clamp", PROGRAMS / "select_clamp.ss", "x[0] = b, x[1] = n, y[0] = b, y[1] = n", BN,
         lambda s, g: (randn(g, s["b"], s["n"], 8), randn(g, s["b"], s["n"], 8), randn(g, 8)),
         lambda x, y, ceiling: (torch.minimum(torch.where(x > y, x, y * 2).clamp(min=-0.5).minimum(ceiling), torch.tensor(0.25))
                                + torch.maximum(x, y) + torch.minimum(x, y) + torch.maximum(x, torch.tensor(1.0))
                                + y.clamp(min=0.0) + torch.where(y > 0, 1.0, -1.0))),
    Case("shape_constructors", PROGRAMS / "shape_constructors.ss", "x[0] = b, x[1] = n", BN,
         lambda s, g: (randn(g, s["b"], s["n"], 8), randn(g, 8)),
         lambda x, g: torch.stack([x, x * 2]).sum(0) + 0 + 1 + 0.5 + g.sum() + g + g),
    Case("embed", PROGRAMS / "embed.ss", "ids[0] = b, ids[1] = n, pos[0] = b, pos[1] = n", BN,
         lambda s, g: (torch.randint(0, 50, (s["b"], s["n"]), generator=g),
                       torch.randint(0, 40, (s["b"], s["n"]), generator=g), randn(g, 50, 16), randn(g, 40, 16)),
         lambda ids, pos, wte, wpe: rms(wte[ids] + wpe[pos])),
]

# Every program under programs/ is exported by a case, except those that test a failing export.
NOT_EXPORTABLE = {"bad_extern.ss"}


def ids_with(g, n, below, bad=None):
    """n ids below `below`, one of them `bad` when given (an id the program must refuse)."""
    ids = torch.randint(0, below, (n,), generator=g)
    if bad is not None:
        ids[n // 2] = bad
    return ids


def signs(g, n, positives):
    """n values, exactly `positives` of them > 0, at random places."""
    x = -torch.rand(n, generator=g) - 0.1
    where = torch.randperm(n, generator=g)[:positives]
    x[where] = torch.rand(positives, generator=g) + 0.1
    return x


def test_every_program_has_a_case():
    covered = {c.source.name for c in CASES if c.source.parent == PROGRAMS}
    assert covered | NOT_EXPORTABLE == {p.name for p in PROGRAMS.glob("*.ss")}
    assert len(covered) >= 15


# ---------------------------------------------------------------------------------------------
# Export everything once, then run every program in one fresh Python


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    return tmp_path_factory.mktemp("export_programs")


@pytest.fixture(scope="module")
def exported(work):
    def one(case):
        return case.id, export(case.source, work / f"{case.id}.pt2", fn=case.fn)

    with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as pool:
        return dict(pool.map(one, CASES))


# Loads each program with torch only, runs it on the saved inputs and saves what it returns or
# raises. ShapeScript is not importable under -I from an empty folder; einops is blocked so the
# programs can't rely on it either.
RUNNER = textwrap.dedent("""\
    import sys
    sys.modules["einops"] = None
    sys.modules["shapescript"] = None
    import torch
    inputs = torch.load("inputs.pt")
    results = {}
    for name, runs in inputs.items():
        program = torch.export.load(name + ".pt2").module()
        out = []
        for args in runs:
            try:
                out.append(("ok", program(*args)))
            except Exception as error:
                out.append(("error", type(error).__name__ + ": " + str(error)))
        results[name] = out
    torch.save(results, "results.pt")
    print(sorted(m for m in sys.modules if m.split(".")[0] in ("einops", "shapescript") and sys.modules[m] is not None))
""")


def inputs_of(case: Case) -> list[tuple]:
    g = torch.Generator().manual_seed(sum(map(ord, case.id)))
    return [case.make(s, g) for s in case.sizes] + [case.make(s, g) for s, _ in case.refused]


@pytest.fixture(scope="module")
def ran(work, exported):
    runnable = {c.id: inputs_of(c) for c in CASES if exported[c.id].returncode == 0}
    run_dir = work / "fresh"
    run_dir.mkdir()
    torch.save(runnable, run_dir / "inputs.pt")
    for name in runnable:
        os.link(work / f"{name}.pt2", run_dir / f"{name}.pt2")
    done = run_fresh(RUNNER, run_dir)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]", "ShapeScript or einops was imported: " + done.stdout
    return torch.load(run_dir / "results.pt"), runnable


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_program(case: Case, exported, ran):
    result = exported[case.id]
    assert result.returncode == 0, result.stderr
    # The axes the program treats as dynamic, as the CLI reports them.
    wrote = result.stdout.strip().splitlines()[-1]
    assert wrote.endswith(f", dynamic {case.dynamic}"), wrote
    # Every dynamic axis takes at least three sizes.
    for axis in re.findall(r"= (?:\d+\*)?(\w+)", case.dynamic):
        assert len({s[axis] for s in case.sizes}) >= 3, f"`{axis}` takes fewer than three sizes"

    results, inputs = ran
    outputs = results[case.id]
    for sizes, args, (status, value) in zip(case.sizes, inputs[case.id], outputs):
        assert status == "ok", f"{case.id} at {sizes}: {value}"
        expected = case.ref(*args)
        if case.exact:
            assert value.dtype == torch.int64
            assert torch.equal(value, expected), f"{case.id} at {sizes}"
        else:
            torch.testing.assert_close(value, expected, rtol=1e-4, atol=1e-4, msg=lambda m: f"{case.id} at {sizes}: {m}")
    for (sizes, pattern), (status, value) in zip(case.refused, outputs[len(case.sizes):]):
        assert status == "error", f"{case.id} accepted {sizes}: {value}"
        assert value.startswith("RuntimeError") and re.search(pattern, value), value


# ---------------------------------------------------------------------------------------------
# The chapter, end to end


def test_chapter_transcript(tmp_path):
    place(tmp_path, EXAMPLES / "patches.ss")
    result = export("patches.ss", "patchify.pt2", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "wrote patchify.pt2: `patchify`, dynamic img[0] = b, img[2] = 16*gh, img[3] = 16*gw\n"
    # The chapter's program, as printed: torch only, from the folder the export wrote to.
    run = run_fresh(chapter_block("import torch"), tmp_path)
    printed = chapter_block("torch.Size([4, 140, 768])").splitlines()
    assert run.stdout.splitlines() == printed[:-1]
    assert run.returncode == 1
    assert chapter_refusal().fullmatch(run.stderr.strip().splitlines()[-1]), run.stderr[-2000:]


@pytest.mark.slow
def test_aoti_patchify(tmp_path):
    pt2 = export(EXAMPLES / "patches.ss", tmp_path / "patchify.pt2")
    assert pt2.returncode == 0, pt2.stderr
    aoti = export(EXAMPLES / "patches.ss", tmp_path / "patchify_aoti.pt2", "--aoti")
    assert aoti.returncode == 0, aoti.stderr
    assert "as an AOTInductor package" in aoti.stdout
    script = textwrap.dedent("""\
        import sys
        sys.modules["einops"] = None
        import torch
        program = torch.export.load("patchify.pt2").module()
        compiled = torch._inductor.aoti_load_package("patchify_aoti.pt2")
        for shape in [(2, 3, 32, 48), (4, 3, 224, 160), (3, 3, 64, 16)]:
            img = torch.randn(*shape)
            torch.testing.assert_close(compiled(img), program(img))
            print(tuple(compiled(img).shape))
        """)
    run = run_fresh(script, tmp_path)
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.split("\n")[:3] == ["(2, 6, 768)", "(4, 140, 768)", "(3, 4, 768)"]


# ---------------------------------------------------------------------------------------------
# Failing exports


def test_failing_export_leaves_the_output_alone(tmp_path):
    output = tmp_path / "broken.pt2"
    output.write_bytes(b"an earlier export")
    before = output.stat().st_mtime_ns
    result = export(PROGRAMS / "bad_extern.ss", output)
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert lines[-1] == f"error: exporting `broken` failed: `{PYTHON}` exited with exit status: 1"
    assert any("no_such_function" in line for line in lines[:-1]), result.stderr
    assert output.read_bytes() == b"an earlier export" and output.stat().st_mtime_ns == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["broken.pt2"]  # no temporary file left


def test_missing_torch_names_the_python(tmp_path):
    python = fresh_python(tmp_path)
    result = export(EXAMPLES / "patches.ss", tmp_path / "patchify.pt2", python=python)
    assert result.returncode != 0
    lines = result.stderr.strip().splitlines()
    assert any(python in line and "torch" in line and "install" in line for line in lines), result.stderr
    assert re.fullmatch(rf"error: exporting `patchify` failed: `{re.escape(python)}` exited with exit status: \d+", lines[-1])
    assert not (tmp_path / "patchify.pt2").exists()


def test_a_program_that_prints_exports_as_one_that_does_not(tmp_path):
    python = fresh_python(tmp_path, lend_packages=True, modules=LOUD_PACKAGE)  # prints on stdout, where the reply once was
    source = place(tmp_path, "import python loud\n\n" + (EXAMPLES / "patches.ss").read_text(), "patches.ss")
    result = export(source, tmp_path / "patchify.pt2", python=python)
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"wrote {tmp_path / 'patchify.pt2'}: `patchify`, dynamic img[0] = b, img[2] = 16*gh, img[3] = 16*gw\n"


@pytest.mark.parametrize("ending", ["import os\nos._exit(0)\n", "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n"],
                         ids=["exits_0", "killed"])
def test_a_runtime_that_ends_before_its_reply_is_a_failed_export(tmp_path, ending):
    # The Python ends as it starts, through a .pth hook (an export imports nothing the program names).
    python = fresh_python(tmp_path, lend_packages=True, modules={"ends.py": ending, "ends_hook.pth": "import ends\n"})
    source = place(tmp_path, EXAMPLES / "patches.ss")
    result = export(source, tmp_path / "patchify.pt2", python=python)
    assert result.returncode == 1, result.stdout
    assert result.stdout == ""
    assert re.fullmatch(rf"error: exporting `patchify` failed: `{re.escape(python)}` exited with (exit status: 0 without writing its reply"
                        r"|signal: 9 \(SIGKILL\))", result.stderr.splitlines()[-1]), result.stderr
    assert not (tmp_path / "patchify.pt2").exists()

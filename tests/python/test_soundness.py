"""Soundness, as a property: a program that checks clean never raises a Python error from its
generated code (issue 20). Programs are generated at random (seeded, so a failure reproduces) from
statement templates, each well-typed by the language's rules, over every built-in of the core
table: a model whose params use every initializer, a forward that threads a `[b n D]` value
through a random sequence of statements, some inside the block loop with index arithmetic (`%`,
`//`, `+`) and static `if`s on the loop index. Each program must check clean (a template the
checker refuses is a bug in one of them), compile, and run at two sizes, giving `[b n D]`; every
fourth is also exported (`shapescript.export`, its sizes dynamic) and its program gives the
compiled forward's values at another size.

    $SHAPESCRIPT_VENV/bin/python -m pytest tests/python/test_soundness.py
"""
from __future__ import annotations

import random
import re

import pytest
import torch

import shapescript
from conftest import ROOT

PROGRAMS = 60
STATEMENTS = 7
EXPORT_EVERY = 4  # every 4th program is also exported with torch.export, and its program run

HEADER = """dim D = 4
dim H = 2
dim Dh = D / H
dim E = 3
dim K = 2
dim V = 8
dim P = 16
dim L = 3
dim S = 2
dim Da = 1
dim Db = D - Da

model M:
    param w:     [D D]   = normal(std=0.5)
    param blocks: [L D D] = normal(std=0.5, mean=0.1)
    param g:     [D]     = ones
    param bias:  [D]     = zeros
    param table: [V D]   = normal(std=1)
    param router: [E D]  = normal(std=1)
    param ew:    [E D D] = normal(std=0.5)
    param cw1:   [D D 3] = normal(std=0.3)
    param cw2:   [2 1 3 3] = normal(std=0.3)
    param sinks: [H]     = zeros

"""

# Each template: (the built-ins it uses, its text). `{x}` and `{y}` are `[b n D]` Real values in
# scope; the template's value, its last line, is `[b n D]`; lines before it bind temporaries named
# with `{t}` (made unique). Statements in the block loop may use `l`.
TEMPLATES = [
    ({"sqrt", "abs"}, "sqrt(abs({x}) + 1)"),
    ({"exp", "abs"}, "exp(-abs({x}))"),
    ({"log", "abs"}, "log(abs({x}) + 1)"),
    ({"sin", "cos"}, "sin({x}) * cos({y})"),
    ({"tanh"}, "tanh({x}) * 3"),
    ({"sigmoid"}, "sigmoid({x}) - 0.5"),
    ({"relu"}, "relu({x}) - relu(-{y})"),
    ({"silu"}, "silu({x})"),
    ({"gelu"}, 'gelu({x}, approximate="tanh") + gelu({y})'),
    ({"scale"}, "scale({x}, 0.5)"),
    ({"sum", "rearrange"}, "{x} - rearrange(sum({y}, over=D), b n -> b n 1) / 4"),
    ({"mean", "rearrange"}, "{x} - rearrange(mean({x}, over=D), b n -> b n 1)"),
    ({"max", "rearrange"}, "{x} - rearrange(max({x}, over=D), b n -> b n 1)"),
    ({"min", "rearrange"}, "{y} + rearrange(min({x}, over=n), b D -> b 1 D)"),
    ({"softmax"}, "softmax({x}, over=D) * {y}"),
    ({"log_softmax"}, "log_softmax({x}, over=n)"),
    ({"linear"}, "linear({x}, m.w)"),
    ({"linear"}, "linear({x}, m.w, m.bias)"),
    ({"rms_norm"}, "rms_norm({x}, over=D, weight=m.g)"),
    ({"layer_norm"}, "layer_norm({x}, over=D, weight=m.g, bias=m.bias, eps=1e-6)"),
    ({"embedding"}, "embedding(ids, m.table) + {x}"),
    ({"einsum"}, "einsum({x}, m.w: b n D, F D -> b n F)"),
    ({"masked_fill", "rearrange"}, "masked_fill({x}, rearrange(keep, b n -> b n 1), 0)"),
    ({"masked_fill", "causal", "softmax", "einsum", "rearrange"},
     "einsum(masked_fill(einsum({x}, {y}: b n D, b m D -> b n m), !causal[n m], -inf) |> softmax(over=m), {x}: b n m, b m D -> b n D)"),
    ({"scaled_dot_product_attention", "rearrange", "causal"},
     "scaled_dot_product_attention(rearrange({x}, b n (H Dh) -> b H n Dh), rearrange({y}, b n (H Dh) -> b H n Dh), "
     "rearrange({x}, b n (H Dh) -> b H n Dh), attn_mask=causal[n n]) |> rearrange(b H n Dh -> b n (H Dh))"),
    ({"scaled_dot_product_attention", "rearrange", "causal"},
     "scaled_dot_product_attention(rearrange({x}, b n (H Dh) -> b H n Dh), rearrange({x}, b n (H Dh) -> b H n Dh), "
     "rearrange({y}, b n (H Dh) -> b H n Dh), attn_mask=causal[n n], window=2, scale=0.5) |> rearrange(b H n Dh -> b n (H Dh))"),
    ({"split", "concat"}, "lo{t}, hi{t} = split({x}, b n (2 h) -> b n h)\nconcat(hi{t}, lo{t}, over=h)"),
    ({"split", "concat"}, "one{t}, three{t} = {x} |> split(Da, Db, over=D)\nconcat(three{t}, one{t}, over=Db)"),
    ({"scaled_dot_product_attention", "rearrange", "causal"},
     "scaled_dot_product_attention(rearrange({x}, b n (H Dh) -> b H n Dh), rearrange({y}, b n (H Dh) -> b H n Dh), "
     "rearrange({x}, b n (H Dh) -> b H n Dh), attn_mask=causal[n n], softcap=5.0, sinks=m.sinks, "
     "bias=rearrange(sum({y}, over=D), b m -> b 1 1 m)) |> rearrange(b H n Dh -> b n (H Dh))"),
    ({"conv1d", "rearrange"}, "rearrange(conv1d(rearrange({x}, b n D -> b D n), m.cw1, padding=1), b D n -> b n D)"),
    ({"conv2d", "rearrange", "sum"},
     "sum(conv2d(rearrange({x}, b n D -> b 1 n D), m.cw2, padding=1), over=2)"),
    ({"max_pool2d", "avg_pool2d", "rearrange"},
     "rearrange(max_pool2d(rearrange({x}, b n D -> b 1 n D), kernel_size=3, stride=1, padding=1) "
     "+ avg_pool2d(rearrange({y}, b n D -> b 1 n D), kernel_size=3, stride=1, padding=1), b 1 n D -> b n D)"),
    ({"adaptive_avg_pool2d", "rearrange"},
     "{x} + rearrange(adaptive_avg_pool2d[1 D](rearrange({y}, b n D -> b 1 n D)), b 1 1 D -> b 1 D)"),
    ({"interpolate", "rearrange"},
     "rearrange(interpolate[n D](rearrange({x}, b n D -> b 1 n D), mode=\"bilinear\"), b 1 n D -> b n D)"),
    ({"interpolate", "rearrange", "max_pool2d"},
     "rearrange(max_pool2d(interpolate(rearrange({x}, b n D -> b 1 n D), scale=2), kernel_size=2), b 1 n D -> b n D)"),
    ({"map"}, "{x} * (D |> map(i => i * 0.25))"),
    ({"cross_entropy", "linear"}, "{x} + cross_entropy(linear({x}, m.table), ids, over=V)"),
    ({"where"}, "where({x} > {y}, {x}, {y} * 0.5)"),
    ({"clamp"}, "clamp({x}, min=-1, max=1) + clamp({y}, min=0)"),
    ({"minimum", "maximum"}, "minimum({x}, {y}) + maximum({x}, 0.5)"),
    ({"stack", "sum"}, "sum(stack({x}, {y}, over=S), over=S)"),
    ({"full"}, "{x} + full[D](0.5)"),
    ({"zeros", "ones"}, "{x} * ones[b n D] + zeros[n D]"),
    ({"expand"}, "{x} + expand[b n D](m.g)"),
    ({"dropout"}, "dropout({x}, p=0.5)"),
    ({"topk", "experts", "softmax", "linear"},
     "top{t}, chosen{t} = topk(linear({x}, m.router), k=K, over=E)\n"
     "experts({x}, chosen{t}, softmax(top{t}, over=K), e => rows => linear(rows, m.ew[e]))"),
]

# Statements in the block loop: the block's weight by the loop index and arithmetic on it, and
# per-block choices decided statically.
LOOP_TEMPLATES = [
    ({"linear"}, "linear({x}, m.blocks[l])"),
    ({"linear"}, "next{t} = (l + 1) % L\nlinear({x}, m.blocks[next{t}])"),
    ({"linear"}, "linear({x}, m.blocks[L - 1 - l])"),
    ({"linear"}, "half{t} = l // 2\nlinear({x}, m.blocks[half{t}])"),
    (set(), "{x} * (l + 1)"),
]
STATIC_IF = [
    "if l % 2 == 0:\n{inner}x = x + a\n{indent}else:\n{inner}x = x - a",
    "if l == L - 1:\n{inner}x = x * 0.5\n{indent}elif l < 1:\n{inner}x = x + a",
]

# Built-ins a generated forward doesn't call, and why.
NOT_GENERATED = {"normal": "an initializer: in the model's params"}


def core_builtins() -> set[str]:
    """Every built-in of docs/language.md's core table (generated from the one built-in table)."""
    text = (ROOT / "docs" / "language.md").read_text()
    table = text[text.index("<!-- builtins: core -->"):text.index("<!-- end builtins -->")]
    return set(re.findall(r"^\| `(\w+)`", table, re.M))


def program(seed: int) -> tuple[str, set[str]]:
    rng = random.Random(seed)
    used: set[str] = {"normal", "ones", "zeros"}
    names = ["x"]
    lines = []

    def expression(templates, indent):
        """The template's value; its temporaries' lines are added to `lines` first."""
        builtins, text = rng.choice(templates)
        used.update(builtins)
        *before, value = text.format(x=rng.choice(names), y=rng.choice(names), t=len(lines)).split("\n")
        lines.extend(indent + line for line in before)
        return value

    for i in range(STATEMENTS):
        if rng.random() < 0.3:
            lines.append("    for l in 0..L:")
            lines.append(f"        a = {expression(LOOP_TEMPLATES, '        ')}")
            if rng.random() < 0.5:
                lines.append("        " + rng.choice(STATIC_IF).format(indent="        ", inner="            "))
            else:
                lines.append("        x = x + a")
        else:
            name = f"v{i}"
            value = expression(TEMPLATES, "    ")
            lines.append(f"    {name} = {value}")
            names.append(name)
            if rng.random() < 0.5:
                lines.append(f"    x = {name}")
    lines.append(f"    return x + {rng.choice(names)}")
    signature = "fn forward(m: M, x: [b n D], ids: [b n] Index[V], keep: [b n] Bool) -> [b n D]:\n"
    return HEADER + signature + "\n".join(lines) + "\n", used


def test_the_templates_reach_every_builtin():
    """Each built-in of the core table is in some template (or said why not): a new built-in gets a
    template here, so the property covers it."""
    reached = set(NOT_GENERATED) | {"normal", "ones", "zeros"}
    for builtins, _ in TEMPLATES + LOOP_TEMPLATES:
        reached |= builtins
    assert core_builtins() - reached == set(), "built-ins no template calls"
    seen = set()
    for seed in range(PROGRAMS):
        seen |= program(seed)[1]
    assert core_builtins() - seen - set(NOT_GENERATED) == set(), f"built-ins no generated program calls (raise PROGRAMS)"


@pytest.mark.parametrize("chunk", range(4))
def test_programs_that_check_clean_run(chunk, tmp_path):
    for seed in range(chunk, PROGRAMS, 4):
        text, _ = program(seed)
        path = tmp_path / f"generated_{seed}.ss"
        path.write_text(text)
        diagnostics = shapescript.check(path)
        assert [d for d in diagnostics if d.severity == "error"] == [], f"seed {seed}:\n{text}\n" + "".join(d.rendered for d in diagnostics)
        compiled = shapescript.compile(path)
        torch.manual_seed(seed)
        model = compiled.M()
        for b, n in [(2, 3), (1, 5)]:
            x = torch.randn(b, n, 4)
            ids = torch.randint(0, 8, (b, n))
            keep = torch.rand(b, n) > 0.3
            try:
                with torch.no_grad():
                    out = compiled.forward(model, x, ids, keep)
            except Exception as e:  # noqa: BLE001: any error from generated code is the failure
                pytest.fail(f"seed {seed} at b={b} n={n}: {type(e).__name__}: {e}\n{text}")
            assert tuple(out.shape) == (b, n, 4), f"seed {seed}: {tuple(out.shape)}\n{text}"
        if seed % EXPORT_EVERY == 0:
            torch.save(model.state_dict(), tmp_path / f"generated_{seed}.pt")
            try:
                exported = shapescript.export(path, "forward", tmp_path / f"generated_{seed}.pt2",
                                              weights=tmp_path / f"generated_{seed}.pt").module()
                with torch.no_grad():
                    got = exported(x, ids, keep)
            except Exception as e:  # noqa: BLE001
                pytest.fail(f"seed {seed}, exported: {type(e).__name__}: {e}\n{text}")
            assert torch.allclose(got, out, rtol=1e-4, atol=1e-4, equal_nan=True), f"seed {seed}: the export differs\n{text}"

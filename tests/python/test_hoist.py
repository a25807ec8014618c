"""Layer-invariant work computed once (core/emit/hoist.h): examples/llama.ss's rotary tables, the cos
and sin of its angles, are computed once per forward, not once per rope call in every block, and
the logits stay bit for bit what the functions as written compute.

    $SHAPESCRIPT_VENV/bin/python -m pytest tests/python/test_hoist.py
"""
from __future__ import annotations

import ast
from collections import Counter

import pytest

import torch
from torch.overrides import TorchFunctionMode

import shapescript
from conftest import EXAMPLES, ROOT, cli, place

SOURCE = EXAMPLES / "llama.ss"


class CountCalls(TorchFunctionMode):
    def __init__(self):
        super().__init__()
        self.calls = Counter()

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.calls[getattr(func, "__name__", str(func))] += 1
        return func(*args, **(kwargs or {}))


@pytest.fixture(scope="module")
def llama():
    compiled = shapescript.compile(SOURCE)
    torch.manual_seed(0)
    model = compiled.Llama()
    ids = torch.randint(0, compiled.V, (2, 9))
    pos = torch.arange(9).expand(2, -1)
    return compiled, model, ids, pos


def test_rotary_tables_are_computed_once_per_forward(llama):
    compiled, model, ids, pos = llama
    assert compiled.L == 2
    with torch.no_grad(), CountCalls() as counted:
        compiled.forward(model, ids, pos)
    # as written: each of the L blocks' two rope calls computes cos and sin twice (8 each)
    assert counted.calls["cos"] == 1
    assert counted.calls["sin"] == 1
    assert counted.calls["exp"] == 1  # inv_freq


def as_written(compiled, m, ids, pos):
    """forward's loop calling `attention` and `feed_forward` as the source writes them."""
    rms_norm, D = torch.nn.functional.rms_norm, compiled.D
    x = torch.nn.functional.embedding(ids, m.wte)
    for l in range(compiled.L):
        x = x + compiled.attention(rms_norm(x, (D,), weight=m.attn_norm[l], eps=1e-5), m.wq[l], m.wk[l], m.wv[l], m.wo[l], pos)
        x = x + compiled.feed_forward(rms_norm(x, (D,), weight=m.ffn_norm[l], eps=1e-5), m.w_gate[l], m.w_up[l], m.w_down[l])
    return torch.nn.functional.linear(rms_norm(x, (D,), weight=m.norm, eps=1e-5), m.w_out)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_logits_are_those_of_the_functions_as_written(llama, dtype):
    compiled, model, ids, pos = llama
    model = compiled.Llama().to(dtype)  # bfloat16: the float32 tables are cast where they meet the model's values
    model.load_state_dict(llama[1].state_dict())
    with torch.no_grad():
        assert torch.equal(compiled.forward(model, ids, pos), as_written(compiled, model, ids, pos))


def test_the_hf_folder_computes_its_rotary_tables_once_per_forward(tmp_path):
    import transformers

    place(tmp_path, SOURCE)
    result = cli("export", SOURCE.name, "--hf", "hf", cwd=tmp_path, timeout=300)
    assert result.returncode == 0, result.stderr
    model = transformers.AutoModelForCausalLM.from_pretrained(str(tmp_path / "hf"), trust_remote_code=True, dtype=torch.float32).eval()
    assert model.config.num_hidden_layers == 2
    ids = torch.randint(0, model.config.vocab_size, (1, 7))
    with torch.no_grad(), CountCalls() as counted:
        model(input_ids=ids)
    # ShapeScriptModel.forward prepares them; each decoder layer's attention reads them
    assert counted.calls["cos"] == 1
    assert counted.calls["sin"] == 1


def unread_parameters(python):
    """(function, parameter) for each parameter a hoisted version takes but never reads: a `_hoisted_`
    function, or a module's or decoder layer's `forward` given prepared values (before attention_mask)."""
    unread = []
    for node in ast.walk(ast.parse(python)):
        if not isinstance(node, ast.FunctionDef):
            continue
        parameters = [a.arg for a in node.args.args if a.arg != "self"]
        if node.name == "forward" and any(p.startswith("_prepared") for p in parameters):
            parameters = parameters[:parameters.index("attention_mask")] if "attention_mask" in parameters else parameters
        elif not node.name.startswith("_hoisted_"):
            continue
        read = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
        unread += [(node.name, p) for p in parameters if p not in read]
    return unread


# The emit goldens: what the generators write for every kind of program (tests/golden/run.py keeps them current).
GENERATED = sorted((ROOT / "tests" / "golden" / "emit").rglob("*.py"))


@pytest.mark.parametrize("path", [p for p in GENERATED if "_hoisted_" in p.read_text(encoding="utf-8")], ids=lambda p: p.name)
def test_a_hoisted_version_takes_only_the_parameters_it_reads(path):
    assert unread_parameters(path.read_text(encoding="utf-8")) == []

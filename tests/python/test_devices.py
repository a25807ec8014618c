"""The generated code runs where its inputs are and in their precision: a model moved to a GPU
runs there, and one cast to bfloat16 computes in bfloat16.

A tensor the generated code makes from sizes alone (`causal[n n]`, `map`'s positions, a `for`
loop's counter) must go to its inputs' device. Every export fn and model forward of examples/ and
tests/python/programs, and the `--hf` folders of five examples, run here on the `meta` device, where a tensor
left on the CPU is an error as it is on a GPU ("Tensor on device cpu is not on the expected
device meta"), and on CUDA when this machine has it, compared with the CPU.
tests/device/cuda_check.py runs the same functions (device_runs.py) on a GPU machine.

A float tensor computed from sizes and positions alone (rope's angles) stays float32, for
precision, until it meets the model's values, where it takes their dtype: each case runs in
bfloat16, as GPUs and vLLM run models, and must give bfloat16 results near the float32 ones.

    $SHAPESCRIPT_VENV/bin/python -m pytest tests/python/test_devices.py
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

import shapescript
from conftest import ROOT, cli
from device_runs import BF16_TOLERANCE, forward_on, hf_forward_on, relative_error

SOURCES = sorted((ROOT / "examples").glob("*.ss")) + sorted((ROOT / "tests" / "python" / "programs").glob("*.ss"))
DEVICES = ["meta"] + (["cuda"] if torch.cuda.is_available() else [])
# Programs whose run is refused by design on any device (the `as` check, a missing extern fn).
REFUSED = {"as_refused.ss", "bad_extern.ss"}
# Programs that read their data (`if` on a value, a `for` to a size, the size nonzero returns):
# meta tensors hold no data to read, so these run on real devices only.
READS_DATA = {"cond_if.ss", "if_elif.ss", "if_return.ss", "masked_mean.ss", "nonzero.ss", "while_for.ss"}
# The rows `experts` routes to each expert are where its tokens chose it: on meta tensors, which
# hold no choices, torch.where has no size; on real devices it runs, in bfloat16 too.
ROUTES_ROWS = {path.name for path in SOURCES if "experts(" in path.read_text()}


def specs() -> list[tuple[str, str]]:
    """(file, function) for every export fn and model forward of SOURCES that checks."""
    cases = []
    for source in SOURCES:
        listing = shapescript._extension().export_spec(str(source), "", "/dev/null", "pt2", "")
        if any(d["severity"] == "error" for d in listing["diagnostics"]):
            continue
        functions = list(listing["exports"])
        if shapescript._extension().export_spec(str(source), "forward", "/dev/null", "pt2", "")["spec"] is not None:
            functions.append("forward")
        cases += [(str(source.relative_to(ROOT)), f) for f in functions if source.name not in REFUSED]
    return cases


def spec_of(source: str, function: str) -> dict:
    return json.loads(shapescript._extension().export_spec(str(ROOT / source), function, "/dev/null", "pt2", "")["spec"])


CASES = specs()


def test_every_source_has_a_case():
    """The cases are read from the files: the examples' model forwards are among them."""
    names = {(Path(s).name, f) for s, f in CASES}
    assert {("llama.ss", "forward"), ("mistral_sliding.ss", "forward"), ("tiny.ss", "forward"),
            ("map_positions.ss", "sinusoid"), ("while_for.ss", "repeat_n"), ("patches.ss", "patchify")} <= names


RUNS = [(s, f, d) for s, f in CASES for d in DEVICES if not (d == "meta" and Path(s).name in READS_DATA | ROUTES_ROWS)]


@pytest.mark.parametrize("source,function,device", RUNS, ids=[f"{Path(s).stem}.{f}-{d}" for s, f, d in RUNS])
def test_generated_code_follows_its_inputs(source, function, device):
    spec = spec_of(source, function)
    outs = forward_on(spec, device)
    assert all(o.device.type == device for o in outs if isinstance(o, torch.Tensor))
    if device != "meta":
        expected = forward_on(spec, "cpu")
        for o, e in zip(outs, expected):
            torch.testing.assert_close(o.cpu(), e, rtol=1e-4, atol=1e-4)


HF_EXAMPLES = ["llama.ss", "mistral_sliding.ss", "tiny.ss", "gpt2.ss", "phi3.ss"]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("example", HF_EXAMPLES)
def test_hf_folder_follows_its_inputs(example, device, tmp_path):
    result = cli("export", ROOT / "examples" / example, "--hf", tmp_path / "hf", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    logits = hf_forward_on(tmp_path / "hf", device)
    assert logits.device.type == device and logits.shape[:2] == (2, 9)
    if device != "meta":
        torch.testing.assert_close(logits.cpu(), hf_forward_on(tmp_path / "hf", "cpu"), rtol=1e-4, atol=1e-4)


BF16_RUNS = [(s, f) for s, f in CASES if Path(s).name not in READS_DATA]


@pytest.mark.parametrize("source,function", BF16_RUNS, ids=[f"{Path(s).stem}.{f}" for s, f in BF16_RUNS])
def test_generated_code_computes_in_its_inputs_dtype(source, function):
    spec = spec_of(source, function)
    outs, expected = forward_on(spec, "cpu", torch.bfloat16), forward_on(spec, "cpu")
    for got, want in zip(outs, expected):
        if want.is_floating_point():
            assert got.dtype == torch.bfloat16
            assert relative_error(got, want) < BF16_TOLERANCE


@pytest.mark.parametrize("example", HF_EXAMPLES)
def test_hf_folder_computes_in_bfloat16(example, tmp_path):
    result = cli("export", ROOT / "examples" / example, "--hf", tmp_path / "hf", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    logits = hf_forward_on(tmp_path / "hf", "cpu", torch.bfloat16)
    assert logits.dtype == torch.bfloat16
    assert relative_error(logits, hf_forward_on(tmp_path / "hf", "cpu")) < BF16_TOLERANCE

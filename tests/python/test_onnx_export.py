"""`shapescript export --onnx`: the export target added as one runtime module and one row of each
target table (cli/targets.cpp, python/shapescript/runtime/targets.py). The ONNX model is run by
onnx's own reference evaluator and compared with the .pt2 program of the same function."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys

import numpy as np
import torch

from conftest import EXAMPLES, PYTHON, ROOT, cli, fresh_python
from test_gguf_export import random_checkpoint

import onnx  # scripts/setup.sh installs it, with onnxscript (torch.onnx's exporter)
from onnx.reference import ReferenceEvaluator


def axes(values):
    return {v.name: [d.dim_param or d.dim_value for d in v.type.tensor_type.shape.dim] for v in values}


def test_an_export_fn_as_onnx_names_its_dynamic_axes_by_its_dims_and_computes_what_the_program_does(tmp_path):
    shutil.copy(EXAMPLES / "patches.ss", tmp_path)
    result = cli("export", "patches.ss", "--onnx", "patchify.onnx", "--python", PYTHON, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "wrote patchify.onnx: `patchify` as an ONNX model, dynamic img[0] = b, img[2] = 16*gh, img[3] = 16*gw\n"
    assert cli("export", "patches.ss", "-o", "patchify.pt2", "--python", PYTHON, cwd=tmp_path).returncode == 0
    model = onnx.load(tmp_path / "patchify.onnx")
    assert axes(model.graph.input) == {"img": ["b", 3, "16*gh", "16*gw"]}
    assert axes(model.graph.output) == {"output": ["b", "gh*gw", 768]}
    program = torch.export.load(tmp_path / "patchify.pt2").module()
    evaluator = ReferenceEvaluator(model)
    for shape in [(1, 3, 16, 48), (5, 3, 64, 32)]:  # sizes other than the export's own examples
        img = torch.randn(shape)
        got = evaluator.run(None, {"img": img.numpy()})[0]
        np.testing.assert_allclose(got, program(img).numpy(), rtol=1e-5, atol=1e-6)


def test_a_models_forward_as_onnx_carries_its_weights_and_gives_the_programs_logits(tmp_path):
    shutil.copy(EXAMPLES / "qwen3.ss", tmp_path)
    ckpt = tmp_path / "ckpt.pt"
    torch.save(random_checkpoint(tmp_path / "qwen3.ss", seed=5), ckpt)  # every weight away from its initial value
    for target in (["--onnx", "model.onnx"], ["-o", "model.pt2"]):
        result = cli("export", "qwen3.ss", "--fn", "forward", "--weights", ckpt, *target, "--python", PYTHON, cwd=tmp_path)
        assert result.returncode == 0, result.stderr
    model = onnx.load(tmp_path / "model.onnx")
    assert axes(model.graph.input) == {"ids": ["b", "n"], "pos": ["b", "n"]}
    program = torch.export.load(tmp_path / "model.pt2").module()
    evaluator = ReferenceEvaluator(model)
    generator = torch.Generator().manual_seed(3)
    for b, n in [(1, 3), (3, 9)]:
        ids = torch.randint(0, 128, (b, n), generator=generator)
        pos = torch.arange(n).expand(b, n).contiguous()
        with torch.no_grad():
            expected = program(ids, pos)
        got = evaluator.run(None, {"ids": ids.numpy(), "pos": pos.numpy()})[0]
        assert got.shape == tuple(expected.shape)
        assert np.abs(got - expected.numpy()).max() / expected.abs().max().item() < 1e-5


def test_onnx_is_refused_where_it_would_overwrite_an_input_or_share_the_output_option(tmp_path):
    shutil.copy(EXAMPLES / "patches.ss", tmp_path)
    both = cli("export", "patches.ss", "--onnx", "a.onnx", "-o", "b.pt2", "--python", PYTHON, cwd=tmp_path)
    assert both.returncode == 2 and "excludes" in both.stderr, both
    over = cli("export", "patches.ss", "--onnx", "patches.ss", "--python", PYTHON, cwd=tmp_path)
    assert over.returncode == 2, over
    assert (EXAMPLES / "patches.ss").read_text() == (tmp_path / "patches.ss").read_text()
    nowhere = cli("export", "patches.ss", "--onnx", "no/such/dir/p.onnx", "--python", PYTHON, cwd=tmp_path)
    assert nowhere.returncode != 0 and "p.onnx" in nowhere.stderr, nowhere
    assert sorted(p.name for p in tmp_path.iterdir()) == ["patches.ss"]


def test_every_runtime_target_has_the_one_interface_and_an_unknown_one_is_a_bad_spec(tmp_path):
    sys.path.insert(0, str(ROOT / "python"))
    from shapescript.runtime import targets
    import importlib

    assert set(targets.TARGETS) == {"pt2", "aoti", "hf", "gguf", "onnx"}
    for key, target in targets.TARGETS.items():
        module = importlib.import_module(f"shapescript.runtime.{target.module}")
        assert callable(module.write) and isinstance(module.EXPECTED, tuple), key
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({"version": 1, "target": "tflite", "output": str(tmp_path / "m")}))
    run = subprocess.run([PYTHON, "-I", str(ROOT / "python" / "shapescript" / "runtime" / "run_export.py"), str(spec)],
                         capture_output=True, text=True)
    assert run.returncode == 2
    assert run.stderr == f"error: invalid export spec {spec}: `target` must be one of pt2, aoti, hf, gguf, onnx, not 'tflite'\n"


def test_a_python_without_onnx_is_told_what_to_install_and_nothing_is_written(tmp_path):
    shutil.copy(EXAMPLES / "patches.ss", tmp_path)
    # torch and einops lent; `onnx` shadowed by a module that isn't there, as in a Python without it
    python = fresh_python(tmp_path, lend_packages=True,
                          modules={"onnx.py": "raise ModuleNotFoundError(\"No module named 'onnx'\", name='onnx')\n"})
    result = cli("export", "patches.ss", "--onnx", "p.onnx", "--python", python, cwd=tmp_path)
    assert result.returncode == 1, result
    assert f"error: {python} has no module named 'onnx'; install it with: {python} -m pip install onnx onnxscript" in result.stderr
    assert not (tmp_path / "p.onnx").exists()

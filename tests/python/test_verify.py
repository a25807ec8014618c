"""`shapescript verify FILE`: every artifact of a model's forward run in its engine (the .pt2, the
AOTInductor package, the --hf folder in transformers and in real vLLM, the --gguf file in llama.cpp)
on the same inputs, against the compiled forward, in one table; exit 1 when one disagrees.

Needs the vLLM venv (scripts/engines.sh) and llama.cpp (scripts/llama_cpp.sh): a missing one fails
the test that runs it, never skips it.
"""
from __future__ import annotations

import re
import shutil
from pathlib import Path

import torch

import shapescript
from conftest import EXAMPLES, VLLM_VENV, cli, model_class, unit_scale_weights

ENGINES = [".pt2 (torch.export)", "AOTInductor", "ONNX (--onnx)", "transformers (--hf)", "vLLM (--hf)", "llama.cpp (--gguf)"]


def verify(*args, cwd):
    return cli("verify", *args, cwd=cwd, timeout=1500)


def table(stdout):
    """{engine: (max difference, tokens/s, result)} from the printed table."""
    rows = {}
    for line in stdout.splitlines()[1:]:
        for engine in ["compiled forward", *ENGINES]:
            if line.startswith(engine + " "):
                difference, tps, result = re.split(r"\s{2,}", line[len(engine):].strip(), maxsplit=2)
                rows[engine] = (difference, tps, result)
    return rows


def spread_checkpoint(path: Path, seed: int):
    """Weights of unit scale (norms 1 + 0.2 randn), so that every part of the model moves the logits."""
    state = model_class(shapescript.compile(path))().state_dict()
    return unit_scale_weights(state, seed, is_norm=lambda key, value: value.dim() == 1 or key.endswith("norm"))


def test_every_engine_agrees_then_a_tampered_folder_is_named(tmp_path):
    assert (VLLM_VENV / "bin" / "python").exists(), f"no vLLM venv at {VLLM_VENV}: run scripts/engines.sh"
    # examples/llama.ss as it is: heads of 32, which vLLM's CPU attention has (E3306)
    (tmp_path / "llama.ss").write_text((EXAMPLES / "llama.ss").read_text())
    torch.save(spread_checkpoint(tmp_path / "llama.ss", seed=3), tmp_path / "ckpt.pt")

    result = verify("llama.ss", "--weights", "ckpt.pt", "--artifacts", "art", cwd=tmp_path)
    print(result.stdout, result.stderr)
    assert result.returncode == 0, result.stdout + result.stderr
    rows = table(result.stdout)
    assert list(rows) == ["compiled forward", *ENGINES]
    for engine in ENGINES:
        difference, tps, outcome = rows[engine]
        assert outcome.startswith("pass"), (engine, outcome)
        assert float(difference) < 1e-4 and float(tps.replace(",", "")) > 0
    assert "prompts of at most 255 tokens" in rows["vLLM (--hf)"][2]  # P = 256: vLLM samples one more
    progress = [line for line in result.stderr.splitlines() if line.startswith("verify: ")]
    assert "verify: inputs of batch x tokens 1x1, 1x256, 3x7, 2x61" in progress
    assert "verify: exporting the AOTInductor package (compiling C++, a minute or two)" in progress

    # Without vLLM's venv, its row says so, and the others still run (on the artifacts kept in art/).
    result = verify("llama.ss", "--weights", "ckpt.pt", "--artifacts", "art", "--vllm-venv", str(tmp_path / "none"), cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    rows = table(result.stdout)
    assert rows["vLLM (--hf)"] == ("-", "-", "skipped: no vLLM venv, run scripts/engines.sh")
    assert "verify: using the .pt2 program already in " in result.stderr
    assert all(rows[e][2].startswith("pass") for e in ENGINES if e != "vLLM (--hf)")

    # One weight changed in the Hugging Face folder: transformers and vLLM, which read it, disagree.
    from safetensors.torch import load_file, save_file

    folder = tmp_path / "art" / "hf"
    tensors = load_file(str(folder / "model.safetensors"))
    key = next(k for k in tensors if k.endswith("mlp.w_down.weight") or "w_down" in k)
    tensors[key] = tensors[key] * 1.01
    save_file(tensors, str(folder / "model.safetensors"), metadata={"format": "pt"})
    result = verify("llama.ss", "--weights", "ckpt.pt", "--artifacts", "art", cwd=tmp_path)
    print(result.stdout, result.stderr)
    assert result.returncode == 1
    rows = table(result.stdout)
    for engine in ENGINES:
        assert rows[engine][2].startswith("FAIL" if "--hf" in engine else "pass"), (engine, rows[engine])
    assert "differs by more than 0.0001 of the largest logit" in rows["transformers (--hf)"][2]
    assert result.stderr.splitlines()[-1] == "error: transformers (--hf), vLLM (--hf) disagree with `forward`"


def test_engines_that_cannot_run_the_model_are_skipped_saying_why(tmp_path):
    """examples/tiny_sdpa.ss has heads of 16, which vLLM's CPU attention has no kernel for (E3306),
    and is none of llama.cpp's architectures: both rows say so, and the others agree."""
    shutil.copy(EXAMPLES / "tiny_sdpa.ss", tmp_path / "tiny.ss")
    result = verify("tiny.ss", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    rows = table(result.stdout)
    assert rows["vLLM (--hf)"] == ("-", "-", "skipped: vLLM's CPU backend can't serve this: it has no attention kernel for heads "
                                             "of size 16 (E3306)")
    assert rows["llama.cpp (--gguf)"][2].startswith("skipped: `Tiny` isn't an architecture llama.cpp has: not `llama`")
    assert all(rows[e][2] == "pass" for e in ENGINES[:3])
    assert "verify: inputs of batch x tokens 1x1, 1x100, 3x7, 2x61" in result.stderr  # no positions: 100 tokens


def test_a_function_that_is_not_a_language_model_is_refused(tmp_path):
    result = verify(str(EXAMPLES / "patches.ss"), "--fn", "patchify", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr.startswith("error: `shapescript verify` compares the engines of a language model's forward: patches.ss:4:20: "
                                    "`patchify` isn't a language model's forward: it must take a model first")

"""The chapter's transcripts (shared/spec/exporting-without-python.md), character for character, on
the examples as they ship. The expected text is copied from the chapter."""
import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
SHAPESCRIPT = os.environ.get("SHAPESCRIPT_BIN", str(ROOT / "build" / "shapescript"))

E1701 = """error[E1701]: `torch.load` is Python, which an exported function can't use
 --> export_bad.ss:6:12
  |
6 |     return torch.load("w_qkv.pt") as [D 3*D]
  |            ^^^^^^^^^^^^^^^^^^^^^^ runs Python
  |
  = note: `torch.export` records torch operations only, and code from `import python` could be anything
  = help: pass the value in as a parameter, or declare a torch function with `extern fn`, as in `extern fn erfc(x: Real) -> NonNeg = "torch.special.erfc"`

For more information about E1701, run `shapescript explain E1701`.
"""

E3304 = """error[E3304]: a serving engine can't run this: this works along `n`, which mixes its positions
  --> tiny.ss:18:12
   |
18 |         |> softmax(over=m)
   |            ^^^^^^^ works across `n`
   |
   = note: a serving engine packs the tokens of many requests along `n`, one request after another, so everything but attention must treat each position on its own; it replaces `scaled_dot_product_attention(…, attn_mask=causal[n n])` with its own, which keeps the requests apart
   = help: write attention as `scaled_dot_product_attention` with `attn_mask=causal[n n]` in the call, and take positions as a parameter `pos: [b n] Index[P]` rather than computing them from `n`
"""


def shapescript(*args, cwd=EXAMPLES):
    return subprocess.run([SHAPESCRIPT, *args], cwd=cwd, capture_output=True, text=True)


def test_check_export_bad_prints_the_chapters_E1701_block():
    result = shapescript("check", "export_bad.ss")
    assert result.stdout == E1701
    assert result.returncode == 1


def test_export_hf_vllm_refuses_tiny_with_the_chapters_E3304_block(tmp_path):
    result = shapescript("export", "tiny.ss", "--hf", str(tmp_path / "tiny_hf"), "--vllm")
    assert result.stderr == E3304 + "\n"  # each block ends with a blank line
    assert result.returncode == 1
    assert not (tmp_path / "tiny_hf").exists()


GGUF_TINY = """error: `Tiny` isn't an architecture llama.cpp has: not `llama`: it has 3 fields stacked along its 2 blocks and 0 other fields, but `llama` has 9 tensors in each block and 1 other tensor; not `gpt2`: llama.cpp's architecture normalizes with `layer_norm` only, but the model uses rms_norm
error: exporting `forward` failed: `python3` exited with exit status: 1
"""


def test_export_gguf_refuses_tiny_with_the_chapters_two_lines(tmp_path):
    # The chapter's machine has torch and gguf in `python3`: here that is the venv's Python.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python3").write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')  # a link would lose the venv
    (bin_dir / "python3").chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
    env["PATH"] = f"{bin_dir}{os.pathsep}{env['PATH']}"
    result = subprocess.run([SHAPESCRIPT, "export", "tiny.ss", "--gguf", str(tmp_path / "tiny.gguf")], cwd=EXAMPLES,
                            capture_output=True, text=True, env=env)
    assert (result.stdout, result.stderr, result.returncode) == ("", GGUF_TINY, 1)
    assert not (tmp_path / "tiny.gguf").exists()


def test_the_chapters_programs_check_clean():
    for name in ["patches.ss", "tiny.ss", "tiny_sdpa.ss", "causal_attention.ss", "llama.ss", "gpt2.ss", "tiny_llama.ss", "train_tiny.ss"]:
        result = shapescript("check", name)
        assert (result.returncode, result.stdout) == (0, ""), name


def test_explain_E1701_says_what_to_do():
    result = shapescript("explain", "E1701")
    assert result.returncode == 0
    assert "extern fn" in result.stdout and "parameter" in result.stdout

"""The chapter's transcripts (shared/spec/exporting-without-python.md), character for character, on
the examples as they ship. The expected text is copied from the chapter."""
import os
import pathlib
import subprocess

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


def test_the_chapters_programs_check_clean():
    for name in ["patches.ss", "tiny.ss", "tiny_sdpa.ss", "causal_attention.ss"]:
        result = shapescript("check", name)
        assert (result.returncode, result.stdout) == (0, ""), name


def test_explain_E1701_says_what_to_do():
    result = shapescript("explain", "E1701")
    assert result.returncode == 0
    assert "extern fn" in result.stdout and "parameter" in result.stdout

"""The chapter's transcripts (tests/python/chapter/exporting-without-python.md, the book's chapter), character for character, on
the examples as they ship. The expected text is read from the chapter itself."""
import os
import sys

from conftest import EXAMPLES, chapter_transcript, cli


def test_check_export_bad_prints_the_chapters_E1701_block():
    result = cli("check", "export_bad.ss", cwd=EXAMPLES)
    assert result.stdout == chapter_transcript("shapescript check export_bad.ss")
    assert result.returncode == 1


def test_export_hf_vllm_refuses_tiny_with_the_chapters_E3304_block(tmp_path):
    result = cli("export", "tiny.ss", "--hf", tmp_path / "tiny_hf", "--vllm", cwd=EXAMPLES)
    assert result.stderr == chapter_transcript("shapescript export tiny.ss --hf tiny_hf --vllm") + "\n"  # each block ends with a blank line
    assert result.returncode == 1
    assert not (tmp_path / "tiny_hf").exists()


def test_export_gguf_refuses_tiny_with_the_chapters_two_lines(tmp_path):
    # The chapter's machine has torch and gguf in `python3`: here that is the venv's Python.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python3").write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')  # a link would lose the venv
    (bin_dir / "python3").chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
    env["PATH"] = f"{bin_dir}{os.pathsep}{env['PATH']}"
    result = cli("export", "tiny.ss", "--gguf", tmp_path / "tiny.gguf", cwd=EXAMPLES, env=env)
    assert (result.stdout, result.stderr, result.returncode) == ("", chapter_transcript("shapescript export tiny.ss --gguf tiny.gguf"), 1)
    assert not (tmp_path / "tiny.gguf").exists()


def test_the_chapters_programs_check_clean():
    for name in ["patches.ss", "tiny.ss", "tiny_sdpa.ss", "causal_attention.ss", "llama.ss", "gpt2.ss", "tiny_llama.ss", "train_tiny.ss"]:
        result = cli("check", name, cwd=EXAMPLES)
        assert (result.returncode, result.stdout) == (0, ""), name


def test_explain_E1701_says_what_to_do():
    result = cli("explain", "E1701")
    assert result.returncode == 0
    assert "extern fn" in result.stdout and "parameter" in result.stdout

"""Text from the source file that the code generators write into string literals: an `as` type
over several lines, and a file name with control characters or non-ASCII letters, must reach the
generated module and config.json intact, and never break them."""
from __future__ import annotations

import json
import shutil

import pytest

import torch

import shapescript
from conftest import EXAMPLES, cli

MULTI_LINE_AS = """\
dim D = 4

## The rows of each image, asserted with a type written over two lines.
export fn rows(img: [b D 2gh 2gw]) -> [b (gh gw) 4*D]:
    r = img |> rearrange(b c (gh p1) (gw p2) -> b (gh gw) (p1 p2 c))
    return r as [b
                 (gh gw) 4*D]
"""


def test_a_multi_line_as_type_compiles_and_is_checked_when_it_runs(tmp_path):
    path = tmp_path / "rows.ss"
    path.write_text(MULTI_LINE_AS)
    module = shapescript.compile(path)  # a SyntaxError when the type's newline was written raw
    assert module.rows(torch.randn(2, 4, 6, 8)).shape == (2, 12, 16)
    python = shapescript._extension().generate_python(str(path), None)["python"]
    assert '"[b\\n                 (gh gw) 4*D]"' in python  # the type as written, newline and all


@pytest.mark.parametrize("name", ["tab\there.ss", "größe_🙂.ss", "bell\x07.ss"], ids=["tab", "unicode", "control"])
def test_a_file_name_with_odd_characters_reaches_config_json(tmp_path, name):
    shutil.copy(EXAMPLES / "tiny_sdpa.ss", tmp_path / name)
    result = cli("export", name, "--hf", "hf", cwd=tmp_path, timeout=600)
    assert result.returncode == 0, result.stderr  # before: the CLI aborted on config.json it could not parse
    config = json.loads((tmp_path / "hf" / "config.json").read_text(encoding="utf-8"))
    assert config["shapescript_source"] == name

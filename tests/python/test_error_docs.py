"""Every page in docs/errors shows a failing example that really fails with its code, and a fix that
really clears it: `shapescript explain` never teaches something the checker doesn't do."""
import json
import re

import pytest

from conftest import ROOT, cli

PAGES = sorted((ROOT / "docs" / "errors").glob("E*.md"))


def blocks(page, heading):
    section = re.split(r"^## ", page.read_text(), flags=re.M)
    for part in section:
        if part.startswith(heading):
            return re.findall(r"```shapescript\n(.*?)```", part, flags=re.S)
    return []


def codes_of(text, tmp_path, code):
    path = tmp_path / "example.ss"
    path.write_text(text)
    serving = ["--serving", "error"] if code.startswith("E33") else []
    # An example that needs more of `check` says so in its first line, as the golden tests do.
    first = text.split("\n", 1)[0]
    extra = first[len("# check:"):].split() if first.startswith("# check:") else []
    result = cli("check", "--format", "json", *serving, *extra, path)
    return [d["code"] for d in json.loads(result.stdout)]


@pytest.mark.parametrize("page", PAGES, ids=[p.stem for p in PAGES])
def test_example_fails_with_its_code_and_the_fix_clears_it(page, tmp_path):
    code = page.stem
    examples, fixes = blocks(page, "Example"), blocks(page, "Fix")
    assert examples, f"{page.name} has no ```shapescript example under ## Example"
    assert code in codes_of(examples[0], tmp_path, code), f"{page.name}'s example does not produce {code}"
    assert fixes, f"{page.name} has no ```shapescript fix under ## Fix"
    assert code not in codes_of(fixes[0], tmp_path, code), f"{page.name}'s fix still produces {code}"


def test_every_code_has_a_page():
    declared = re.findall(r"^DIAGNOSTIC\((E\d{4}),", (ROOT / "core" / "diagnostics" / "diagnostic_codes.def").read_text(), flags=re.M)
    assert sorted(declared) == [p.stem for p in PAGES]


def test_explain_prints_the_page():
    result = cli("explain", "E1701")
    assert result.returncode == 0
    assert result.stdout == (ROOT / "docs" / "errors" / "E1701.md").read_text()
    assert cli("explain", "E9999").returncode == 2

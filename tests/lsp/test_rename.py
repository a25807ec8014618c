"""Rename keeps a program's meaning: in every example, each symbol with references is renamed to a
fresh name, and the renamed text must check with the same diagnostic codes as the original (a use
rename missed, or an edit that hit something else, shows as an unknown name or a changed error).
It found `Logit over V` and a pattern's solved names missing from the core's definition facts.
Run with pytest; SHAPESCRIPT_LSP names the server (default build/lsp/shapescript-lsp).
"""
import glob
import os
import re

import pytest

from test_robustness import ROOT, Client

EXAMPLES = sorted(glob.glob(os.path.join(ROOT, "examples", "*.ss")))
NEW_NAME = "renamed_zz"
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@pytest.fixture(scope="module")
def client():
    c = Client("--debounce-ms", "0")
    c.initialize()
    yield c
    assert c.close() == 0, b"".join(c.stderr).decode()[-2000:]


def identifiers(text):
    """(line, character) of each name outside comments and strings (the examples are ASCII)."""
    for number, line in enumerate(text.split("\n")):
        code = re.sub(r'"[^"]*"', lambda m: " " * len(m.group()), line).split("#")[0]
        for m in IDENTIFIER.finditer(code):
            yield number, m.start()


def apply(text, edits):
    lines = text.split("\n")
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)
    at = lambda p: starts[p["line"]] + p["character"]
    for edit in sorted(edits, key=lambda e: at(e["range"]["start"]), reverse=True):
        text = text[:at(edit["range"]["start"])] + edit["newText"] + text[at(edit["range"]["end"]):]
    return text


def codes(diagnostics):
    # Serving rules (E33xx) read conventional names (`forward`, its `ids` and `pos`): renaming those
    # changes what is served, by design.
    return sorted(d["code"] for d in diagnostics if not d["code"].startswith("E33"))


@pytest.mark.parametrize("path", EXAMPLES, ids=os.path.basename)
def test_rename_keeps_meaning(client, path):
    text = open(path, encoding="utf-8").read()
    if NEW_NAME in text or not text.isascii():
        pytest.skip("not an ASCII example")
    uri = "file:///" + os.path.basename(path)
    client.open(text, 1, uri)
    original = codes(client.diagnostics(1, uri)["diagnostics"])
    done, version = set(), 1
    for line, character in identifiers(text):
        position = {"textDocument": {"uri": uri}, "position": {"line": line, "character": character}}
        found = client.call("textDocument/references", dict(position, context={"includeDeclaration": True}))["result"]
        if not found:
            continue
        declaration = found[0]["range"]
        key = (declaration["start"]["line"], declaration["start"]["character"])
        if key in done:
            continue
        done.add(key)
        reply = client.call("textDocument/rename", dict(position, newName=NEW_NAME))
        if "error" in reply:
            continue  # refused, with a reason: not a meaning changed
        edits = reply["result"]["changes"][uri]
        assert len(edits) == len(found), (line, character, found, edits)
        renamed = apply(text, edits)
        version += 1
        client.change(version, [{"text": renamed}], uri)
        after = codes(client.diagnostics(version, uri)["diagnostics"])
        assert after == original, "renaming the name at %d:%d changed the diagnostics:\n%s" % (line + 1, character + 1, renamed)
        version += 1
        client.change(version, [{"text": text}], uri)
        client.diagnostics(version, uri)
    assert done, "no symbol with references in " + path
    client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})

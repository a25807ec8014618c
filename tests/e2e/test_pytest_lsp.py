"""End-to-end tests of shapescript-lsp with pytest-lsp (a published LSP test client on pygls,
which also checks the server's answers against the client capabilities it announces).

The server is $SHAPESCRIPT_LSP (a command line, e.g. "build/shapescript lsp"), else $SHAPESCRIPT_BUILD/lsp/shapescript-lsp (SHAPESCRIPT_BUILD
defaults to <repo>/build). The same three checks as nvim_lsp_test.lua:
(a) examples/export_bad.ss: a diagnostic E1701 at 6:12 (1-based);
(b) examples/patches.ss: hover on the parameter `img` shows its shape and each axis, fixed or dynamic;
(c) a copy of examples/tiny.ss with servingSeverity=error: E3304, its quick fix, then no E3304.
"""
import asyncio
import os
import pathlib
import shlex

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, default_converter, register_lsp_features

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ.get("SHAPESCRIPT_BUILD") or ROOT / "build")
SERVER = shlex.split(os.environ.get("SHAPESCRIPT_LSP") or shlex.quote(str(BUILD / "lsp" / "shapescript-lsp")))
EXAMPLES = ROOT / "examples"
TIMEOUT = 15.0


def make_client() -> LanguageClient:
    """pytest-lsp's client, except that it keeps every publishDiagnostics (with its version)."""
    client = LanguageClient(converter_factory=default_converter)
    client.published = []

    def publish_diagnostics(ls: LanguageClient, params: types.PublishDiagnosticsParams):
        ls.diagnostics[params.uri] = params.diagnostics
        ls.published.append(params)

    register_lsp_features(client, {**DEFAULT_CLIENT_FEATURES,
                                   types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS: publish_diagnostics})
    return client


CONFIG = ClientServerConfig(server_command=[*SERVER, "--log-level", "warn"], client_factory=make_client)


async def start(client: LanguageClient, init_options=None):
    if not os.access(SERVER[0], os.X_OK):
        pytest.fail(f"no server at {SERVER[0]}")
    client.initialized_with = await client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"),
        root_uri=ROOT.as_uri(),
        initialization_options=init_options,
    ))


@pytest_lsp.fixture(config=CONFIG)
async def client(lsp_client: LanguageClient):
    await start(lsp_client)
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=CONFIG)
async def serving_client(lsp_client: LanguageClient):
    await start(lsp_client, {"shapescript": {"servingSeverity": "error"}})
    yield
    await lsp_client.shutdown_session()


def open_document(client: LanguageClient, path: pathlib.Path, version=1):
    uri = path.as_uri()
    text = path.read_text(encoding="utf-8")
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=uri, language_id="shapescript", version=version, text=text)))
    return uri, text


async def wait_diagnostics(client: LanguageClient, uri: str, version=None) -> types.PublishDiagnosticsParams:
    """The latest publishDiagnostics for `uri` at `version` or later (any version if None)."""
    deadline = asyncio.get_running_loop().time() + TIMEOUT
    while True:
        found = [p for p in client.published
                 if p.uri == uri and (version is None or (p.version is not None and p.version >= version))]
        if found:
            return found[-1]
        if asyncio.get_running_loop().time() > deadline:
            pytest.fail(f"no publishDiagnostics for {uri} (version {version}) within {TIMEOUT} s; "
                        f"got {[(p.uri, p.version) for p in client.published]}")
        await asyncio.sleep(0.02)


def summary(diagnostics):
    return [f"{d.code}@{d.range.start.line + 1}:{d.range.start.character + 1}" for d in diagnostics]


def utf16_offset(text: str, position: types.Position) -> int:
    """The index into `text` of an LSP position (UTF-16 code units)."""
    lines = text.split("\n")
    assert position.line <= len(lines), position
    offset = sum(len(line) + 1 for line in lines[:position.line])
    line = lines[position.line] if position.line < len(lines) else ""
    units = 0
    for i, ch in enumerate(line):
        if units >= position.character:
            return offset + i
        units += 2 if ord(ch) > 0xFFFF else 1
    return offset + len(line)


def apply_edits(text: str, edits) -> str:
    """Applies TextEdits, all relative to `text`, as an editor does: from the last to the first."""
    spans = sorted(((utf16_offset(text, e.range.start), utf16_offset(text, e.range.end), e.new_text)
                    for e in edits), reverse=True)
    for i in range(1, len(spans)):
        assert spans[i][1] <= spans[i - 1][0], f"overlapping edits: {edits}"
    for start, end, new_text in spans:
        text = text[:start] + new_text + text[end:]
    return text


@pytest.mark.asyncio
async def test_export_bad_e1701(client: LanguageClient):
    uri, _ = open_document(client, EXAMPLES / "export_bad.ss")
    published = await wait_diagnostics(client, uri)
    assert published.version == 1
    hits = [d for d in published.diagnostics
            if d.code == "E1701" and (d.range.start.line, d.range.start.character) == (5, 11)]
    assert hits, f"no E1701 at 6:12; diagnostics: {summary(published.diagnostics)}"
    assert hits[0].severity == types.DiagnosticSeverity.Error
    assert hits[0].source == "shapescript"
    assert "torch.load" in hits[0].message
    # The code links to its page in this checkout's docs/errors/, found beside the server.
    page = ROOT / "docs" / "errors" / "E1701.md"
    assert hits[0].code_description is not None, "E1701 has no link to its page"
    assert hits[0].code_description.href == page.as_uri() and page.is_file(), hits[0].code_description.href


@pytest.mark.asyncio
async def test_semantic_tokens_tell_dims_from_axes(client: LanguageClient):
    uri, text = open_document(client, EXAMPLES / "patches.ss")
    await wait_diagnostics(client, uri)
    legend = client.initialized_with.capabilities.semantic_tokens_provider.legend
    tokens = await asyncio.wait_for(client.text_document_semantic_tokens_full_async(
        types.SemanticTokensParams(text_document=types.TextDocumentIdentifier(uri=uri))), TIMEOUT)
    lines, line, column, seen = text.split("\n"), 0, 0, []
    data = tokens.data
    for i in range(0, len(data), 5):
        line, column = line + data[i], (column + data[i + 1] if data[i] == 0 else data[i + 1])
        modifiers = [m for bit, m in enumerate(legend.token_modifiers) if data[i + 4] >> bit & 1]
        seen.append((line, lines[line][column:column + data[i + 2]], legend.token_types[data[i + 3]], modifiers))
    # `dim D = 768`; `export fn patchify(img: [b 3 16gh 16gw]) -> [b (gh gw) D]`; the body's pattern.
    assert (0, "D", "dim", ["declaration", "readonly"]) in seen, seen
    assert (3, "patchify", "function", ["declaration"]) in seen, seen
    assert (3, "img", "parameter", ["declaration"]) in seen, seen
    assert (3, "b", "axis", ["declaration", "readonly"]) in seen, seen
    assert (3, "D", "dim", ["readonly"]) in seen, seen
    assert (4, "img", "parameter", []) in seen, seen
    assert [t for t in seen if t[0] == 4 and t[1] == "gh"] == [(4, "gh", "axis", ["readonly"])] * 2, seen


@pytest.mark.asyncio
async def test_hover_on_export_parameter(client: LanguageClient):
    uri, text = open_document(client, EXAMPLES / "patches.ss")
    line = text.split("\n")[3]  # `export fn patchify(img: [b 3 16gh 16gw]) -> [b (gh gw) D]`
    column = line.index("img")
    hover = await asyncio.wait_for(client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri),
        position=types.Position(line=3, character=column))), TIMEOUT)
    assert hover is not None, "no hover on `img`"
    assert isinstance(hover.contents, types.MarkupContent), hover.contents
    assert hover.contents.kind == types.MarkupKind.Markdown
    value = hover.contents.value
    for expected in ["img: [b 3 16gh 16gw]",
                     'dim 0 `b`: dynamic: `Dim("b")`',
                     "dim 1 `3`: fixed",
                     "dim 2 `16gh`: dynamic: `16*gh`",
                     "dim 3 `16gw`: dynamic: `16*gw`"]:
        assert expected in value, f"hover lacks {expected!r}; it was {value!r}"
    assert hover.range == types.Range(start=types.Position(line=3, character=column),
                                      end=types.Position(line=3, character=column + 3))


@pytest.mark.asyncio
async def test_e3304_quick_fix(serving_client: LanguageClient, tmp_path: pathlib.Path):
    client = serving_client
    path = tmp_path / "tiny.ss"
    path.write_bytes((EXAMPLES / "tiny.ss").read_bytes())
    uri, text = open_document(client, path)
    published = await wait_diagnostics(client, uri)
    e3304 = [d for d in published.diagnostics if d.code == "E3304"]
    assert e3304, f"no E3304 with servingSeverity=error; diagnostics: {summary(published.diagnostics)}"
    diagnostic = e3304[0]
    assert diagnostic.severity == types.DiagnosticSeverity.Error

    actions = await asyncio.wait_for(client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri),
        range=diagnostic.range,
        context=types.CodeActionContext(diagnostics=[diagnostic]))), TIMEOUT)
    fixes = [a for a in actions or []
             if isinstance(a, types.CodeAction) and a.kind == types.CodeActionKind.QuickFix and a.edit
             and any(d.code == "E3304" for d in a.diagnostics or [])]
    assert fixes, f"no quickfix with an edit for E3304 offered; codeAction returned {actions}"
    edit = fixes[0].edit
    assert edit.changes and uri in edit.changes, f"the edit does not change {uri}: {edit}"
    assert set(edit.changes) == {uri}, f"the edit changes other documents: {list(edit.changes)}"

    edits = edit.changes[uri]
    fixed = apply_edits(text, edits)
    # As an editor sends it: one didChange, its changes applied in order (the last edit first).
    changes = [types.TextDocumentContentChangePartial(range=e.range, text=e.new_text)
               for e in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True)]
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
        content_changes=changes))
    after = await wait_diagnostics(client, uri, version=2)
    assert after.version == 2
    assert not [d for d in after.diagnostics if d.code == "E3304"], \
        f"E3304 remains after the fix: {summary(after.diagnostics)}"
    assert not [d for d in after.diagnostics if d.severity == types.DiagnosticSeverity.Error], \
        f"the fix leaves an error: {summary(after.diagnostics)}"

    # The server's text is the one the edit gives: the same diagnostics when the fixed text is opened afresh.
    fresh = tmp_path / "fresh.ss"
    fresh.write_text(fixed, encoding="utf-8")
    fresh_uri, _ = open_document(client, fresh)
    again = await wait_diagnostics(client, fresh_uri)
    assert summary(again.diagnostics) == summary(after.diagnostics)
    assert "scaled_dot_product_attention" in fixed

"""shapescript.check and shapescript.export from Python, on the development build."""
import pytest
import torch

import shapescript
from conftest import EXAMPLES


def test_check_returns_diagnostics_as_objects():
    diagnostics = shapescript.check(EXAMPLES / "export_bad.ss")
    assert [(d.code, d.line, d.column) for d in diagnostics] == [("E1701", 6, 12)]
    assert diagnostics[0].message == "`torch.load` is Python, which an exported function can't use"
    assert "^^^^^^^^^^^^^^^^^^^^^^ runs Python" in str(diagnostics[0])
    assert shapescript.check(EXAMPLES / "patches.ss") == []


def test_check_text_without_a_file():
    diagnostics = shapescript.check("inline.ss", "dim D = 10 / 3\n")
    assert [d.code for d in diagnostics] == ["E0302"]


def test_export_returns_the_exported_program(tmp_path):
    ep = shapescript.export(EXAMPLES / "patches.ss", "patchify", tmp_path / "patchify.pt2")
    assert isinstance(ep, torch.export.ExportedProgram)
    assert ep.module()(torch.randn(3, 3, 48, 32)).shape == (3, 6, 768)
    loaded = torch.export.load(str(tmp_path / "patchify.pt2")).module()
    assert loaded(torch.randn(2, 3, 16, 64)).shape == (2, 4, 768)


def test_export_refuses_a_file_with_errors(tmp_path):
    with pytest.raises(shapescript.ShapeScriptError) as error:
        shapescript.export(EXAMPLES / "export_bad.ss", "load_qkv", tmp_path / "x.pt2")
    assert [d.code for d in error.value.diagnostics] == ["E1701"]
    assert not (tmp_path / "x.pt2").exists()


def test_export_names_a_missing_function(tmp_path):
    with pytest.raises(shapescript.ShapeScriptError, match="no `export fn nope`.*patchify"):
        shapescript.export(EXAMPLES / "patches.ss", "nope", tmp_path / "x.pt2")


def test_compile_gives_the_models_and_functions_as_torch_code():
    llama = shapescript.compile(EXAMPLES / "llama.ss")
    model = llama.Llama()
    assert dict(model.named_parameters())["wq"].shape == (2, 64, 64)
    ids = torch.randint(0, 512, (2, 5))
    logits = llama.forward(model, ids, torch.arange(5).expand(2, 5))
    assert logits.shape == (2, 5, 512)
    # Rotary embeddings keep each pair's length: the compiled rope is a rotation.
    x = torch.randn(1, 2, 5, 32)  # [b H n Dh]: 2 heads of 32
    rotated = llama.rope(x, torch.arange(5).expand(1, 5))
    pairs = lambda t: t[..., :16] ** 2 + t[..., 16:] ** 2  # noqa: E731
    assert torch.allclose(pairs(rotated), pairs(x), atol=1e-5)
    torch.testing.assert_close(rotated[:, :, 0], x[:, :, 0])  # position 0: angle 0
    assert not torch.allclose(rotated[:, :, 1:], x[:, :, 1:], atol=1e-3)  # later positions turn


def test_compile_refuses_a_file_with_errors():
    with pytest.raises(shapescript.ShapeScriptError) as error:
        shapescript.compile("inline.ss", "dim D = 10 / 3\n")
    assert [d.code for d in error.value.diagnostics] == ["E0302"]


def test_compiled_maps_and_splits_run(tmp_path):
    # map over a tensor's slices, and a split whose other factor is a generic axis (einops needs k2=2)
    source = (
        "dim D = 4\n\n"
        "fn rows(x: [b D]) -> [b D]:\n    return x |> map(r => r * 2)\n\n"
        "fn halves(x: [b 2h]) -> [b h]:\n    lo, hi = x |> split(b (2 h) -> b h)\n    return lo + hi\n"
    )
    compiled = shapescript.compile(tmp_path / "maps.ss", source)
    x = torch.arange(8.0).reshape(2, 4)
    torch.testing.assert_close(compiled.rows(x), x * 2)
    torch.testing.assert_close(compiled.halves(x), x[:, :2] + x[:, 2:])


RUNTIME_ERROR = """dim D = 4

fn twice(x: [n D]) -> [n D]:
    y = x * 2
    return y

fn project(x: [n D], w: [D D]) -> [n D]:
    h = twice(x)
    return linear(h, w)
"""


def test_a_run_time_error_names_the_ss_line(tmp_path):
    """The compiled code carries the .ss file's lines (generated_code.compile_mapped): a torch
    error raised by a statement's code shows that statement's .ss line and text in the traceback,
    with the caller's line above it; runtime helpers keep a `<generated from ...>` name."""
    import traceback

    path = tmp_path / "mapped.ss"
    path.write_text(RUNTIME_ERROR)
    compiled = shapescript.compile(path)
    with pytest.raises(RuntimeError) as caught:
        compiled.project(torch.zeros(3, 4), torch.zeros(5, 3))  # the caller's w isn't [D D]
    frames = [(f.filename, f.lineno, f.name, f.line) for f in traceback.extract_tb(caught.value.__traceback__)]
    assert frames[-1] == (str(path), 9, "project", "return linear(h, w)"), frames
    # Text compiled in place of the file: its lines are the ones shown.
    edited = "\n\n" + RUNTIME_ERROR
    compiled = shapescript.compile(tmp_path / "elsewhere.ss", edited)
    with pytest.raises(RuntimeError) as caught:
        compiled.project(torch.zeros(3, 4), torch.zeros(5, 3))
    frames = [(f.filename, f.lineno, f.line) for f in traceback.extract_tb(caught.value.__traceback__)]
    assert frames[-1] == (str(tmp_path / "elsewhere.ss"), 11, "return linear(h, w)"), frames

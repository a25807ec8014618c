"""ShapeScript from Python: check files and export their functions.

    import shapescript
    for d in shapescript.check("patches.ss"):
        print(d.rendered)
    ep = shapescript.export("patches.ss", "patchify", "patchify.pt2")   # a torch.export.ExportedProgram
    llama = shapescript.compile("llama.ss")      # a module: llama.forward(llama.Llama(), ids, pos)

torch is imported only by export() and by the code compile() returns, so check() works without it.
"""
from __future__ import annotations

import json
import os
import types
from dataclasses import dataclass, field

__all__ = ["Diagnostic", "ShapeScriptError", "check", "compile", "export"]


@dataclass(frozen=True)
class Diagnostic:
    code: str
    severity: str
    message: str
    file: str
    line: int
    column: int
    label: str
    notes: list[str] = field(default_factory=list)
    helps: list[str] = field(default_factory=list)
    rendered: str = ""

    def __str__(self) -> str:
        return self.rendered


class ShapeScriptError(Exception):
    """A file has errors, or its export failed."""

    def __init__(self, message: str, diagnostics: list[Diagnostic] | None = None):
        super().__init__(message)
        self.diagnostics = diagnostics or []


def _extension():
    """The C++ extension: installed in the package, or in a development build's build/python."""
    try:
        from . import _core

        return _core
    except ImportError:
        build = os.environ.get("SHAPESCRIPT_BUILD")
        if not build:
            raise
    import glob
    import importlib.util
    import sys

    found = glob.glob(os.path.join(build, "python", "_core*.so"))
    if not found:
        raise ImportError(f"no shapescript._core in {build}/python: build it with cmake --build {build}")
    spec = importlib.util.spec_from_file_location(__name__ + "._core", found[0])
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sys.modules[spec.name] = module
    return module


def check(path: str | os.PathLike, text: str | None = None) -> list[Diagnostic]:
    """Checks a ShapeScript file (or `text` as if it were that file); returns its diagnostics."""
    return [Diagnostic(**d) for d in _extension().check(os.fspath(path), text)]


def compile(path: str | os.PathLike, text: str | None = None) -> types.ModuleType:
    """Compiles a ShapeScript file to a Python module: each `fn` a function of torch tensors, each
    model a torch.nn.Module whose parameters are its `param`s (created by their initializers).

    Raises ShapeScriptError with the rendered diagnostics when the file has errors.
    """
    result = _extension().generate_python(os.fspath(path), text)
    diagnostics = [Diagnostic(**d) for d in result["diagnostics"]]
    if result["python"] is None:
        errors = [d for d in diagnostics if d.severity == "error"]
        raise ShapeScriptError("".join(d.rendered for d in errors), diagnostics)
    name = os.path.splitext(os.path.basename(os.fspath(path)))[0]
    module = types.ModuleType(name)
    module.__file__ = os.fspath(path)
    from .runtime import generated_code  # the code is checked again before it runs

    generated_code.check(result["python"], f"`{os.fspath(path)}`'s generated module", python_imports=True)
    # Each statement's code carries its .ss line: a run-time error's traceback shows the .ss line.
    for code in generated_code.compile_mapped(result["python"], os.fspath(path), text):
        exec(code, module.__dict__)
    return module


def _refuse_overwriting(output, inputs) -> None:
    """An output that is an input (the same file, a link or a hard link of it) is refused, as the CLI refuses it."""
    if not os.path.exists(output):
        return
    for given in inputs:
        named = [given] if not os.path.isdir(given) else [os.path.join(d, f) for d, _, fs in os.walk(given) for f in fs] + [given]
        for candidate in named:
            if os.path.exists(candidate) and os.path.samefile(output, candidate):
                raise ShapeScriptError(f"can't write `{os.fspath(output)}`: it is the input `{os.fspath(candidate)}`; choose another output")


def export(path: str | os.PathLike, function: str, output: str | os.PathLike, *, aoti: bool = False,
           weights: str | os.PathLike | None = None):
    """Exports `function` of a ShapeScript file to `output` and returns the torch.export.ExportedProgram.

    `function` is an `export fn`, or a model's forward (`fn forward(m: Llama, ...)`), whose
    parameters the program then holds: from the checkpoint `weights`, else the initializers.
    The same as `shapescript export PATH --fn FUNCTION -o OUTPUT [--aoti] [--weights W]`, in this Python.
    """
    _refuse_overwriting(output, [path] + ([weights] if weights else []))
    result = _extension().export_spec(os.fspath(path), function, os.path.abspath(os.fspath(output)), "aoti" if aoti else "pt2",
                                      os.fspath(weights) if weights else "")
    diagnostics = [Diagnostic(**d) for d in result["diagnostics"]]
    errors = [d for d in diagnostics if d.severity == "error"]
    if errors:
        raise ShapeScriptError("".join(d.rendered for d in errors), diagnostics)
    if result["spec"] is None:
        names = ", ".join(result.get("exports", [])) or "none"
        raise ShapeScriptError(f"`{os.fspath(path)}` has no `export fn {function}` (its export fns: {names})")
    spec = json.loads(result["spec"])
    if weights and "model" not in spec:  # as the CLI says it
        raise ShapeScriptError(f"--weights gives a model's parameters, but `{function}` takes no model")
    from .runtime import exporter

    ep, _ = exporter.run(spec)
    return ep

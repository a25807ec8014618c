"""Command-line entry of the ShapeScript export runtime, for every target (targets.py).

    python run_export.py [--verbose] SPEC.json        (a plain script, next to the runtime's modules)
    python -m shapescript.runtime [--verbose] SPEC.json

SPEC.json is an export spec (see SPEC.md); `-` reads it from stdin.  Its `target`
(pt2, aoti, hf, gguf, onnx; default its `format`, else pt2) picks the module that
writes it.  On success it answers with one JSON object, written to the file the
spec's `reply` names (the shapescript CLI's way: the generated module may import
packages that print), or else as the only line on stdout:

    {"ok": true, "output": "patchify.pt2", "format": "pt2", "torch": "2.x",
     "dynamic": {"img": {"0": "b", "2": "16*gh", "3": "16*gw"}}}

Exit status: 0 written; 1 the export failed (`error: ...` on stderr);
2 bad usage or a malformed spec; 3 a package the target needs is missing from this Python.
"""

from __future__ import annotations

import json
import os
import sys

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_NO_TORCH = 0, 1, 2, 3
USAGE = "usage: run_export.py [--verbose] SPEC.json"


def _err(msg: str) -> None:
    sys.stderr.write(msg.rstrip("\n") + "\n")
    sys.stderr.flush()


def _check_python(needs) -> int:
    """Import what the target needs (torch and einops, ...); say how to install what is missing."""
    exe = sys.executable or "python3"
    for name, install in needs:
        try:
            __import__(name)
        except ModuleNotFoundError as e:
            if e.name != name:  # the package is there but something it needs isn't
                _err(f"error: importing {name} in {exe} failed: {e}")
                return EXIT_NO_TORCH
            _err(
                f"error: {exe} has no module named '{name}'; "
                f"install it with: {exe} -m pip install {install}"
            )
            return EXIT_NO_TORCH
        except Exception as e:  # a broken install
            _err(f"error: importing {name} in {exe} failed: {type(e).__name__}: {e}")
            return EXIT_NO_TORCH
    return EXIT_OK


def _load_sibling(name: str):
    """The runtime's module `name` (exporter, script)."""
    if __package__:
        import importlib

        return importlib.import_module(f"{__package__}.{name}")
    # run as a plain script (possibly with -I, which leaves the script's
    # directory off sys.path): load NAME.py from next to this file under a
    # private name, so that no other module of that name can interfere
    import importlib.util

    here = os.path.dirname(os.path.abspath(__file__))
    private = f"_shapescript_runtime_{name}"
    if private in sys.modules:
        return sys.modules[private]
    spec = importlib.util.spec_from_file_location(private, os.path.join(here, f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    sys.modules[private] = module  # dataclasses look their module up here
    spec.loader.exec_module(module)
    return module


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    verbose = False
    paths = []
    for a in argv:
        if a in ("-v", "--verbose"):
            verbose = True
        elif a in ("-h", "--help"):
            print(USAGE)
            return EXIT_OK
        elif a.startswith("-") and a != "-":
            _err(f"error: unknown option {a}\n{USAGE}")
            return EXIT_USAGE
        else:
            paths.append(a)
    if len(paths) != 1:
        _err(USAGE)
        return EXIT_USAGE
    spec_path = paths[0]

    try:
        if spec_path == "-":
            spec = json.load(sys.stdin)
        else:
            with open(spec_path, encoding="utf-8") as f:
                spec = json.load(f)
    except OSError as e:
        _err(f"error: cannot read export spec {spec_path}: {e.strerror or e}")
        return EXIT_USAGE
    except json.JSONDecodeError as e:
        _err(f"error: export spec {spec_path} is not JSON: {e}")
        return EXIT_USAGE

    targets = _load_sibling("targets")
    try:
        target = targets.TARGETS[targets.target_of(spec)]
    except targets.UnknownTarget as e:
        _err(f"error: invalid export spec {spec_path}: {e}")
        return EXIT_USAGE
    status = _check_python(target.needs)
    if status:
        return status

    # Anything torch or a C++ compiler prints goes to stderr: stdout carries
    # only the final JSON line.
    sys.stdout.flush()
    real_stdout = os.dup(1)
    os.dup2(2, 1)
    saved_py_stdout = sys.stdout
    sys.stdout = sys.stderr
    try:
        exporter = _load_sibling("exporter")
        writer = None
        try:
            exporter._check_version(spec)
            writer = _load_sibling(target.module)
            result = writer.write(spec, verbose)
        except exporter.SpecError as e:
            if verbose:
                import traceback

                traceback.print_exc()
            _err(f"error: invalid export spec {spec_path}: {exporter.summarize_exception(e)}")
            return EXIT_USAGE
        except getattr(writer, "EXPECTED", ()) as e:  # the target's own refusals, said as they are
            if verbose:
                import traceback

                traceback.print_exc()
            _err(f"error: {e}")
            return EXIT_FAILED
        except Exception as e:
            if verbose:
                import traceback

                traceback.print_exc()
            _err(f"error: {exporter.summarize_exception(e)}")
            if not verbose:
                _err("(run with --verbose for the full traceback)")
            return EXIT_FAILED
    finally:
        sys.stdout.flush()
        sys.stdout = saved_py_stdout
        os.dup2(real_stdout, 1)
        os.close(real_stdout)
    _load_sibling("script").reply(spec, result)
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())

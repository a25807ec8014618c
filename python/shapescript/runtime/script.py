"""What the runtime's scripts (hf.py, gguf_export.py) do around their work: read the spec the CLI
wrote, answer in the file the spec names, and end with `error:` lines and exit status 1 when the
work fails, the traceback only with --verbose (the CLI prints the `error:` lines and its own
closing line)."""

from __future__ import annotations

import json
import os
import sys
import types

if __package__:  # shapescript.runtime, imported in a Python process: sys.path untouched
    from . import generated_code
else:  # beside the script that imported it, whose folder is on sys.path
    import generated_code  # noqa: E402


def check_generated(source, what="the generated module", folder=False):
    """Refuses (GeneratedCodeError) code the generators could not have written, before anything runs
    it: generated_code.check. Everything the CLI's scripts load is for an export, whose code imports
    nothing that `import python` names (core/emit/codegen.h, PythonImports::left_out)."""
    generated_code.check(source, what, folder=folder)


def check_folder(path):
    """Refuses a Hugging Face folder whose Python files the generators could not have written, before
    transformers imports them with trust_remote_code."""
    generated_code.check_folder(path)


def reply(spec, answer):
    """Writes `answer` (JSON) to the file spec["reply"] names, whole or not at all; without one, to
    stdout. Not stdout when the CLI runs it: the user's program may print there too."""
    path = spec.get("reply")
    if not path:
        print(json.dumps(answer), flush=True)
        return
    partial = path + ".partial"
    with open(partial, "w", encoding="utf-8") as f:
        json.dump(answer, f)
    os.replace(partial, path)


def reference_module(spec):
    """The pt2 code generator's module of the file (spec["reference"]): its model class and forward."""
    module = types.ModuleType("shapescript_reference")
    check_generated(spec["reference"], "the reference module")
    exec(compile(spec["reference"], "<shapescript reference>", "exec"), module.__dict__)
    return module


def run(argv, work, expected=()):
    """work(spec) -> exit status (None: 0); `expected` errors are said without their type."""
    verbose = "--verbose" in argv
    args = [a for a in argv if a != "--verbose"]
    with open(args[0]) as f:
        spec = json.load(f)
    try:
        return work(spec) or 0
    except expected as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except Exception as e:  # noqa: BLE001 - said in one line; the traceback with --verbose
        if verbose:
            raise
        print(f"error: {type(e).__name__}: {e}", file=sys.stderr)
        return 1


def run_forward(function, module, ids, takes_positions, order=None):
    """A model forward on `module` for ids [b n] (and positions 0..n-1 when it takes them); with a
    list `order`, appends the module's params in the order the forward first reads them."""
    import torch

    return run_model(function, module, [ids] + ([torch.arange(ids.shape[1]).expand(ids.shape[0], -1)] if takes_positions else []), order)


def run_model(function, module, inputs, order=None):
    """A model forward on `module` with its other inputs in order (an encoder's ids, token types and
    mask); with a list `order`, appends the module's params in the order the forward first reads them."""
    import torch

    if order is not None:
        params = set(module.state_dict())

        class Recorder:
            def __getattr__(self, name):
                if name in params and name not in order:
                    order.append(name)
                return getattr(module, name)

        model = Recorder()
    else:
        model = module
    args = [model, *inputs]
    with torch.no_grad():
        return function(*args)


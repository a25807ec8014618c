"""The export target `onnx` (targets.py): the program torch.export makes of the spec (exporter.py,
the same spec as a .pt2's) written as an ONNX model by torch's own exporter (torch.onnx, dynamo),
with its dynamic axes named as the spec's dims name them (`b`, `16*gh`) rather than torch's
symbols (`s45`). Needs the `onnx` and `onnxscript` packages.
"""

from __future__ import annotations

import os
import re
import sys
import tempfile

if __package__:  # shapescript.runtime, imported in a Python process: sys.path untouched
    from . import exporter
else:  # the copy run_export.py loaded, so that its SpecError is the one run_export.py catches
    exporter = sys.modules.get("_shapescript_runtime_exporter")
    if exporter is None:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import exporter  # noqa: E402

# Every error is said by run_export.py's summarize_exception, as a .pt2's are.
EXPECTED = ()

_SYMBOL = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _symbols_named(theirs: str, ours: str) -> dict:
    """torch's symbols in an axis (`16*s68`) named by the spec's size of it (`16*gh`): the two read
    the same once each name is one placeholder; else nothing is named."""
    if _SYMBOL.sub("_", theirs) != _SYMBOL.sub("_", ours):
        return {}
    return dict(zip(_SYMBOL.findall(theirs), _SYMBOL.findall(ours)))


def name_dims(model, spec: dict) -> None:
    """Renames the model's symbolic axes (inputs, outputs, intermediate values) after the spec's dims."""
    dynamic = exporter.dynamic_axes(spec)  # {"img": {"0": "b", "2": "16*gh"}}
    names = {}
    for value in model.graph.input:
        for axis, dim in enumerate(value.type.tensor_type.shape.dim):
            ours = dynamic.get(value.name, {}).get(str(axis))
            if ours and dim.dim_param:
                names.update(_symbols_named(dim.dim_param, ours))
    if not names:
        return
    rename = lambda text: _SYMBOL.sub(lambda m: names.get(m.group(0), m.group(0)), text)  # noqa: E731
    for value in [*model.graph.input, *model.graph.output, *model.graph.value_info]:
        for dim in value.type.tensor_type.shape.dim:
            if dim.dim_param:
                dim.dim_param = rename(dim.dim_param)


def name_outputs(model) -> None:
    """The model's outputs named `output` (`output_0`, `output_1`, ... for several), not after the
    torch operation that made them (`linear_14`)."""
    outputs = list(model.graph.output)
    names = {v.name: "output" if len(outputs) == 1 else f"output_{i}" for i, v in enumerate(outputs)}
    taken = {v.name for v in [*model.graph.input, *model.graph.initializer, *model.graph.value_info]}
    taken |= {name for node in model.graph.node for name in [*node.input, *node.output]}
    if any(new in taken and new != old for old, new in names.items()):
        return  # a value already has that name: keep torch's
    for node in model.graph.node:
        for i, name in enumerate(node.output):
            if name in names:
                node.output[i] = names[name]
        for i, name in enumerate(node.input):
            if name in names:
                node.input[i] = names[name]
    for value in outputs:
        value.name = names[value.name]


def write(spec: dict, verbose: bool = False) -> dict:
    """The target's interface (targets.py): exports the program and writes spec["output"] as ONNX,
    atomically (a temporary file beside it, renamed into place); returns the answer."""
    import torch

    path = exporter._output_path(spec)
    directory = os.path.dirname(path)
    if not os.path.isdir(directory):
        raise exporter.ExportError(f"cannot write {spec['output']}: directory {directory} does not exist")
    ep = exporter.export_program(spec)
    ep.example_inputs = (exporter.example_inputs(spec), {})  # the ONNX exporter traces with them
    program = torch.onnx.export(ep, dynamo=True, verbose=verbose, report=False)
    model = program.model_proto
    name_dims(model, spec)
    name_outputs(model)
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".tmp.onnx", dir=directory)
    os.close(fd)
    try:
        import onnx

        onnx.save_model(model, tmp)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return {"ok": True, "output": spec["output"], "format": "onnx", "torch": str(torch.__version__), "opset": _opset(model),
            "dynamic": exporter.dynamic_axes(spec)}


def _opset(model) -> int | None:
    return next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), None)

"""The parameters of a ShapeScript model: from a checkpoint (`--weights ckpt.pt`), or made by the
model's initializers. Shared by every export that holds weights (hf.py, gguf_export.py and the
model forwards exporter.py exports). Needs only torch.

The spec keys it reads:
  parameters    [{name, shape}]: the model's parameters, as the checkpoint must give them
  weights       the checkpoint's path, or null: the initializers, seeded with 0; a Hugging Face
                folder is imported (import_weights.py), which reads `function` and
                `takes_positions` too
  weights_name  the path as the user wrote it, for messages
  model         the model's name (`Tiny`); the reference module's class of that name makes it
"""

from __future__ import annotations

import os


class WeightsError(Exception):
    pass


def _import_folder(spec, reference, path):
    """`--weights HF_DIR`: the folder's weights by the import's search (import_weights.py, shared)."""
    if __package__:  # shapescript.runtime, in a user's process
        from . import import_weights as module
    else:  # the CLI's `python -I` run, whose script put the runtime's folder on sys.path
        import import_weights as module
    try:
        values, _ = module.import_folder({"function": "forward", "takes_positions": True, **spec}, reference, spec["weights"], path)
    except module.ImportWeightsError as e:
        raise WeightsError(str(e)) from None
    return values


def _read_sharded(path):
    """A torch.distributed.checkpoint folder, read whole in this process (distributed.py, shared)."""
    if __package__:
        from . import distributed
    else:
        import distributed
    return distributed.read_folder(path)


def _shape(t):
    return "[" + " ".join(str(s) for s in t.shape) + "]"


def load_weights(spec, reference):
    import torch

    expected = {p["name"]: tuple(p["shape"]) for p in spec["parameters"]}
    if spec["weights"] is None:
        if not spec["model"]:
            return {}
        torch.manual_seed(0)
        model = getattr(reference, spec["model"])()
        return {name: value.detach() for name, value in model.state_dict().items()}
    path = spec.get("weights_name") or spec["weights"]  # as the user wrote it, for messages
    sharded = os.path.isfile(os.path.join(spec["weights"], ".metadata"))  # `run --nproc-per-node`'s folder of shards
    if os.path.isdir(spec["weights"]) and not sharded:
        return _import_folder(spec, reference, path)
    try:
        state = _read_sharded(spec["weights"]) if sharded else torch.load(spec["weights"], map_location="cpu", weights_only=True)
    except FileNotFoundError:
        raise WeightsError(f"can't read the checkpoint `{path}`: no such file")
    except Exception as e:  # noqa: BLE001 - torch's own reason
        raise WeightsError(f"can't read the checkpoint `{path}`: {e}")
    if isinstance(state, dict) and "state_dict" in state and isinstance(state["state_dict"], dict):
        state = state["state_dict"]
    if not isinstance(state, dict):
        raise WeightsError(f"`{path}` isn't a state dict (a dict of tensors keyed by parameter name)")
    problems = []
    for name, shape in expected.items():
        if name not in state:
            problems.append(f"`{path}` has no tensor `{name}`; `{spec['model']}.{name}` is [{' '.join(map(str, shape))}]")
        elif not isinstance(state[name], torch.Tensor):
            problems.append(f"`{path}`'s `{name}` isn't a tensor")
        elif tuple(state[name].shape) != shape:
            problems.append(
                f"`{path}`'s `{name}` is {_shape(state[name])}, but `{spec['model']}.{name}` is [{' '.join(map(str, shape))}]"
            )
    for name in state:
        if name not in expected:
            value = state[name]
            what = _shape(value) if isinstance(value, torch.Tensor) else type(value).__name__
            problems.append(f"`{path}` has a tensor `{name}` ({what}) that `{spec['model']}` has no parameter for")
    if problems:
        raise WeightsError("\nerror: ".join(problems))
    return {name: state[name].detach().to(torch.float32) for name in expected}

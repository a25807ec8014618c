"""Writes a Hugging Face folder for `shapescript export --hf DIR`.

The CLI compiles the model (core/emit/codegen_hf.cpp) and runs this script with a spec (JSON):
  output         the folder to write
  config         config.json's contents
  configuration  configuration_shapescript.py's text
  modeling       modeling_shapescript.py's text
  tensors        [{source, layer, key, parts}]: model.safetensors' tensors, each a ShapeScript parameter
                 (`w_qkv`), or its slice `layer` along the blocks axis, under the transformers key;
                 with `parts`, those parameters' slices joined along axis 1 (packed experts' gate_up_proj)
  parameters     [{name, shape}]: the model's parameters, as --weights must give them
  weights        a torch checkpoint (a state dict keyed by parameter name), or null: initializers
                 (read by weights.py)
  reference      the pt2 code generator's module of the same file: its model class makes the initial
                 parameters, and its forward is what the folder's model is checked against
  model, function, causal_lm, takes_positions, max_positions, vocab
  tokenizer, tokenizer_name  a tokenizer.json or a Hugging Face folder whose tokenizer the folder carries, or
                 null: a `weights` folder's, when it has one (hf_tokenizer.py: files read as untrusted input)

The export target `hf` (targets.py): run_export.py calls write(spec, verbose); EXPECTED are the
refusals said as they are.
"""

from __future__ import annotations

import json
import os
import sys

if __package__:  # shapescript.runtime, imported in a Python process: sys.path untouched
    from . import script, weights
    from . import hf_tokenizer
else:  # a file the CLI runs with `python -I`, whose folder holds the runtime's modules
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import hf_tokenizer  # noqa: E402
    import script  # noqa: E402
    import weights  # noqa: E402


class HfError(Exception):
    pass


def read_tokenizer(spec):
    """The tokenizer the folder carries (hf_tokenizer.for_export), read and checked before anything is written."""
    return hf_tokenizer.for_export(spec, spec["vocab"] if spec.get("causal_lm") else None)


def write_folder(spec, params, tokenizer=None):
    import torch
    from safetensors.torch import save_file

    out = spec["output"]
    script.check_generated(spec["configuration"], "configuration_shapescript.py", folder=True)
    script.check_generated(spec["modeling"], "modeling_shapescript.py", folder=True)
    os.makedirs(out, exist_ok=True)
    tensors = {}
    for t in spec["tensors"]:
        values = [params[name] for name in t.get("parts") or [t["source"]]]
        if t["layer"] >= 0:
            values = [value[t["layer"]] for value in values]
        value = values[0] if len(values) == 1 else torch.cat(values, dim=1)
        tensors[t["key"]] = value.detach().to(torch.float32).contiguous().clone()
    special = hf_tokenizer.write_folder(tokenizer, out) if tokenizer is not None else {}
    with open(os.path.join(out, "config.json"), "w") as f:
        # The tokenizer's bos/eos/pad ids too: transformers' generate and vLLM read them here as well.
        json.dump({**spec["config"], **special, "dtype": "float32", "transformers_version": _transformers_version()}, f, indent=2)
        f.write("\n")
    with open(os.path.join(out, "configuration_shapescript.py"), "w") as f:
        f.write(spec["configuration"])
    with open(os.path.join(out, "modeling_shapescript.py"), "w") as f:
        f.write(spec["modeling"])
    save_file(tensors, os.path.join(out, "model.safetensors"), metadata={"format": "pt"})


def _transformers_version():
    try:
        import transformers

        return transformers.__version__
    except ImportError:
        return None


def check_folder(spec, reference, params):
    """Loads the folder with transformers and compares its logits with the compiled forward's."""
    import torch
    from transformers import AutoModelForCausalLM

    script.check_folder(spec["output"])  # trust_remote_code runs the folder's code: only what the generators write
    model = AutoModelForCausalLM.from_pretrained(spec["output"], trust_remote_code=True, dtype=torch.float32).eval()
    ref_model = getattr(reference, spec["model"])()
    ref_model.load_state_dict(params)
    forward = getattr(reference, spec["function"])
    generator = torch.Generator().manual_seed(0)
    n = min(7, spec["max_positions"]) if spec["takes_positions"] else 7  # no more positions than the model has
    ids = torch.randint(0, spec["vocab"], (2, n), generator=generator)
    args = [ref_model, ids]
    if spec["takes_positions"]:
        args.append(torch.arange(n).expand(2, n))
    with torch.no_grad():
        expected = forward(*args)
        got = model(input_ids=ids).logits
    if got.shape != expected.shape or not torch.allclose(got, expected, atol=1e-4, rtol=1e-4):
        diff = (got - expected).abs().max().item() if got.shape == expected.shape else "shapes differ"
        raise HfError(f"the folder's model doesn't compute what `{spec['function']}` does (largest difference {diff})")


def export_folder(spec):
    tokenizer = read_tokenizer(spec)  # a broken tokenizer is said first, before torch is imported or anything is written
    try:
        import torch  # noqa: F401
        import safetensors  # noqa: F401
    except ImportError as e:
        raise HfError(f"--hf needs torch and safetensors in this Python ({sys.executable}): {e}")
    reference = script.reference_module(spec)
    params = weights.load_weights(spec, reference)
    write_folder(spec, params, tokenizer)
    if spec["causal_lm"]:
        try:
            import transformers  # noqa: F401
        except ImportError as e:
            raise HfError(f"checking the folder needs transformers in this Python ({sys.executable}): {e}")
        check_folder(spec, reference, params)


EXPECTED = (HfError, weights.WeightsError, hf_tokenizer.TokenizerError)


def write(spec, verbose=False):
    """The target's interface (targets.py): writes the folder spec["output"] names; returns the answer."""
    export_folder(spec)
    return {"ok": True, "output": spec["output"]}

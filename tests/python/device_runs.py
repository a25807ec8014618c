"""Runs generated code on a device: what test_devices.py and tests/device/cuda_check.py share.

It needs torch (and transformers for a folder), not ShapeScript's compiled core, so that a
machine with a GPU and no build of ShapeScript runs it on specs and folders written elsewhere.
"""
from __future__ import annotations

from pathlib import Path

import torch

from shapescript.runtime import exporter

# bfloat16 keeps 8 bits of mantissa: under 1% of the float32 result was measured for every case.
BF16_TOLERANCE = 0.02


def relative_error(got: torch.Tensor, expected: torch.Tensor) -> float:
    """|got - expected| / |expected|, over the whole tensor, in float32."""
    return ((got.float().cpu() - expected.float().cpu()).norm() / expected.float().cpu().norm().clamp_min(1e-12)).item()


def forward_on(spec: dict, device: str, dtype: torch.dtype = torch.float32) -> list[torch.Tensor]:
    """The spec's function on `device`: its example inputs, and its model's initializers (seed 0),
    the floating ones in `dtype`."""
    module = exporter.load_module(spec["module"], spec["function"])
    args = [a.to(device, dtype) if a.is_floating_point() else a.to(device) for a in exporter.example_inputs(spec)]
    if spec.get("model"):
        torch.manual_seed(0)
        model = getattr(module, spec["model"]["class"])().eval().to(device, dtype)
        args = [model] + args
    with torch.no_grad():
        out = getattr(module, spec["function"])(*args)
    return list(out) if isinstance(out, (tuple, list)) else [out]


def hf_forward_on(folder: Path, device: str, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """The `--hf` folder's model on `device` in `dtype`, loaded by transformers: logits for two rows of tokens."""
    import transformers

    config = transformers.AutoConfig.from_pretrained(str(folder), trust_remote_code=True)
    if device == "meta":  # no weights to load: the model as its config builds it
        with torch.device("meta"):
            model = transformers.AutoModelForCausalLM.from_config(config, trust_remote_code=True)
    else:
        model = transformers.AutoModelForCausalLM.from_pretrained(str(folder), trust_remote_code=True, dtype=dtype).to(device)
    ids = (torch.arange(2 * 9).reshape(2, 9) * 7 % config.vocab_size).to(device)
    with torch.no_grad():
        return model.eval()(input_ids=ids).logits

"""The runtime's export targets: one row each, keyed by the spec's `target` (what `shapescript
export` writes), naming the module that writes it.

Every target module has one interface:

    write(spec, verbose) -> reply    writes spec["output"] (a file or a folder) and returns the
                                     answer (JSON-able) the CLI reads
    EXPECTED                         the errors it says as they are, their type unsaid

run_export.py is the one entry: it reads the spec, checks the Python, picks the row and calls
`write`. A new target (ONNX, ExecuTorch) is one module and one row here, with its row in the CLI's
table (cli/targets.cpp). This file imports nothing but the standard library: it is read before the
Python is known to have torch.
"""

from __future__ import annotations

from dataclasses import dataclass

# What every target's work imports, with what to install when it's missing: the generated module
# (einops) runs under torch in each of them.
TORCH = (("torch", "torch einops"), ("einops", "einops"))


@dataclass(frozen=True)
class Target:
    module: str  # the runtime module whose write(spec, verbose) writes it
    needs: tuple = TORCH  # (module, what `pip install` takes) checked before anything runs


TARGETS = {
    "pt2": Target("exporter"),  # torch.export.save
    "aoti": Target("exporter"),  # an AOTInductor package
    "hf": Target("hf"),  # a Hugging Face folder (transformers, vLLM)
    "gguf": Target("gguf_export"),  # one of llama.cpp's architectures
    "onnx": Target("onnx_export", TORCH + (("onnx", "onnx onnxscript"), ("onnxscript", "onnxscript"))),  # an ONNX model
}


class UnknownTarget(ValueError):
    pass


def target_of(spec) -> str:
    """The spec's target: `target`, else its `format` (the first specs', pt2 or aoti), else pt2."""
    key = spec.get("target") or spec.get("format") or "pt2"
    if key not in TARGETS:
        raise UnknownTarget(f"`target` must be one of {', '.join(TARGETS)}, not {key!r}")
    return key

"""ShapeScript's generated code on a GPU: each case of tests/python/test_devices.py on CUDA, against the CPU.

The GPU machine has torch and transformers but no build of ShapeScript, so the work is split:

    python tests/device/cuda_check.py bundle DIR   # here: each case's export spec and each --hf folder
    python tests/device/cuda_check.py run DIR      # there: each on CUDA and on the CPU

`run` prints one row per case (max difference, result, the same in bfloat16) and greedy generation
on CUDA for each folder, and exits 1 if any case fails or disagrees with the CPU.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "tests" / "python"), str(ROOT / "python")]

TOLERANCE = 1e-4
# The model forwards whose `.pt2` is also moved to the device and compiled by AOTInductor there.
AOTI_CASES = ["llama.forward", "mistral_sliding.forward"]


def bundle(folder: Path) -> None:
    import test_devices
    from conftest import cli

    folder.mkdir(parents=True, exist_ok=True)
    for source, function in test_devices.CASES:
        spec = test_devices.spec_of(source, function)
        (folder / f"{Path(source).stem}.{function}.json").write_text(json.dumps(spec))
    for example in test_devices.HF_EXAMPLES:
        result = cli("export", ROOT / "examples" / example, "--hf", folder / f"{Path(example).stem}.hf")
        if result.returncode:
            sys.exit(result.stderr)
    print(f"bundled {len(test_devices.CASES)} cases and {len(test_devices.HF_EXAMPLES)} folders in {folder}")


def largest_difference(a, b) -> float:
    return max(((x.cpu().double() - y.double()).abs().max().item() if x.numel() else 0.0) for x, y in zip(a, b))


def aoti_difference(spec: dict, device: str, folder: Path) -> float:
    """The spec's program, exported on the CPU as `shapescript export` does, moved to `device` by
    torch's move_to_device_pass and compiled there by AOTInductor: its largest difference from the
    program run on the CPU."""
    import torch
    import torch.export.passes
    from shapescript.runtime import exporter

    program = exporter.export_program(spec)
    args = exporter.example_inputs(spec)
    expected = program.module()(*args)
    moved = torch.export.passes.move_to_device_pass(program, device)
    moved.example_inputs = (tuple(a.to(device) for a in args), {})  # AOTInductor compiles for these (the exporter clears them)
    package = torch._inductor.aoti_compile_and_package(moved, package_path=str(folder / f"{spec['function']}.{device}.pt2"))
    compiled = torch._inductor.aoti_load_package(package)
    with torch.no_grad():
        got = compiled(*[a.to(device) for a in args])
    return largest_difference([got], [expected])


def run(folder: Path, device: str) -> int:
    import torch
    import transformers
    from device_runs import BF16_TOLERANCE, forward_on, hf_forward_on, relative_error

    transformers.utils.logging.disable_progress_bar()
    name = torch.cuda.get_device_name() if device == "cuda" else device
    print(f"torch {torch.__version__}, transformers {transformers.__version__}, {name}")
    failures = 0
    rows = []
    for path in sorted(folder.glob("*.json")):
        spec = json.loads(path.read_text())
        try:
            expected = forward_on(spec, "cpu")
            difference = largest_difference(forward_on(spec, device), expected)
            in_bf16 = max((relative_error(got, want) for got, want in zip(forward_on(spec, device, torch.bfloat16), expected)
                           if want.is_floating_point()), default=0.0)
            verdict = ("ok" if difference <= TOLERANCE and in_bf16 < BF16_TOLERANCE else "DIFFERS") + f" (bfloat16: {in_bf16:.1%} off)"
        except Exception as e:  # a case that can't run on CUDA is what this check is for
            difference, verdict = float("nan"), f"FAILED: {type(e).__name__}: {str(e).splitlines()[0][:120]}"
        failures += not verdict.startswith("ok")
        rows.append((path.stem, difference, verdict))
        if path.stem in AOTI_CASES:
            try:
                started = time.perf_counter()
                difference = aoti_difference(spec, device, Path(tempfile.mkdtemp()))
                verdict = ("ok" if difference <= TOLERANCE else "DIFFERS") + f" (compiled in {time.perf_counter() - started:.0f} s)"
            except Exception as e:
                difference, verdict = float("nan"), f"FAILED: {type(e).__name__}: {str(e).splitlines()[0][:120]}"
            failures += not verdict.startswith("ok")
            rows.append((path.stem + " .pt2 moved, AOTInductor", difference, verdict))
    for hf in sorted(folder.glob("*.hf")):
        try:
            difference = largest_difference([hf_forward_on(hf, device)], [hf_forward_on(hf, "cpu")])
            model = transformers.AutoModelForCausalLM.from_pretrained(str(hf), trust_remote_code=True, dtype=torch.float32)
            prompt = torch.tensor([[1, 5, 9, 2]])
            started = time.perf_counter()
            on_gpu = model.to(device).generate(prompt.to(device), max_new_tokens=32, do_sample=False).cpu()
            seconds = time.perf_counter() - started
            on_cpu = model.to("cpu").generate(prompt, max_new_tokens=32, do_sample=False)
            same = torch.equal(on_gpu, on_cpu)
            verdict = "ok" if difference <= TOLERANCE and same else "DIFFERS"
            verdict += f" (generate: 32 tokens {'equal' if same else 'NOT equal'} to the CPU's, {32 / seconds:.0f} tokens/s)"
        except Exception as e:
            difference, verdict = float("nan"), f"FAILED: {type(e).__name__}: {str(e).splitlines()[0][:120]}"
        failures += not verdict.startswith("ok")
        rows.append((hf.name, difference, verdict))
    width = max(len(name) for name, _, _ in rows)
    print(f"{'case':<{width}}  {f'max |{device} - cpu|':>16}  result")
    for name, difference, verdict in rows:
        print(f"{name:<{width}}  {difference:>16.3g}  {verdict}")
    print(f"{len(rows) - failures} of {len(rows)} agree on {device}")
    return 1 if failures else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=["bundle", "run"])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--device", default="cuda", help="the device compared with the CPU (default: cuda)")
    args = parser.parse_args()
    if args.mode == "bundle":
        bundle(args.folder)
        return 0
    return run(args.folder, args.device)


if __name__ == "__main__":
    sys.exit(main())

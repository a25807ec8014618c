#!/usr/bin/env python3
"""`shapescript import-weights` wall time per architecture of tests/python/test_architectures.py
(transformers' own class at the example's sizes, saved with save_pretrained), or with --zoo of the
model zoo (bench/model_zoo.py: issue 19's seventeen architectures at their tiny configs), for one or
more binaries side by side (an earlier build as `before`), with the machine's load.

    python bench/bench_import_weights.py [--zoo] [--bin after=build/shapescript] [--bin before=../main/build/shapescript] [--runs 1]

Aim from issue 19: under 30 s each on 2 cores. Each run is a fresh process: it pays for importing
torch and transformers and loading the folder, as a user's run does. The figures are printed
whatever they are.
"""
import argparse
import os
import pathlib
import re
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "python"))
sys.path.insert(0, str(ROOT / "python"))


def load():
    return open("/proc/loadavg").read().split()[:3] if os.path.exists("/proc/loadavg") else ["?"] * 3


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", action="append", default=[], help="NAME=PATH of a shapescript binary (repeatable)")
    parser.add_argument("--runs", type=int, default=1, help="runs per architecture and binary (the median is printed)")
    parser.add_argument("--only", nargs="*", help="these architectures only")
    parser.add_argument("--zoo", action="store_true", help="the model zoo's architectures (bench/model_zoo.py)")
    args = parser.parse_args()
    binaries = dict(b.split("=", 1) for b in args.bin) or {"after": str(ROOT / "build" / "shapescript")}
    os.environ.setdefault("SHAPESCRIPT_BIN", next(iter(binaries.values())))
    if args.zoo:
        sys.path.insert(0, str(ROOT / "bench"))
        from model_zoo import ZOO as ARCHITECTURES, reference_model
    else:
        from test_architectures import ARCHITECTURES, reference_model

    import transformers

    transformers.utils.logging.disable_progress_bar()  # save_pretrained's bars between the rows
    env = {**os.environ, "VIRTUAL_ENV": str(pathlib.Path(sys.executable).parent.parent), "NO_COLOR": "1"}
    print(f"load average before: {' '.join(load())} ({os.cpu_count()} cpus); python {sys.executable}")
    names = args.only or sorted(ARCHITECTURES)
    print(f"{'architecture':<18}" + "".join(f"{name:>24}" for name in binaries))
    with tempfile.TemporaryDirectory() as tmp:
        for arch_name in names:
            arch = ARCHITECTURES[arch_name]
            folder = pathlib.Path(tmp) / arch_name
            reference_model(arch, seed=11).save_pretrained(folder, safe_serialization=True)
            cells = []
            for name, binary in binaries.items():
                times, said = [], ""
                for _ in range(args.runs):
                    start = time.perf_counter()
                    result = subprocess.run([binary, "import-weights", str(arch.source), str(folder), "-o", str(folder.parent / "ckpt.pt")],
                                            capture_output=True, text=True, env=env)
                    times.append(time.perf_counter() - start)
                    forwards = re.search(r"in (\d+) forwards?", result.stdout) or re.search(r"\((\d+) mappings? tried\)", result.stderr)
                    said = ("ok" if result.returncode == 0 else f"exit {result.returncode}") + (f", {forwards[1]} fw" if forwards else "")
                cells.append(f"{statistics.median(times):6.1f} s ({said})")
            print(f"{arch_name:<18}" + "".join(f"{cell:>24}" for cell in cells), flush=True)
    print(f"load average after: {' '.join(load())}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Distributed training benchmark: steps/s of examples/train_tiny.ss run by `shapescript run` in one
process and under torchrun with `--nproc-per-node 2` (gloo on CPU, NCCL where there is a GPU), on the
same global batch, so that each step of both does the same work.

    python bench/bench_distributed.py [--shapescript build/shapescript] [--steps 100] [--batch 16] [--procs 1 2]

The figures cover the training loop only (the runtime's own measure, from its first step to its
last), so that compiling, importing torch and the rendezvous don't count; steps/s is the loop's
tokens/s over the global batch's tokens. Printed with the machine's core count, load average and
OMP_NUM_THREADS (set it to compare processes of one thread each): two processes on two busy cores
measure the all-reduce and the gather, not a speed-up.
"""
import argparse
import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
TEXT = ROOT / "docs" / "language.md"


def run(shapescript, steps, batch, length, procs, workdir):
    source = (ROOT / "examples" / "train_tiny.ss").read_text().replace('"../docs/language.md"', json.dumps(str(TEXT)))
    for name, value in {"S": steps, "B": batch, "T": length}.items():
        source = re.sub(rf"^dim {name} .*$", f"dim {name}  = {value}", source, flags=re.M)
    (workdir / "train_tiny.ss").write_text(source)
    env = dict(os.environ, VIRTUAL_ENV=str(pathlib.Path(sys.executable).parent.parent))
    flags = [] if procs == 1 else ["--nproc-per-node", str(procs)]
    result = subprocess.run([shapescript, "run", "train_tiny.ss", *flags], cwd=workdir, capture_output=True, text=True, env=env)
    if result.returncode != 0:
        sys.exit(result.stderr)
    found = re.search(r"in [\d:]+, ([\d,]+) tokens/s; loss [\d.]+ -> ([\d.]+)", result.stderr)
    tokens_per_s = float(found.group(1).replace(",", ""))
    return tokens_per_s / (batch * length), float(found.group(2))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapescript", default=str(ROOT / "build" / "shapescript"))
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--batch", type=int, default=16, help="the global batch, in windows")
    parser.add_argument("--length", type=int, default=64)
    parser.add_argument("--procs", type=int, nargs="+", default=[1, 2])
    args = parser.parse_args()
    threads = os.environ.get("OMP_NUM_THREADS")
    print(f"{os.cpu_count()} cores, load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}; "
          f"train_tiny.ss, {args.steps} steps, global batch {args.batch} x {args.length} tokens; "
          f"OMP_NUM_THREADS={threads or 'unset (one process: torch picks; N processes: the cores shared out)'}")
    for procs in args.procs:
        with tempfile.TemporaryDirectory() as folder:
            rate, loss = run(args.shapescript, args.steps, args.batch, args.length, procs, pathlib.Path(folder))
        label = "1 process" if procs == 1 else f"{procs} processes (torchrun, FSDP2)"
        print(f"  {label:<32} {rate:7.2f} steps/s   final loss {loss:.4f}")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()

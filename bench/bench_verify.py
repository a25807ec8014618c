"""`shapescript verify` for each architecture of the model zoo (issue 19's table): transformers' own
class at the zoo's tiny random config, saved with `save_pretrained`, read by `import-weights`, then
`verify --weights` with every engine. Prints, per architecture, each engine's result and largest
difference, and the wall time of import and verify.

    ~/.cache/shapescript/venv/bin/python bench/bench_verify.py [--only qwen3 phi] [--bin build/shapescript]

The zoo (bench/model_zoo.py: each example, its transformers class and config) is the acceptance's
one table, which tests/python/test_model_zoo.py reads too.
"""
from __future__ import annotations

import argparse
import os
import pathlib
import re
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "python")]

ENGINES = [".pt2 (torch.export)", "AOTInductor", "transformers (--hf)", "vLLM (--hf)", "llama.cpp (--gguf)"]
SHORT = {".pt2 (torch.export)": ".pt2", "AOTInductor": "AOTI", "transformers (--hf)": "transformers",
         "vLLM (--hf)": "vLLM", "llama.cpp (--gguf)": "llama.cpp"}


def rows_of(stdout: str) -> dict:
    rows = {}
    for line in stdout.splitlines():
        for engine in ENGINES:
            if line.startswith(engine + " "):
                difference, _, outcome = re.split(r"\s{2,}", line[len(engine):].strip(), maxsplit=2)
                rows[engine] = (difference, outcome)
    return rows


def cell(row) -> str:
    if row is None:
        return "missing"
    difference, outcome = row
    word = (outcome.split() or ["?"])[0].rstrip(":")
    return f"{word} {difference}" if word == "pass" else word


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="*", help="architectures of the zoo (default: all)")
    parser.add_argument("--bin", default=str(ROOT / "build" / "shapescript"))
    args = parser.parse_args()
    os.environ.setdefault("SHAPESCRIPT_BIN", args.bin)
    from model_zoo import ZOO, reference_model  # noqa: E402  (the zoo's table and reference weights)
    import transformers

    transformers.utils.logging.disable_progress_bar()  # save_pretrained's bars would break the table

    names = args.only or sorted(ZOO)
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())} ({os.cpu_count()} cpus)", flush=True)
    print(f"{'architecture':<12} {'import':>7} {'verify':>7}  " + "  ".join(f"{SHORT[e]:<14}" for e in ENGINES), flush=True)
    failures = 0
    for name in names:
        zoo = ZOO[name]
        with tempfile.TemporaryDirectory(prefix=f"verify-{name}-") as tmp:
            folder = pathlib.Path(tmp)
            reference_model(zoo, seed=23).save_pretrained(folder / "hf", safe_serialization=True)
            started = time.perf_counter()
            imported = subprocess.run([args.bin, "import-weights", str(zoo.source), "hf", "-o", "ckpt.pt", "--python", sys.executable], cwd=folder,
                                      capture_output=True, text=True)
            import_s = time.perf_counter() - started
            if imported.returncode != 0:
                print(f"{name:<12} {import_s:6.1f}s {'-':>7}  import-weights failed: {imported.stderr.strip().splitlines()[-1:]}", flush=True)
                failures += 1
                continue
            started = time.perf_counter()
            verified = subprocess.run([args.bin, "verify", str(zoo.source), "--weights", "ckpt.pt", "--python", sys.executable], cwd=folder,
                                      capture_output=True, text=True)
            verify_s = time.perf_counter() - started
            rows = rows_of(verified.stdout)
            failures += verified.returncode != 0
            print(f"{name:<12} {import_s:6.1f}s {verify_s:6.1f}s  " + "  ".join(f"{cell(rows.get(e)):<14}" for e in ENGINES), flush=True)
            for engine, (_, outcome) in rows.items():
                if not outcome.startswith("pass"):
                    print(f"    {SHORT[engine]}: {outcome}", flush=True)
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

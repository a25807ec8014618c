#!/usr/bin/env python3
"""Generation benchmark, in one run, side by side, per architecture: a model written in ShapeScript
(an example of examples/ at a benchmark size, bench/architectures.py) exported with
`--hf --vllm --weights`, loaded by transformers with trust_remote_code, against transformers' own
class (LlamaForCausalLM, Qwen2ForCausalLM, ...) with the same config and the same weights. Their
logits are checked to agree first. Then each generates greedily, a fixed number of new tokens (EOS
ignored), on the CPU, with a key-value cache; the greedy tokens must be the same, and the tokens/s
(median of the runs) are printed with their ratio.

    python bench/bench_generate.py [--arch llama qwen2 ...] [--shapescript build/shapescript] [--runs 3] [--new-tokens 64]

Aim from the issue: at least 0.95 of transformers' class. The figures are printed whatever they are;
the exit status is 1 if any architecture's logits or greedy tokens disagree.
"""
import argparse
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from architectures import ARCHITECTURES, ROOT  # noqa: E402

# examples/llama.ss at the benchmark size; bench_vllm.py serves the same.
SIZE = ARCHITECTURES["llama"].dims


def llama_source():
    return ARCHITECTURES["llama"].source()


def bench(name, arch, args, tmp: pathlib.Path):
    """One architecture: export, check, time. Returns (ours tokens/s, theirs tokens/s, same tokens)."""
    import torch
    import transformers

    work = tmp / name
    work.mkdir()
    (work / arch.example).write_text(arch.source())
    theirs = arch.reference(seed=0)
    torch.save(arch.weights(theirs), work / "ckpt.pt")
    env = dict(os.environ, VIRTUAL_ENV=str(pathlib.Path(sys.executable).parent.parent))
    result = subprocess.run([args.shapescript, "export", arch.example, "--hf", "hf", "--vllm", "--weights", "ckpt.pt"],
                            cwd=work, capture_output=True, text=True, env=env)
    if result.returncode != 0:
        sys.exit(f"{name}: export failed\n{result.stderr}")
    print(result.stdout.strip())
    ours = transformers.AutoModelForCausalLM.from_pretrained(str(work / "hf"), trust_remote_code=True, dtype=torch.float32).eval()

    generator = torch.Generator().manual_seed(1)
    prompt = torch.randint(0, arch.dims["V"], (1, args.prompt), generator=generator)
    with torch.no_grad():
        a, b = ours(input_ids=prompt).logits, theirs(input_ids=prompt).logits
    difference = ((a - b).abs().max() / b.abs().max()).item()
    print(f"logits agree: largest difference {difference:.1e} of the largest logit")
    if not difference < 1e-4:
        print(f"{name}: the models disagree; no timing")
        return None

    kwargs = dict(max_new_tokens=args.new_tokens, min_new_tokens=args.new_tokens, do_sample=False, use_cache=True)
    rates = {"ours": [], "theirs": []}
    outputs = {}
    with torch.no_grad():
        for model in (ours, theirs):
            model.generate(prompt, **kwargs)  # warm-up
        for run in range(args.runs):  # alternate who goes first, so that the machine's load falls on both alike
            order = (("ours", ours), ("theirs", theirs))
            for who, model in (order if run % 2 == 0 else order[::-1]):
                start = time.perf_counter()
                outputs[who] = model.generate(prompt, **kwargs)
                rates[who].append(args.new_tokens / (time.perf_counter() - start))
    ours_rate, theirs_rate = statistics.median(rates["ours"]), statistics.median(rates["theirs"])
    same = outputs["ours"].tolist() == outputs["theirs"].tolist()
    d = arch.dims
    print(f"{name}: {arch.example} D={d['D']} H={d['H']} Hkv={d.get('Hkv', d['H'])} F={d['F']} V={d['V']} L={d['L']}; "
          f"prompt {args.prompt} tokens, {args.new_tokens} new, greedy, {torch.get_num_threads()} threads, median of {args.runs}")
    print(f"{'':34}{'tokens/s':>10}   runs")
    print(f"{'ShapeScript --hf':34}{ours_rate:10.1f}   {' '.join(f'{r:.1f}' for r in rates['ours'])}")
    print(f"{'transformers ' + arch.hf_class:34}{theirs_rate:10.1f}   {' '.join(f'{r:.1f}' for r in rates['theirs'])}")
    print(f"ratio ShapeScript / transformers: {ours_rate / theirs_rate:.3f} (aim: >= 0.95); same tokens: {same}\n")
    return ours_rate, theirs_rate, same


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arch", nargs="+", choices=sorted(ARCHITECTURES), default=list(ARCHITECTURES),
                        help="the architectures to run (default: all)")
    parser.add_argument("--shapescript", default=os.environ.get("SHAPESCRIPT_BIN", str(ROOT / "build" / "shapescript")))
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--new-tokens", type=int, default=64)
    parser.add_argument("--prompt", type=int, default=16)
    args = parser.parse_args()

    import torch
    import transformers

    transformers.utils.logging.disable_progress_bar()
    torch.set_num_threads(os.cpu_count() or 1)
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.arch:
            results[name] = bench(name, ARCHITECTURES[name], args, pathlib.Path(tmp))

    width = max(14, *(len(name) + 2 for name in results))  # the first column fits every name
    print(f"{'architecture':{width}}{'transformers class':22}{'ShapeScript':>12}{'transformers':>14}{'ratio':>8}  same tokens")
    failed = False
    for name, result in results.items():
        hf_class = ARCHITECTURES[name].hf_class
        if result is None:
            print(f"{name:{width}}{hf_class:22}{'logits disagree':>34}")
            failed = True
            continue
        ours, theirs, same = result
        print(f"{name:{width}}{hf_class:22}{ours:12.1f}{theirs:14.1f}{ours / theirs:8.3f}  {same}")
        failed |= not same
    print("(tokens/s, median of the runs; aim: ratio >= 0.95)")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()

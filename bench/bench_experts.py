#!/usr/bin/env python3
"""Sparse experts, side by side in one run: a Mixtral-shaped feed-forward layer (8 experts, each
token through the 2 its router scores highest, their weights renormalized) written three ways, on
the same weights and the same tokens:

- `experts`: ShapeScript's `topk` and `experts` built-ins, compiled (each expert runs on the rows
  routed to it only: the cost grows with k);
- dense: ShapeScript's every-expert-on-every-token form (einsums over all E experts, the weights of
  the experts not chosen zeroed), as a model had to be written before `experts`;
- transformers: MixtralSparseMoeBlock, transformers' own layer.

The three must agree first; then each runs `--runs` times (after a warm-up) and the median time is
printed, with the ratios. Aims from issue 20: `experts` at least 3x faster than dense, and at least
0.95x transformers' speed.

    python bench/bench_experts.py [--tokens 256] [--D 512] [--F 1792] [--runs 7] [--threads N]
"""
import argparse
import os
import pathlib
import statistics
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent

SOURCE = """\
dim D = {D}
dim F = {F}
dim E = {E}
dim K = {K}

## The K experts of E the router scores highest, on the rows routed to each only.
fn sparse(x: [b n D], router: [E D], w_gate: [E F D], w_up: [E F D], w_down: [E D F]) -> [b n D]:
    top, chosen = topk(softmax(linear(x, router), over=E), k=K, over=E)
    weights = top / rearrange(sum(top, over=K), b n -> b n 1)
    return experts(x, chosen, weights, e => rows => linear(silu(linear(rows, w_gate[e])) * linear(rows, w_up[e]), w_down[e]))

## Every expert on every token; the weights of the E - K not chosen are zeroed.
fn dense(x: [b n D], router: [E D], w_gate: [E F D], w_up: [E F D], w_down: [E D F]) -> [b n D]:
    scores = softmax(linear(x, router), over=E)
    top, chosen = topk(scores, k=K, over=E)
    kept = masked_fill(scores, scores < rearrange(min(top, over=K), b n -> b n 1), 0)
    weights = kept / rearrange(sum(top, over=K), b n -> b n 1)
    gate = einsum(x, w_gate: b n D, E F D -> b n E F)
    up = einsum(x, w_up: b n D, E F D -> b n E F)
    out = einsum(silu(gate) * up, w_down: b n E F, E D F -> b n E D)
    return einsum(weights, out: b n E, b n E D -> b n D)
"""


def median_seconds(fn, runs):
    fn()  # warm-up
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tokens", type=int, default=256, help="tokens in the batch (2 rows)")
    parser.add_argument("--D", type=int, default=512)
    parser.add_argument("--F", type=int, default=1792, help="each expert's hidden size (Mixtral: 3.5 D)")
    parser.add_argument("--experts", type=int, default=8)
    parser.add_argument("--k", type=int, default=2)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--threads", type=int, help="torch's threads (default: torch's own); on a loaded machine, 1 "
                        "keeps OpenMP's waits out of the figures")
    args = parser.parse_args()

    import torch
    import transformers
    from transformers.models.mixtral.modeling_mixtral import MixtralSparseMoeBlock

    sys.path.insert(0, str(ROOT / "python"))
    import shapescript

    if args.threads:
        torch.set_num_threads(args.threads)
    D, F, E, K = args.D, args.F, args.experts, args.k
    with tempfile.TemporaryDirectory() as tmp:
        path = pathlib.Path(tmp) / "experts.ss"
        path.write_text(SOURCE.format(D=D, F=F, E=E, K=K))
        compiled = shapescript.compile(path)

    torch.manual_seed(0)
    router = torch.randn(E, D) / D ** 0.5
    w_gate, w_up = torch.randn(E, F, D) / D ** 0.5, torch.randn(E, F, D) / D ** 0.5
    w_down = torch.randn(E, D, F) / F ** 0.5
    x = torch.randn(2, args.tokens // 2, D)

    config = transformers.MixtralConfig(hidden_size=D, intermediate_size=F, num_local_experts=E, num_experts_per_tok=K)
    block = MixtralSparseMoeBlock(config).eval()
    with torch.no_grad():
        block.gate.weight.copy_(router)
        block.experts.gate_up_proj.copy_(torch.cat([w_gate, w_up], dim=1))
        block.experts.down_proj.copy_(w_down)

    forms = {
        "experts (ShapeScript)": lambda: compiled.sparse(x, router, w_gate, w_up, w_down),
        "dense (ShapeScript)": lambda: compiled.dense(x, router, w_gate, w_up, w_down),
        "MixtralSparseMoeBlock": lambda: block(x),
    }
    with torch.inference_mode():
        outputs = {name: form() for name, form in forms.items()}
        reference = outputs["MixtralSparseMoeBlock"]
        for name, out in outputs.items():
            difference = ((out - reference).abs().max() / reference.abs().max()).item()
            print(f"{name:24} agrees with transformers to {difference:.1e} of the largest value")
            if difference > 1e-5:
                sys.exit(f"{name} disagrees")
        seconds = {name: median_seconds(form, args.runs) for name, form in forms.items()}

    load = os.getloadavg()
    print(f"\n{args.tokens} tokens, D={D}, F={F}, {E} experts, top-{K}, torch {torch.__version__}, "
          f"{torch.get_num_threads()} threads, load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}, median of {args.runs}")
    for name, s in seconds.items():
        print(f"{name:24} {s * 1000:8.1f} ms")
    ours = seconds["experts (ShapeScript)"]
    print(f"\nexperts vs dense:        {seconds['dense (ShapeScript)'] / ours:.2f}x faster (aim: >= 3x)")
    print(f"experts vs transformers: {seconds['MixtralSparseMoeBlock'] / ours:.2f}x its speed (aim: >= 0.95x)")


if __name__ == "__main__":
    main()

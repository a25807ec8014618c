#!/usr/bin/env python3
"""Export benchmark, in one run, side by side:
  1. wall time of `shapescript export` against a hand-written script doing the same torch.export
     (each a fresh process, so both pay for importing torch);
  2. run time of each exported program against the same function written by hand in PyTorch, both
     eager and exported by hand, which separates what ShapeScript adds from what torch.export's
     module() wrapper (input checks, graph interpretation) costs.

    python bench/bench_export.py [--shapescript build/shapescript] [--runs 3]

Aims from the issue: export within 10%, run time within 5%. The figures are printed whatever they are.
"""
import argparse
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]

HAND_EXPORT = textwrap.dedent('''
    import sys, torch, einops
    from torch.export import Dim
    class Patchify(torch.nn.Module):
        def forward(self, img):
            return einops.rearrange(img, "b c (gh p1) (gw p2) -> b (gh gw) (p1 p2 c)", p1=16, p2=16)
    b, gh, gw = Dim("b", min=1, max=65536), Dim("gh", min=1, max=65536), Dim("gw", min=1, max=65536)
    ep = torch.export.export(Patchify(), (torch.randn(2, 3, 48, 80),),
                             dynamic_shapes={"img": {0: b, 2: 16 * gh, 3: 16 * gw}}, strict=False)
    torch.export.save(ep, sys.argv[1])
''')

HAND_ATTENTION = textwrap.dedent('''
    import torch, torch.nn.functional as F
    def causal_attention(x, w_qkv, w_o):
        b, n, d = x.shape
        q, k, v = F.linear(x, w_qkv).reshape(b, n, 3, 4, 16).permute(2, 0, 3, 1, 4).unbind(0)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return F.linear(y.transpose(1, 2).reshape(b, n, d), w_o)
''')


def median_seconds(fn, runs):
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--shapescript", default=str(ROOT / "build" / "shapescript"))
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    python = sys.executable
    work = pathlib.Path(tempfile.mkdtemp(prefix="bench-export-"))
    (work / "hand_export.py").write_text(HAND_EXPORT)

    def shapescript_export(source, function, out):
        subprocess.run([args.shapescript, "export", str(ROOT / "examples" / source), "--fn", function, "-o", str(work / out),
                        "--python", python], check=True, capture_output=True)

    ours = median_seconds(lambda: shapescript_export("patches.ss", "patchify", "patchify.pt2"), args.runs)
    hand = median_seconds(lambda: subprocess.run([python, str(work / "hand_export.py"), str(work / "hand.pt2")], check=True,
                                                 capture_output=True), args.runs)
    shapescript_export("causal_attention.ss", "causal_attention", "attention.pt2")

    import torch
    import einops

    torch.set_num_threads(1)
    patchify = torch.export.load(str(work / "patchify.pt2")).module()
    attention = torch.export.load(str(work / "attention.pt2")).module()
    namespace = {}
    exec(HAND_ATTENTION, namespace)
    img = torch.randn(8, 3, 224, 224)
    x, w_qkv, w_o = torch.randn(4, 128, 64), torch.randn(192, 64), torch.randn(64, 64)
    torch.testing.assert_close(attention(x, w_qkv, w_o), namespace["causal_attention"](x, w_qkv, w_o))

    def per_call(fn, *inputs, calls=200):
        for _ in range(10):
            fn(*inputs)
        return median_seconds(lambda: [fn(*inputs) for _ in range(calls)], 5) / calls

    hand_patchify = lambda t: einops.rearrange(t, "b c (gh p1) (gw p2) -> b (gh gw) (p1 p2 c)", p1=16, p2=16)
    hand_exported_patchify = torch.export.load(str(work / "hand.pt2")).module()
    hand_attention = namespace["causal_attention"]
    class HandAttention(torch.nn.Module):
        def forward(self, x, w_qkv, w_o):
            return hand_attention(x, w_qkv, w_o)

    hand_exported_attention = torch.export.export(
        HandAttention(), (x, w_qkv, w_o),
        dynamic_shapes={"x": {0: torch.export.Dim("b", min=1, max=65536), 1: torch.export.Dim("n", min=1, max=65536)},
                        "w_qkv": None, "w_o": None},
        strict=False).module()
    print(f"{'':40} {'shapescript':>12} {'by hand':>12} {'ratio':>8}")
    print(f"{'export patchify (process wall time)':40} {ours:11.3f}s {hand:11.3f}s {ours / hand:7.2f}x")
    print()
    print(f"{'run time per call':40} {'shapescript':>12} {'hand .pt2':>12} {'ratio':>8} {'hand eager':>12} {'ratio':>8}")
    for name, a, b, c in [
        ("patchify [8 3 224 224]", per_call(patchify, img), per_call(hand_exported_patchify, img), per_call(hand_patchify, img)),
        ("causal_attention [4 128 64]", per_call(attention, x, w_qkv, w_o), per_call(hand_exported_attention, x, w_qkv, w_o),
         per_call(hand_attention, x, w_qkv, w_o)),
    ]:
        print(f"{name:40} {a * 1e3:10.3f}ms {b * 1e3:10.3f}ms {a / b:7.2f}x {c * 1e3:10.3f}ms {a / c:7.2f}x")
    print("aims: export within 1.10x, run time within 1.05x (torch " + torch.__version__ + ", 1 thread)")


if __name__ == "__main__":
    main()

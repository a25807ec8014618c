#!/usr/bin/env python3
"""Training benchmark, in one run, side by side: tokens/s of examples/train_tiny.ss run by
`shapescript run` against the same model and loop written by hand in PyTorch (the same Tiny, the
same AdamW, random windows of the same text, one logged loss per step).

    python bench/bench_train.py [--shapescript build/shapescript] [--steps 200] [--rounds 2]

Both figures cover the training loop only (the runtime's own measure for `shapescript run`, from
its first step to its last), so that compiling and importing torch don't count. Aim from the
issue: within 10%. The figures are printed whatever they are.
"""
import argparse
import json
import os
import pathlib
import re
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
TEXT = ROOT / "docs" / "language.md"
D, H, V, L, B, T = 64, 4, 500, 2, 16, 64


def hand_written(steps, log_path):
    import torch
    import torch.nn.functional as F

    torch.manual_seed(0)
    wte = torch.nn.Parameter(torch.randn(V, D) * 0.02)
    w_qkv = torch.nn.Parameter(torch.randn(L, 3 * D, D) * 0.02)
    w_o = torch.nn.Parameter(torch.randn(L, D, D) * 0.02)
    norm = torch.nn.Parameter(torch.ones(L, D))
    params = [wte, w_qkv, w_o, norm]

    def forward(ids):
        x = F.embedding(ids, wte)
        b, n, _ = x.shape
        for l in range(L):
            h = F.rms_norm(x, (D,), weight=norm[l], eps=1e-5)
            q, k, v = F.linear(h, w_qkv[l]).view(b, n, 3, H, D // H).permute(2, 0, 3, 1, 4)
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(b, n, D)
            x = x + F.linear(a, w_o[l])
        return F.linear(x, wte)

    tokens = torch.frombuffer(bytearray(TEXT.read_bytes()), dtype=torch.uint8).to(torch.long)
    generator = torch.Generator().manual_seed(0)
    optimizer = torch.optim.AdamW(params, lr=3e-3, weight_decay=0.01)
    with open(log_path, "w") as log:
        start = time.perf_counter()
        for step in range(steps):
            starts = torch.randint(0, len(tokens) - T - 1, (B,), generator=generator)
            chunk = tokens[starts[:, None] + torch.arange(T + 1)]
            ids, targets = chunk[:, :-1], chunk[:, 1:]
            loss = F.cross_entropy(forward(ids).movedim(-1, 1), targets)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            log.write(json.dumps({"step": step, "loss": loss.item()}) + "\n")
        elapsed = time.perf_counter() - start
    return steps * B * T / elapsed, loss.item()


def compiled(shapescript, steps, workdir):
    source = (ROOT / "examples" / "train_tiny.ss").read_text()
    source = source.replace('"../docs/language.md"', json.dumps(str(TEXT)))
    source = re.sub(r"^dim S .*$", f"dim S  = {steps}", source, flags=re.M)
    (workdir / "train_tiny.ss").write_text(source)
    env = dict(os.environ, VIRTUAL_ENV=str(pathlib.Path(sys.executable).parent.parent))
    result = subprocess.run([shapescript, "run", "train_tiny.ss"], cwd=workdir, capture_output=True, text=True, env=env)
    if result.returncode != 0:
        sys.exit(result.stderr)
    found = re.search(r"in [\d:]+, ([\d,]+) tokens/s; loss [\d.]+ -> ([\d.]+)", result.stderr)
    return float(found.group(1).replace(",", "")), float(found.group(2))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapescript", default=str(ROOT / "build" / "shapescript"))
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    import torch

    rates = {"shapescript": [], "hand": []}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        for _ in range(args.rounds):  # alternate, so that the machine's load falls on both alike
            rate, ours_loss = compiled(args.shapescript, args.steps, tmp)
            rates["shapescript"].append(rate)
            rate, hand_loss = hand_written(args.steps, tmp / "hand.log.jsonl")
            rates["hand"].append(rate)
    ours, hand = statistics.median(rates["shapescript"]), statistics.median(rates["hand"])
    print(f"Tiny (D={D} H={H} V={V} L={L}), batches of {B}x{T} bytes, AdamW, {args.steps} steps, "
          f"{torch.get_num_threads()} threads, median of {args.rounds}")
    print(f"{'':30}{'tokens/s':>10}{'last loss':>11}")
    print(f"{'shapescript run train_tiny.ss':30}{ours:10,.0f}{ours_loss:11.3f}")
    print(f"{'hand-written PyTorch loop':30}{hand:10,.0f}{hand_loss:11.3f}")
    print(f"ratio shapescript / hand-written: {ours / hand:.3f} (aim: >= 0.90)")


if __name__ == "__main__":
    main()

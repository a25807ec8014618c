#!/usr/bin/env python3
"""Generation benchmark, in one run, side by side: a Llama-shaped model written in ShapeScript
(examples/llama.ss at a larger size) exported with `--hf --vllm`, against transformers' own
LlamaForCausalLM with the same config and the same weights. Their logits are checked to agree
first. Then each generates greedily, a fixed number of new tokens (EOS ignored), on the CPU, with
a key-value cache, and the tokens/s are printed.

    python bench/bench_generate.py [--shapescript build/shapescript] [--runs 3] [--new-tokens 64]

Aim from the issue: within 5%. The figures are printed whatever they are.
"""
import argparse
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]

# examples/llama.ss's dims, at a size where the model's arithmetic, not Python, takes the time.
SIZE = {"D": 512, "H": 8, "F": 1376, "V": 8192, "L": 4, "P": 1024}


def llama_source():
    lines = []
    for line in (ROOT / "examples" / "llama.ss").read_text().splitlines():
        parts = line.split()
        if len(parts) >= 4 and parts[0] == "dim" and parts[1] in SIZE:
            line = f"dim {parts[1]} = {SIZE[parts[1]]}"
        lines.append(line)
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapescript", default=str(ROOT / "build" / "shapescript"))
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--new-tokens", type=int, default=64)
    parser.add_argument("--prompt", type=int, default=16)
    args = parser.parse_args()

    import torch
    import transformers

    torch.set_num_threads(os.cpu_count() or 1)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        (tmp / "llama.ss").write_text(llama_source())
        generator = torch.Generator().manual_seed(0)
        D, F, V, L = SIZE["D"], SIZE["F"], SIZE["V"], SIZE["L"]
        shapes = {"wte": (V, D), "attn_norm": (L, D), "wq": (L, D, D), "wk": (L, D, D), "wv": (L, D, D), "wo": (L, D, D),
                  "ffn_norm": (L, D), "w_gate": (L, F, D), "w_up": (L, F, D), "w_down": (L, D, F), "norm": (D,), "w_out": (V, D)}
        ckpt = {k: torch.randn(s, generator=generator) / (s[-1] ** 0.5 if len(s) > 1 and k != "wte" else 1) for k, s in shapes.items()}
        for k in ("attn_norm", "ffn_norm", "norm"):
            ckpt[k] = 1 + 0.1 * torch.randn(shapes[k], generator=generator)
        torch.save(ckpt, tmp / "ckpt.pt")
        env = dict(os.environ, VIRTUAL_ENV=str(pathlib.Path(sys.executable).parent.parent))
        result = subprocess.run([args.shapescript, "export", "llama.ss", "--hf", "llama_hf", "--vllm", "--weights", "ckpt.pt"],
                                cwd=tmp, capture_output=True, text=True, env=env)
        if result.returncode != 0:
            sys.exit(result.stderr)
        print(result.stdout.strip())
        ours = transformers.AutoModelForCausalLM.from_pretrained(str(tmp / "llama_hf"), trust_remote_code=True, dtype=torch.float32).eval()

        config = transformers.LlamaConfig(
            vocab_size=V, hidden_size=D, intermediate_size=F, num_hidden_layers=L, num_attention_heads=SIZE["H"],
            num_key_value_heads=SIZE["H"], max_position_embeddings=SIZE["P"], rms_norm_eps=1e-5, rope_theta=10000.0,
            tie_word_embeddings=False, attention_bias=False, mlp_bias=False, bos_token_id=None, eos_token_id=None, pad_token_id=None)
        config.rope_parameters = {"rope_type": "default", "rope_theta": 10000.0}
        theirs = transformers.LlamaForCausalLM(config).eval()
        state = {"model.embed_tokens.weight": ckpt["wte"], "model.norm.weight": ckpt["norm"], "lm_head.weight": ckpt["w_out"]}
        for l in range(L):
            p = f"model.layers.{l}."
            # examples/llama.ss rotates pairs (i, i + Dh/2), as transformers' Llama does: the weights carry over as they are.
            state.update({p + "self_attn.q_proj.weight": ckpt["wq"][l], p + "self_attn.k_proj.weight": ckpt["wk"][l],
                          p + "self_attn.v_proj.weight": ckpt["wv"][l], p + "self_attn.o_proj.weight": ckpt["wo"][l],
                          p + "mlp.gate_proj.weight": ckpt["w_gate"][l], p + "mlp.up_proj.weight": ckpt["w_up"][l],
                          p + "mlp.down_proj.weight": ckpt["w_down"][l], p + "input_layernorm.weight": ckpt["attn_norm"][l],
                          p + "post_attention_layernorm.weight": ckpt["ffn_norm"][l]})
        missing = theirs.load_state_dict(state, strict=False)
        assert not missing.missing_keys and not missing.unexpected_keys, missing

        prompt = torch.randint(0, V, (1, args.prompt), generator=generator)
        with torch.no_grad():
            a, b = ours(input_ids=prompt).logits, theirs(input_ids=prompt).logits
        difference = ((a - b).abs().max() / b.abs().max()).item()
        print(f"logits agree: largest difference {difference:.1e} of the largest logit")
        assert difference < 1e-4, "the models disagree; the timing would mean nothing"

        kwargs = dict(max_new_tokens=args.new_tokens, min_new_tokens=args.new_tokens, do_sample=False, use_cache=True)
        rates = {"ours": [], "theirs": []}
        outputs = {}
        with torch.no_grad():
            for name, model in (("ours", ours), ("theirs", theirs)):
                model.generate(prompt, **kwargs)  # warm-up
            for run in range(args.runs):  # alternate who goes first, so that the machine's load falls on both alike
                order = (("ours", ours), ("theirs", theirs))
                for name, model in (order if run % 2 == 0 else order[::-1]):
                    start = time.perf_counter()
                    outputs[name] = model.generate(prompt, **kwargs)
                    rates[name].append(args.new_tokens / (time.perf_counter() - start))
        ours_rate, theirs_rate = statistics.median(rates["ours"]), statistics.median(rates["theirs"])
        ours_out, theirs_out = outputs["ours"], outputs["theirs"]
        same = ours_out.tolist() == theirs_out.tolist()
        print(f"model: D={D} H={SIZE['H']} F={F} V={V} L={L}; prompt {args.prompt} tokens, {args.new_tokens} new, greedy, "
              f"{torch.get_num_threads()} threads, median of {args.runs}")
        print(f"{'':28}{'tokens/s':>10}")
        print(f"{'ShapeScript --hf':28}{ours_rate:10.1f}")
        print(f"{'transformers LlamaForCausalLM':28}{theirs_rate:10.1f}")
        print(f"ratio ShapeScript / transformers: {ours_rate / theirs_rate:.3f} (aim: >= 0.95); same tokens: {same}")


if __name__ == "__main__":
    main()

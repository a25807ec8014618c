#!/usr/bin/env python3
"""vLLM serving benchmark, in one run, side by side: a Llama-shaped model written in ShapeScript
(examples/llama.ss at a larger size) exported with `--hf --vllm` and served by vLLM's Transformers
backend, against the same weights saved as transformers' LlamaForCausalLM, which vLLM serves with
its own native Llama. 32 requests at once, greedy, a fixed number of new tokens each; tokens/s of
each (prompt and generated tokens over the generate call's wall time), median of the runs.

    ~/.cache/shapescript/venv/bin/python bench/bench_vllm.py [--runs 3] [--requests 32] [--new-tokens 64]

vLLM runs in its own venv (scripts/engines.sh), one process serving both folders one after the
other. Aim from the issue: at least 0.8 of the native model. The figures are printed whatever they are.
"""
import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
VLLM_VENV = pathlib.Path(os.environ.get("SHAPESCRIPT_VLLM_VENV", pathlib.Path.home() / ".cache" / "shapescript" / "vllm-venv"))

# examples/llama.ss at the generation benchmark's size (heads of 64, which vLLM's CPU attention has, E3306).
from bench_generate import SIZE, llama_source  # noqa: E402  (bench/ is sys.path[0] when run as a script)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapescript", default=str(ROOT / "build" / "shapescript"))
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--requests", type=int, default=32)
    parser.add_argument("--new-tokens", type=int, default=64)
    parser.add_argument("--prompt", type=int, default=32, help="the longest prompt; they range from a quarter of it")
    args = parser.parse_args()

    import torch
    import transformers

    transformers.utils.logging.disable_progress_bar()
    python = VLLM_VENV / "bin" / "python"
    if not python.exists():
        sys.exit(f"no vLLM venv at {VLLM_VENV}: run scripts/engines.sh")
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
        result = subprocess.run([args.shapescript, "export", "llama.ss", "--hf", "shapescript_hf", "--vllm", "--weights", "ckpt.pt"],
                                cwd=tmp, capture_output=True, text=True, env=env)
        if result.returncode != 0:
            sys.exit(result.stderr)
        print(result.stdout.strip())

        config = transformers.LlamaConfig(
            vocab_size=V, hidden_size=D, intermediate_size=F, num_hidden_layers=L, num_attention_heads=SIZE["H"],
            num_key_value_heads=SIZE["H"], max_position_embeddings=SIZE["P"], rms_norm_eps=1e-5, rope_theta=10000.0,
            tie_word_embeddings=False, attention_bias=False, mlp_bias=False, bos_token_id=None, eos_token_id=None, pad_token_id=None)
        config.rope_parameters = {"rope_type": "default", "rope_theta": 10000.0}
        native = transformers.LlamaForCausalLM(config).eval()
        state = {"model.embed_tokens.weight": ckpt["wte"], "model.norm.weight": ckpt["norm"], "lm_head.weight": ckpt["w_out"]}
        for l in range(L):
            p = f"model.layers.{l}."
            # examples/llama.ss rotates pairs (i, i + Dh/2), as transformers' Llama does: the weights carry over as they are.
            state.update({p + "self_attn.q_proj.weight": ckpt["wq"][l], p + "self_attn.k_proj.weight": ckpt["wk"][l],
                          p + "self_attn.v_proj.weight": ckpt["wv"][l], p + "self_attn.o_proj.weight": ckpt["wo"][l],
                          p + "mlp.gate_proj.weight": ckpt["w_gate"][l], p + "mlp.up_proj.weight": ckpt["w_up"][l],
                          p + "mlp.down_proj.weight": ckpt["w_down"][l], p + "input_layernorm.weight": ckpt["attn_norm"][l],
                          p + "post_attention_layernorm.weight": ckpt["ffn_norm"][l]})
        loaded = native.load_state_dict(state, strict=False)
        assert not loaded.missing_keys and not loaded.unexpected_keys, loaded
        native.save_pretrained(tmp / "native_hf")

        prompts = [torch.randint(0, V, (int(args.prompt * (0.25 + 0.75 * i / max(1, args.requests - 1))),), generator=generator).tolist()
                   for i in range(args.requests)]
        jobs = [{"model": str(tmp / name), "vocab": V, "max_model_len": args.prompt + args.new_tokens, "prompts": prompts,
                 "max_tokens": args.new_tokens, "logprobs": False, "max_num_seqs": args.requests, "model_impl": impl,
                 "runs": args.runs + 1, "kv_cache_bytes": 512 << 20}
                for name, impl in (("shapescript_hf", "transformers"), ("native_hf", "auto"))]
        (tmp / "request.json").write_text(json.dumps({"jobs": jobs}))
        env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
        env["VLLM_NO_USAGE_STATS"] = "1"
        with open(tmp / "vllm.log", "w") as log:
            status = subprocess.run([str(python), str(ROOT / "python" / "shapescript" / "runtime" / "vllm_engine.py"),
                                     str(tmp / "request.json"), str(tmp / "result.json")], stdout=log, stderr=subprocess.STDOUT,
                                    env=env, cwd=tmp, timeout=1800).returncode
        if status != 0 or not (tmp / "result.json").exists():
            sys.exit("vLLM failed:\n" + (tmp / "vllm.log").read_text()[-4000:])
        ours, theirs = json.loads((tmp / "result.json").read_text())["jobs"]
        log = (tmp / "vllm.log").read_text()
        print("vLLM's backends:", ", ".join(sorted({b for b in ("TransformersForCausalLM", "LlamaForCausalLM") if f"Resolved architecture: {b}" in log}))
              or "(not in the log)")
        tokens = sum(len(p) for p in prompts) + args.requests * args.new_tokens
        # The first run warms up (memory, thread pools); the median of the rest is reported.
        ours_rate = statistics.median(tokens / s for s in ours["runs"][1:])
        theirs_rate = statistics.median(tokens / s for s in theirs["runs"][1:])
        same = [o["tokens"] for o in ours["outputs"]] == [o["tokens"] for o in theirs["outputs"]]
        print(f"model: D={D} H={SIZE['H']} F={F} V={V} L={L}; {args.requests} concurrent requests of {len(prompts[0])} to "
              f"{len(prompts[-1])} prompt tokens, {args.new_tokens} new each, greedy, float32, median of {args.runs}")
        print(f"{'':48}{'tokens/s':>10}")
        print(f"{'vLLM, ShapeScript --hf (Transformers backend)':48}{ours_rate:10.1f}")
        print(f"{'vLLM, LlamaForCausalLM (native)':48}{theirs_rate:10.1f}")
        print(f"ratio ShapeScript / native: {ours_rate / theirs_rate:.3f} (aim: >= 0.8); same tokens: {same}")


if __name__ == "__main__":
    main()

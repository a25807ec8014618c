"""Grouped-query attention: fewer key/value heads than query heads (Llama 3, Mistral, TinyLlama).

examples/llama_gqa.ss has 4 query heads over 2 key/value heads of 64. Its forward, compiled, must
compute what a reference written here in plain PyTorch computes with each key/value head repeated
for its group of query heads (`repeat_interleave`, not the generated code); and the model must
export to a .pt2 (`--fn forward`), to a Hugging Face folder with `num_key_value_heads` that
transformers generates from and vLLM serves, and to a GGUF `llama` with `head_count_kv` that real
llama.cpp runs to the same logits.

    $SHAPESCRIPT_VENV/bin/python -m pytest tests/python/test_gqa.py
"""
from __future__ import annotations

import json
import math
import os
import subprocess

import pytest

import torch
import torch.nn.functional as F

import shapescript
from conftest import EXAMPLES, ROOT as REPO, VLLM_VENV, cli as run, llama_cpp_logits

SOURCE = EXAMPLES / "llama_gqa.ss"
VLLM_PYTHON = VLLM_VENV / "bin" / "python"

D, H, HKV, DH, F_, V, L, P = 256, 4, 2, 64, 512, 512, 2, 256


def compiled_model():
    compiled = shapescript.compile(SOURCE)
    return compiled, compiled.LlamaGqa


def unit_weights(seed):
    """Weights of unit scale, so that every head and every part changes the logits."""
    compiled, model_class = compiled_model()
    generator = torch.Generator().manual_seed(seed)
    weights = {}
    for name, value in model_class().state_dict().items():
        if value.dim() == 1 or name.endswith("norm"):
            weights[name] = 1 + 0.2 * torch.randn(value.shape, generator=generator)
        else:
            weights[name] = torch.randn(value.shape, generator=generator) / value.shape[-1] ** 0.5
    return weights


def shapescript_forward(weights, ids):
    compiled, model_class = compiled_model()
    model = model_class()
    model.load_state_dict(weights)
    with torch.no_grad():
        return compiled.forward(model, ids, torch.arange(ids.shape[1]).expand(ids.shape[0], -1))


def reference_forward(w, ids):
    """Llama with grouped-query attention in plain PyTorch: each key/value head repeated for the
    H / Hkv query heads of its group, then ordinary causal attention."""
    b, n = ids.shape
    pos = torch.arange(n).expand(b, n)
    inv_freq = torch.exp(-2 * torch.arange(DH // 2) / DH * math.log(10000))
    angle = pos[:, None, :, None] * inv_freq  # [b 1 n DH/2]

    def rope(x):  # pairs (i, i + DH/2)
        x1, x2 = x[..., : DH // 2], x[..., DH // 2:]
        return torch.cat([x1 * angle.cos() - x2 * angle.sin(), x2 * angle.cos() + x1 * angle.sin()], dim=-1)

    def rms(x, weight):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5) * weight

    x = w["wte"][ids]
    for layer in range(L):
        a = rms(x, w["attn_norm"][layer])
        q = rope((a @ w["wq"][layer].T).view(b, n, H, DH).transpose(1, 2))
        k = rope((a @ w["wk"][layer].T).view(b, n, HKV, DH).transpose(1, 2))
        v = (a @ w["wv"][layer].T).view(b, n, HKV, DH).transpose(1, 2)
        k, v = k.repeat_interleave(H // HKV, dim=1), v.repeat_interleave(H // HKV, dim=1)
        scores = (q @ k.transpose(-1, -2)) / math.sqrt(DH)
        scores = scores.masked_fill(~torch.ones(n, n, dtype=torch.bool).tril(), float("-inf"))
        att = (scores.softmax(-1) @ v).transpose(1, 2).reshape(b, n, D)
        x = x + att @ w["wo"][layer].T
        f = rms(x, w["ffn_norm"][layer])
        x = x + (F.silu(f @ w["w_gate"][layer].T) * (f @ w["w_up"][layer].T)) @ w["w_down"][layer].T
    return rms(x, w["norm"]) @ w["w_out"].T


def test_the_example_checks_clean_and_its_keys_are_narrower():
    result = run("check", str(SOURCE), cwd=REPO)
    assert (result.returncode, result.stdout) == (0, "")
    _, model_class = compiled_model()
    shapes = {k: tuple(v.shape) for k, v in model_class().state_dict().items()}
    assert shapes["wq"] == (L, D, D) and shapes["wk"] == shapes["wv"] == (L, HKV * DH, D)


def test_the_compiled_forward_is_attention_over_repeated_key_value_heads():
    python = shapescript._extension().generate_python(str(SOURCE), None)["python"]
    calls = [line for line in python.splitlines() if "F.scaled_dot_product_attention(" in line]
    # `attention` as written, and its version for the block loop with rope's tables prepared once (emit/hoist.h).
    assert len(calls) == 2 and all(c.rstrip().endswith(", is_causal=True, enable_gqa=True)") for c in calls), calls
    weights = unit_weights(seed=1)
    ids = torch.randint(0, V, (2, 11), generator=torch.Generator().manual_seed(2))
    expected = reference_forward(weights, ids)
    torch.testing.assert_close(shapescript_forward(weights, ids), expected, rtol=1e-5, atol=1e-5)
    # The installed torch takes enable_gqa, and it is the repetition (checked apart from the model too).
    q, k, v = torch.randn(2, H, 5, DH), torch.randn(2, HKV, 5, DH), torch.randn(2, HKV, 5, DH)
    torch.testing.assert_close(
        F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True),
        F.scaled_dot_product_attention(q, k.repeat_interleave(2, 1), v.repeat_interleave(2, 1), is_causal=True))


def test_export_pt2_holds_the_weights_and_computes_the_forward(tmp_path):
    weights = unit_weights(seed=3)
    torch.save(weights, tmp_path / "ckpt.pt")
    result = run("export", str(SOURCE), "--fn", "forward", "-o", "gqa.pt2", "--weights", "ckpt.pt", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "wrote gqa.pt2: `forward`, dynamic ids[0] = b, ids[1] = n, pos[0] = b, pos[1] = n\n"
    program = torch.export.load(str(tmp_path / "gqa.pt2"))
    for b, n in [(1, 7), (3, 4)]:
        ids = torch.randint(0, V, (b, n))
        pos = torch.arange(n).expand(b, n)
        with torch.no_grad():
            torch.testing.assert_close(program.module()(ids, pos), reference_forward(weights, ids), rtol=1e-5, atol=1e-5)


@pytest.fixture(scope="module")
def hf_folder(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("gqa_hf")
    weights = unit_weights(seed=4)
    torch.save(weights, tmp_path / "ckpt.pt")
    result = run("export", str(SOURCE), "--hf", "gqa_hf", "--vllm", "--weights", "ckpt.pt", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "wrote gqa_hf: 2 attention layers of 4 heads, vocabulary of 512; vLLM can serve it\n"
    return tmp_path / "gqa_hf", weights


def test_hf_config_has_fewer_key_value_heads(hf_folder):
    folder, _ = hf_folder
    config = json.loads((folder / "config.json").read_text())
    assert (config["num_attention_heads"], config["num_key_value_heads"], config["head_dim"]) == (H, HKV, DH)
    assert config["hidden_size"] == D and config["num_hidden_layers"] == L


def test_hf_model_gives_the_logits_and_generates_with_a_narrow_cache(hf_folder):
    import transformers

    folder, weights = hf_folder
    model = transformers.AutoModelForCausalLM.from_pretrained(str(folder), trust_remote_code=True, dtype=torch.float32).eval()
    ids = torch.randint(0, V, (2, 9), generator=torch.Generator().manual_seed(5))
    with torch.no_grad():
        torch.testing.assert_close(model(input_ids=ids).logits, reference_forward(weights, ids), rtol=1e-4, atol=1e-4)
        prompt = ids[:1, :5]
        cached = model.generate(prompt, max_new_tokens=6, do_sample=False, return_dict_in_generate=True)
        greedy = prompt
        for _ in range(6):
            greedy = torch.cat([greedy, reference_forward(weights, greedy)[:, -1:].argmax(-1)], dim=1)
    assert cached.sequences.tolist() == greedy.tolist()
    # The cache holds Hkv heads per layer, not H: what grouped-query attention saves.
    layer0 = cached.past_key_values.layers[0] if hasattr(cached.past_key_values, "layers") else cached.past_key_values[0]
    keys = layer0.keys if hasattr(layer0, "keys") and torch.is_tensor(layer0.keys) else layer0[0]
    assert keys.shape[1] == HKV


VLLM_SCRIPT = r"""
import json, sys
from vllm import LLM, SamplingParams
from vllm.inputs import TokensPrompt
llm = LLM(model=sys.argv[1], trust_remote_code=True, model_impl="transformers", skip_tokenizer_init=True,
          dtype="float32", max_model_len=128, enforce_eager=True)
prompts = [TokensPrompt(prompt_token_ids=p) for p in json.loads(sys.argv[2])]
outputs = llm.generate(prompts, SamplingParams(max_tokens=6, temperature=0.0, ignore_eos=True, detokenize=False))
print("TOKENS " + json.dumps([list(o.outputs[0].token_ids) for o in outputs]))
"""


def test_vllm_serves_it_with_its_own_paged_attention(hf_folder, tmp_path):
    assert VLLM_PYTHON.exists(), f"no vLLM venv at {VLLM_VENV}: run scripts/engines.sh"
    folder, weights = hf_folder
    prompts = [[17, 42, 99, 7, 300], [5, 6, 7]]
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    env.update(VLLM_TARGET_DEVICE="cpu", VLLM_CPU_KVCACHE_SPACE="1", OMP_NUM_THREADS="2")
    result = subprocess.run([str(VLLM_PYTHON), "-c", VLLM_SCRIPT, str(folder), json.dumps(prompts)], capture_output=True,
                            text=True, env=env, cwd=tmp_path, timeout=900)
    lines = [line for line in result.stdout.splitlines() if line.startswith("TOKENS ")]
    assert result.returncode == 0 and lines, result.stdout[-3000:] + result.stderr[-6000:]
    served = json.loads(lines[-1][len("TOKENS "):])
    for prompt, tokens in zip(prompts, served):
        greedy = torch.tensor([prompt])
        with torch.no_grad():
            for _ in range(6):
                greedy = torch.cat([greedy, reference_forward(weights, greedy)[:, -1:].argmax(-1)], dim=1)
        assert tokens == greedy[0, len(prompt):].tolist()


def test_gguf_is_llama_with_fewer_key_value_heads_and_llama_cpp_agrees(tmp_path):
    import gguf  # a missing package fails the test: never a skip counted as a pass

    weights = unit_weights(seed=6)
    torch.save(weights, tmp_path / "ckpt.pt")
    out = tmp_path / "gqa.gguf"
    result = run("export", str(SOURCE), "--gguf", str(out), "--weights", str(tmp_path / "ckpt.pt"), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"wrote {out}: llama.cpp's `llama`, 2 blocks of 4 heads, vocabulary of 512, 21 tensors, ")
    meta = {k: f.contents() for k, f in gguf.GGUFReader(str(out)).fields.items() if not k.startswith("tokenizer.ggml.")}
    assert (meta["llama.attention.head_count"], meta["llama.attention.head_count_kv"], meta["llama.rope.dimension_count"]) == (H, HKV, DH)
    names = {t.name: tuple(int(s) for s in t.shape) for t in gguf.GGUFReader(str(out)).tensors}
    assert names["blk.0.attn_k.weight"] == (D, HKV * DH)  # ggml's order: {n_embd, n_embd_k_gqa}

    ids = torch.randint(3, V, (1, 24), generator=torch.Generator().manual_seed(11))
    expected = shapescript_forward(weights, ids)[0].numpy()
    torch.testing.assert_close(torch.from_numpy(expected), reference_forward(weights, ids)[0], rtol=1e-5, atol=1e-5)
    import numpy as np

    got = llama_cpp_logits(out, ids[0].tolist())
    relative = np.abs(got - expected).max() / np.abs(expected).max()
    print(f"llama_gqa.ss: largest difference {relative:.2e} of the largest logit")
    assert relative < 1e-5

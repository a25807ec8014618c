"""The README's flow for each architecture of examples/ that issue 19 names, with transformers' own
class as the reference: a tiny random model of the example's sizes (eager attention, float32, norm
weights and biases moved away from their initial values so that a swapped norm shows), saved with
`save_pretrained`, read by the real `shapescript import-weights` (which computes the mapping: no
names are written here), then the compiled forward's logits on two rows longer than any window, and
8 greedy tokens from a prompt, against transformers' own; and where llama.cpp has the
architecture, the same checkpoint written with `--gguf` and run by real llama.cpp.

    $SHAPESCRIPT_VENV/bin/python -m pytest tests/python/test_model_zoo.py
"""
from __future__ import annotations

import json
import sys

import pytest
import torch
import transformers

import shapescript
from conftest import EXAMPLES, ROOT, VLLM_VENV, cli, llama_cpp_module
from test_verify import ENGINES, table

sys.path.insert(0, str(ROOT / "bench"))
from model_zoo import ZOO, Zoo, reference_model, settings  # noqa: E402,F401  (the zoo's one table, shared with bench/)

# float32: the largest difference may be this fraction of the largest logit.
TOLERANCE = 1e-4
NEW_TOKENS = 8


def relative_difference(got, expected) -> float:
    return ((got - expected).abs().max() / expected.abs().max()).item()


_IMPORTED = {}


def import_zoo(name, tmp_path_factory):
    """(zoo, transformers' model, the compiled module, the imported ShapeScript model, the import's
    folder, holding hf/ and ckpt.pt), once per architecture."""
    if name not in _IMPORTED:
        zoo = ZOO[name]
        model = reference_model(zoo, seed=23)
        folder = tmp_path_factory.mktemp(name)
        model.save_pretrained(folder / "hf", safe_serialization=True)
        result = cli("import-weights", zoo.source, "hf", "-o", "ckpt.pt", cwd=folder)
        assert result.returncode == 0, result.stdout + result.stderr
        compiled = shapescript.compile(zoo.source)
        ours = getattr(compiled, zoo.model)()
        ours.load_state_dict(torch.load(folder / "ckpt.pt", weights_only=True))
        _IMPORTED[name] = zoo, model, compiled, ours.eval(), folder
    return _IMPORTED[name]


@pytest.fixture(scope="module", params=sorted(ZOO))
def imported(request, tmp_path_factory):
    return import_zoo(request.param, tmp_path_factory)


def our_logits(compiled, ours, ids):
    with torch.no_grad():
        return compiled.forward(ours, ids, torch.arange(ids.shape[1]).expand(ids.shape[0], -1))


def test_logits_match_transformers(imported):
    zoo, model, compiled, ours, _ = imported
    ids = torch.randint(0, zoo.V, (2, zoo.sequence), generator=torch.Generator().manual_seed(5))
    with torch.no_grad():
        expected = model(input_ids=ids).logits
    difference = relative_difference(our_logits(compiled, ours, ids), expected)
    print(f"{zoo.example}: largest difference {difference:.2e} of the largest logit")
    assert difference < TOLERANCE


def test_greedy_tokens_match_transformers(imported):
    zoo, model, compiled, ours, _ = imported
    prompt = torch.randint(0, zoo.V, (1, 12), generator=torch.Generator().manual_seed(7))
    with torch.no_grad():
        # No end-of-sequence token: transformers would stop at it, or (min_new_tokens) never choose it.
        greedy = transformers.GenerationConfig(do_sample=False, max_new_tokens=NEW_TOKENS, eos_token_id=None, pad_token_id=0)
        expected = model.generate(prompt, generation_config=greedy)[0, prompt.shape[1]:].tolist()
    assert len(expected) == NEW_TOKENS
    ids = prompt
    for _ in range(NEW_TOKENS):
        ids = torch.cat([ids, our_logits(compiled, ours, ids)[:, -1].argmax(-1, keepdim=True)], dim=1)
    assert ids[0, prompt.shape[1]:].tolist() == expected


def test_verify_agrees_on_qwen3(tmp_path_factory):
    """`shapescript verify` with the imported checkpoint: the .pt2, the AOTInductor package, the
    --hf folder in transformers and in real vLLM, and the --gguf file in llama.cpp (its `qwen3`), agree
    with the compiled forward (minutes: AOTInductor compiles C++, vLLM starts)."""
    assert (VLLM_VENV / "bin" / "python").exists(), f"no vLLM venv at {VLLM_VENV}: run scripts/engines.sh"
    zoo, _, _, _, folder = import_zoo("qwen3", tmp_path_factory)
    result = cli("verify", zoo.source, "--weights", "ckpt.pt", "--artifacts", "art", cwd=folder, timeout=1500)
    print(result.stdout, result.stderr)
    assert result.returncode == 0, result.stdout + result.stderr
    rows = table(result.stdout)
    for engine in ENGINES:
        difference, _, outcome = rows[engine]
        assert outcome.startswith("pass") and float(difference) < TOLERANCE, (engine, rows[engine])


def test_hf_folder_with_experts_gives_transformers_logits(tmp_path_factory):
    """examples/mixtral.ss's `--hf` folder, with the imported weights, loaded by transformers
    (trust_remote_code): its sparse experts (packed into each layer's `experts` module, the weights
    joined into gate_up_proj) give MixtralForCausalLM's logits."""
    zoo, model, _, _, folder = import_zoo("mixtral", tmp_path_factory)
    result = cli("export", zoo.source, "--hf", "hf_out", "--weights", "ckpt.pt", cwd=folder)
    assert result.returncode == 0, result.stdout + result.stderr
    ours = transformers.AutoModelForCausalLM.from_pretrained(str(folder / "hf_out"), trust_remote_code=True, dtype=torch.float32).eval()
    ids = torch.randint(0, zoo.V, (2, zoo.sequence), generator=torch.Generator().manual_seed(5))
    with torch.no_grad():
        assert relative_difference(ours(input_ids=ids).logits, model(input_ids=ids).logits) < TOLERANCE


# llama.cpp's architecture for each example (the runtime finds it by computing; nothing names it):
# Llama 3.1's scaled rotary frequencies are llama's `rope_freqs` tensor.
# StarCoder2's window is written as wide as its positions, since llama.cpp's starcoder2 has none,
# and compared over 16 tokens, where transformers' window of 16 masks nothing.
GGUF = {"qwen3": "qwen3", "phi": "phi2", "starcoder2": "starcoder2", "olmo2": "olmo2", "cohere": "command-r", "gemma2": "gemma2",
        "gpt_neox": "gptneox", "llama31": "llama", "gemma3": "gemma3", "mixtral": "llama", "qwen3_moe": "qwen3moe",
        "bloom": "bloom", "cohere2": "cohere2", "qwen2_moe": "qwen2moe", "gpt_oss": "gpt-oss", "deepseek_v3": "deepseek2"}


def gguf_source(name, zoo, folder):
    """The example `--gguf` exports, and how many tokens to compare: StarCoder2's window is written
    as wide as its positions (llama.cpp's starcoder2 has none), compared over 16 tokens, where
    transformers' window of 16 masks nothing."""
    if name != "starcoder2":
        return zoo.source, zoo.sequence
    source = folder / "starcoder2_unwindowed.ss"
    source.write_text(zoo.source.read_text().replace("dim W   = 16", "dim W   = 64"))
    return source, 16


def llama_cpp_run(path, ids, new_tokens):
    """Real llama.cpp on a GGUF file: the logits at every position of `ids` ([n V]), then greedy tokens."""
    import numpy as np

    llm = llama_cpp_module().Llama(model_path=str(path), n_ctx=64, n_batch=64, logits_all=True, type_k=0, type_v=0,
                                   flash_attn=False, verbose=False, n_threads=2)
    llm.reset()
    llm.eval(list(ids))
    logits = np.array(llm.scores[: llm.n_tokens])
    tokens = []
    for _ in range(new_tokens):
        tokens.append(int(np.argmax(llm.scores[llm.n_tokens - 1])))
        llm.eval([tokens[-1]])
    return torch.from_numpy(logits), tokens


@pytest.mark.parametrize("name", sorted(GGUF))
def test_gguf_runs_in_llama_cpp_as_transformers(name, tmp_path_factory):
    """import-weights, `--gguf --weights`, then real llama.cpp: logits within the tolerance verify
    uses of transformers' own, and the same greedy tokens."""
    from shapescript.runtime.verify import GGUF_TOLERANCE

    zoo, model, _, _, folder = import_zoo(name, tmp_path_factory)
    source, sequence = gguf_source(name, zoo, folder)
    result = cli("export", source, "--gguf", f"{name}.gguf", "--weights", "ckpt.pt", cwd=folder)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"llama.cpp's `{GGUF[name]}`" in result.stdout, result.stdout
    if name == "llama31":
        import gguf

        assert "rope_freqs.weight" in {t.name for t in gguf.GGUFReader(str(folder / f"{name}.gguf")).tensors}
    # Token ids past llama.cpp's default vocabulary's control tokens (<unk>, <s>, </s>).
    ids = torch.randint(3, zoo.V, (1, sequence), generator=torch.Generator().manual_seed(5))
    with torch.no_grad():
        expected = model(input_ids=ids).logits[0]
        greedy = transformers.GenerationConfig(do_sample=False, max_new_tokens=NEW_TOKENS, eos_token_id=None, pad_token_id=0)
        prompt = ids[:, :8]
        expected_tokens = model.generate(prompt, generation_config=greedy)[0, prompt.shape[1]:].tolist()
    got, _ = llama_cpp_run(folder / f"{name}.gguf", ids[0].tolist(), 0)
    difference = relative_difference(got, expected)
    print(f"{zoo.example} as llama.cpp's {GGUF[name]}: largest difference {difference:.2e} of the largest logit")
    assert difference < GGUF_TOLERANCE.get(GGUF[name], TOLERANCE)
    _, tokens = llama_cpp_run(folder / f"{name}.gguf", prompt[0].tolist(), NEW_TOKENS)
    assert tokens == expected_tokens


# Keys the converter writes from the config that llama.cpp doesn't read for the architecture: with
# experts in every block, qwen3moe's `feed_forward_length` is the config's dense size, which no
# tensor has (llama.cpp sizes the experts by `expert_feed_forward_length`); BLOOM's config has no
# length, and the converter writes its width as `context_length`, which is only llama.cpp's default
# context (ALiBi has no trained length): ours is the model's P.
UNREAD_KEYS = {"qwen3moe": {"feed_forward_length"}, "bloom": {"context_length"}}


@pytest.mark.parametrize("name", sorted(GGUF))
def test_gguf_has_the_tensors_llama_cpp_converter_writes(name, tmp_path_factory):
    """`--gguf` of the imported weights against llama.cpp's own convert_hf_to_gguf.py on the same
    save_pretrained folder: the same architecture, tensors (names, shapes, values), the keys both
    write, and the same logits in real llama.cpp. (Gemma 3's and Cohere 2's converters write no
    `sliding_window_pattern`, so llama.cpp slides five blocks in six (Gemma 3) or three in four
    (Cohere 2); ours says which blocks the model slides: its logits differ from the converter's
    file, which computes another model, and are compared with transformers' in the test above.)"""
    import io
    import re

    import numpy as np
    import sentencepiece
    from shapescript.runtime.verify import GGUF_TOLERANCE
    from test_convert_compare import converter_gguf, fields, tensors

    zoo, _, _, _, folder = import_zoo(name, tmp_path_factory)
    ours = folder / f"{name}.gguf"
    if not ours.exists():
        result = cli("export", gguf_source(name, zoo, folder)[0], "--gguf", ours.name, "--weights", "ckpt.pt", cwd=folder)
        assert result.returncode == 0, result.stdout + result.stderr
    # The converter needs a vocabulary of the model's size: SentencePiece on the docs' letters (128 pieces
    # leave no room for byte fallback).
    text = [re.sub(r"[^a-z ]", "", line.lower()) for path in sorted((EXAMPLES.parent / "docs").glob("*.md"))
            for line in path.read_text().splitlines() if line.strip()]
    model = io.BytesIO()
    sentencepiece.SentencePieceTrainer.train(sentence_iterator=iter(text), model_writer=model, vocab_size=zoo.V, model_type="bpe",
                                             character_coverage=0.98, minloglevel=2)
    (folder / "hf" / "tokenizer.model").write_bytes(model.getvalue())
    theirs = converter_gguf(folder)
    ours_fields, theirs_fields = fields(ours), fields(theirs)
    arch = ours_fields["general.architecture"]
    assert theirs_fields["general.architecture"] == arch == GGUF[name]
    # Every key the converter writes (its head sizes aside, which llama.cpp's llama computes as ours leaves them).
    missing = {key for key in theirs_fields if key.startswith(arch + ".") and key not in ours_fields}
    # ...and a rotary scaling of none (command-r's), which is llama.cpp's default.
    defaults = {f"{arch}.rope.scaling.type"} if theirs_fields.get(f"{arch}.rope.scaling.type") == "none" else set()
    assert missing <= {f"{arch}.attention.key_length", f"{arch}.attention.value_length", *defaults}, missing
    unread = {f"{arch}.{key}" for key in UNREAD_KEYS.get(arch, ())}
    for key in sorted(set(ours_fields) & set(theirs_fields) - unread):
        if key.startswith(arch + "."):
            assert ours_fields[key] == pytest.approx(theirs_fields[key], rel=1e-6), key
    ours_tensors, theirs_tensors = tensors(ours), tensors(theirs)
    assert {n: tuple(t.shape) for n, t in ours_tensors.items()} == {n: tuple(t.shape) for n, t in theirs_tensors.items()}
    for n, t in ours_tensors.items():
        assert np.allclose(np.asarray(t.data), np.asarray(theirs_tensors[n].data), atol=1e-6), n
    if name in ("gemma3", "cohere2"):  # the converter's file slides other blocks than the model (docstring)
        return
    ids = torch.randint(3, zoo.V, (zoo.sequence,), generator=torch.Generator().manual_seed(5)).tolist()
    from_ours, from_theirs = llama_cpp_run(ours, ids, 0)[0], llama_cpp_run(theirs, ids, 0)[0]
    assert relative_difference(from_ours, from_theirs) < GGUF_TOLERANCE.get(arch, TOLERANCE)


@pytest.mark.parametrize("name", ["gemma3", "cohere2"])
def test_hf_folder_with_attention_per_block_gives_transformers_logits(name, tmp_path_factory):
    """examples/gemma3.ss's and cohere2.ss's `--hf` folders: the config says which blocks slide as
    transformers' does (`layer_types`, `sliding_window`), and the modeling file, which computes each
    block's rotary embedding as the block says (Gemma 3: its base; Cohere 2: none on full attention),
    gives transformers' logits past the window."""
    import json

    zoo, model, _, _, folder = import_zoo(name, tmp_path_factory)
    result = cli("export", zoo.source, "--hf", "hf_out", "--weights", "ckpt.pt", cwd=folder)
    assert result.returncode == 0, result.stdout + result.stderr
    config = json.loads((folder / "hf_out" / "config.json").read_text())
    assert (config["layer_types"], config["sliding_window"]) == (model.config.layer_types, model.config.sliding_window)
    ours = transformers.AutoModelForCausalLM.from_pretrained(str(folder / "hf_out"), trust_remote_code=True, dtype=torch.float32).eval()
    ids = torch.randint(0, zoo.V, (2, zoo.sequence), generator=torch.Generator().manual_seed(5))
    with torch.no_grad():
        assert relative_difference(ours(input_ids=ids).logits, model(input_ids=ids).logits) < TOLERANCE


# The zoo's architectures whose `--hf --vllm` folders real vLLM serves: all in one engine process,
# since each start costs about a minute.
VLLM_SERVED = ["mixtral", "gemma3", "cohere2", "gpt_oss", "deepseek_v3"]


@pytest.fixture(scope="module")
def vllm_zoo(tmp_path_factory):
    """Each VLLM_SERVED architecture's `--hf --vllm` folder of its imported weights, served by one real
    vLLM process: {name: (zoo, transformers' model, folder, prompts, vLLM's answer)}, and vLLM's log."""
    from test_vllm import run_engine

    assert (VLLM_VENV / "bin" / "python").exists(), f"no vLLM venv at {VLLM_VENV}: run scripts/engines.sh"
    jobs, cases = [], {}
    for name in VLLM_SERVED:
        zoo, model, _, _, folder = import_zoo(name, tmp_path_factory)
        result = cli("export", zoo.source, "--hf", "hf_vllm", "--vllm", "--weights", "ckpt.pt", cwd=folder)
        assert result.returncode == 0, (name, result.stdout + result.stderr)
        prompts = [torch.randint(0, zoo.V, (n,), generator=torch.Generator().manual_seed(n)).tolist() for n in (1, 7, 20)]
        jobs.append({"model": str(folder / "hf_vllm"), "vocab": zoo.V, "max_model_len": 128, "prompts": prompts,
                     "max_tokens": NEW_TOKENS, "logprobs": True, "max_num_seqs": len(prompts)})
        cases[name] = (zoo, model, folder, prompts)
    served, log = run_engine(jobs, tmp_path_factory.mktemp("zoo_vllm"), timeout=1500)
    return {name: (*cases[name], answer) for name, answer in zip(cases, served)}, log


@pytest.mark.parametrize("name", VLLM_SERVED)
def test_vllm_serves_the_folder_as_transformers(name, vllm_zoo):
    """Real vLLM's Transformers backend on the `--hf --vllm` folder (per-block windows and rotary
    bases, attention sinks through `s_aux`, experts, a dense first block before sparse ones): greedy
    tokens and log-probabilities of transformers' own class, prompt and generated."""
    zoo, model, _, prompts, served = vllm_zoo[0][name]
    assert "error" not in served, served.get("error")
    for prompt, output in zip(prompts, served["outputs"]):
        # Greedy by hand: generate() would stop at the config's end-of-sequence token, vLLM (ignore_eos) doesn't.
        expected = torch.tensor([prompt])
        with torch.no_grad():
            for _ in range(NEW_TOKENS):
                expected = torch.cat([expected, model(input_ids=expected).logits[:, -1].argmax(-1, keepdim=True)], dim=1)
            expected = expected[0]
            logprobs = torch.log_softmax(model(input_ids=expected[None]).logits[0], dim=-1)
        assert output["tokens"] == expected[len(prompt):].tolist()
        # vLLM's log-probabilities of every position after the first, prompt then generated.
        got = torch.tensor(output["prompt_logprobs"][1:] + output["logprobs"])
        assert (got - logprobs[: len(got)]).abs().max().item() < 1e-3


def test_llama_server_serves_every_gguf_greedily_as_transformers(tmp_path_factory):
    """One llama-server (router mode: `--models-dir`, each file a model by its name) serves the --gguf
    file of every architecture above, and decodes each prompt greedily to transformers' tokens."""
    import subprocess
    import urllib.request

    from conftest import free_port, llama_cpp_dir, wait_until_healthy

    served = tmp_path_factory.mktemp("served")
    prompts = {}
    for name in sorted(GGUF):
        zoo, model, _, _, folder = import_zoo(name, tmp_path_factory)
        out = folder / f"{name}.gguf"
        if not out.exists():  # written by test_gguf_runs_in_llama_cpp_as_transformers when it ran first
            source = zoo.source
            if name == "starcoder2":
                source = folder / "starcoder2_unwindowed.ss"
                source.write_text(zoo.source.read_text().replace("dim W   = 16", "dim W   = 64"))
            result = cli("export", source, "--gguf", out.name, "--weights", "ckpt.pt", cwd=folder)
            assert result.returncode == 0, result.stdout + result.stderr
        (served / out.name).symlink_to(out)
        prompt = torch.randint(3, zoo.V, (1, zoo.sequence), generator=torch.Generator().manual_seed(5))[:, :8]
        greedy = transformers.GenerationConfig(do_sample=False, max_new_tokens=NEW_TOKENS, eos_token_id=None, pad_token_id=0)
        with torch.no_grad():
            prompts[name] = prompt[0].tolist(), model.generate(prompt, generation_config=greedy)[0, 8:].tolist()
    port = free_port()
    log_path = served / "server.log"
    with open(log_path, "w") as log:
        server = subprocess.Popen([str(llama_cpp_dir() / "bin" / "llama-server"), "--models-dir", str(served), "--models-max", "1",
                                   "--host", "127.0.0.1", "--port", str(port), "-c", "64", "-t", "2", "-np", "1", "--no-webui"],
                                  stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_until_healthy(f"http://127.0.0.1:{port}/health", server, log_path, 60, "llama-server")
        for name, (prompt, expected) in prompts.items():
            body = json.dumps({"model": name, "prompt": prompt, "n_predict": NEW_TOKENS, "temperature": 0, "top_k": 1,
                               "return_tokens": True, "ignore_eos": True, "cache_prompt": False}).encode()
            request = urllib.request.Request(f"http://127.0.0.1:{port}/completion", data=body, headers={"Content-Type": "application/json"})
            with urllib.request.urlopen(request, timeout=120) as r:
                answer = json.loads(r.read())
            assert answer["tokens"] == expected, (name, answer["tokens"], expected)
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_hf_folder_packs_experts_that_vllm_fuses(vllm_zoo):
    """examples/mixtral.ss's `--hf --vllm` folder gives each block's sparse layer a child `experts` of
    packed 3-D weights (transformers' MixtralExperts layout), routed in the layer as the source says;
    real vLLM's Transformers backend replaces it with its FusedMoE (its answers are compared with
    MixtralForCausalLM's by test_vllm_serves_the_folder_as_transformers)."""
    served, log = vllm_zoo
    zoo, _, folder, _, _ = served["mixtral"]
    config = json.loads((folder / "hf_vllm" / "config.json").read_text())
    assert (config["num_local_experts"], config["num_experts_per_tok"], config["moe_intermediate_size"]) == (4, 2, 128)
    ours = transformers.AutoModelForCausalLM.from_pretrained(str(folder / "hf_vllm"), trust_remote_code=True, dtype=torch.float32).eval()
    shapes = {name: tuple(p.shape) for name, p in ours.model.layers[0].sparse_experts.experts.named_parameters()}
    assert shapes == {"gate_up_proj": (4, 256, 64), "down_proj": (4, 64, 128)}
    assert "Fused: experts (ShapeScriptExperts)" in log, log[-3000:]


def test_vllm_caches_the_latent_of_deepseeks_attention(vllm_zoo):
    """examples/deepseek_v3.ss's attention is multi-head latent attention (model/latent_attention.h): its
    `--hf --vllm` folder caches the latent and shared rotary key part (`expand_kv` makes every head's keys
    and values from them), and says their sizes in config.json, so real vLLM serves it with its MLA layer,
    whose cache holds C + Dr = 576 numbers a token and layer (its answers are compared with
    DeepseekV3ForCausalLM's by test_vllm_serves_the_folder_as_transformers)."""
    served, log = vllm_zoo
    _, _, folder, _, _ = served["deepseek_v3"]
    config = json.loads((folder / "hf_vllm" / "config.json").read_text())
    assert (config["kv_lora_rank"], config["qk_rope_head_dim"], config["qk_nope_head_dim"], config["v_head_dim"]) == (512, 64, 64, 16)
    assert "Fused: attention (Attention) -> MLAAttention" in log, log[-3000:]


def test_hf_folder_with_block_runs_gives_transformers_logits(tmp_path_factory):
    """examples/deepseek_v3.ss's params of the dense first block are stacked over `Ld` blocks and
    those of the sparse ones over the `Lm` after them (`m.w_router[(l - Ld) as Index[Lm]]`): the `--hf`
    folder gives each layer only the weights its block reads, as transformers' DeepseekV3 builds
    its first `first_k_dense_replace` layers dense, and gives DeepseekV3ForCausalLM's logits."""
    zoo, model, _, _, folder = import_zoo("deepseek_v3", tmp_path_factory)
    result = cli("export", zoo.source, "--hf", "hf_out", "--weights", "ckpt.pt", cwd=folder)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 attention layers of 2 heads (latent attention: its cache holds 576 numbers a token and layer)" in result.stdout
    ours = transformers.AutoModelForCausalLM.from_pretrained(str(folder / "hf_out"), trust_remote_code=True, dtype=torch.float32).eval()
    children = [{name for name, _ in layer.named_children()} for layer in ours.model.layers]
    assert "swiglu" in children[0] and "sparse_experts" not in children[0], children
    assert "sparse_experts" in children[1] and "swiglu" not in children[1], children
    ids = torch.randint(0, zoo.V, (2, zoo.sequence), generator=torch.Generator().manual_seed(5))
    with torch.no_grad():
        assert relative_difference(ours(input_ids=ids).logits, model(input_ids=ids).logits) < TOLERANCE
    # Multi-head latent attention: the cache holds each token's latent and shared rotary key part, one
    # "head" of C and of Dr, not each head's keys and values; generating from it gives transformers' tokens.
    greedy = transformers.GenerationConfig(do_sample=False, max_new_tokens=NEW_TOKENS, eos_token_id=None, pad_token_id=0)
    with torch.no_grad():
        out = ours.generate(ids[:1, :8], generation_config=greedy, return_dict_in_generate=True)
        expected = model.generate(ids[:1, :8], generation_config=greedy)
    assert out.sequences.tolist() == expected.tolist()
    cached = out.past_key_values.layers[0]
    assert (tuple(cached.keys.shape), tuple(cached.values.shape)) == ((1, 1, 8 + NEW_TOKENS - 1, 512), (1, 1, 8 + NEW_TOKENS - 1, 64))


def test_hf_refuses_slices_that_no_block_reads(tmp_path):
    """`m.w_b[0]` in every sparse block reads one of `w_b`'s three slices: the blocks share it (each
    layer holds a copy: test_hf_export.py's test_weights_that_blocks_share_are_a_copy_in_each_layer),
    but the folder would lose the other two, and `--hf` says where the param is (the golden
    block_runs_hf.ss reads `m.w_b[s]`, s = (l - La) as Index[Lb])."""
    source = (EXAMPLES.parent / "tests" / "golden" / "emit" / "block_runs_hf.ss").read_text()
    (tmp_path / "runs.ss").write_text(source.replace("m.w_b[s]", "m.w_b[0]"))
    result = cli("export", "runs.ss", "--hf", "runs_hf", cwd=tmp_path)
    assert result.returncode == 1
    assert "runs.ss:20:11: `m.w_b` has 3 slices along its first axis but the blocks read only slice 0; the folder would lose the others" in result.stderr, result.stderr

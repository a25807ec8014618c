"""Fidelity against transformers' own implementations: the architectures people bring.

For each of examples/llama_gqa.ss, qwen2.ss, mistral.ss, mistral_sliding.ss, gemma.ss and phi3.ss,
transformers' model class (LlamaForCausalLM, Qwen2ForCausalLM, MistralForCausalLM with and without
a sliding window, GemmaForCausalLM, Phi3ForCausalLM) with a small random config of the example's
dims is the reference: code no one here wrote. Its weights, mapped onto the ShapeScript
model's parameters, must give the same logits in the compiled forward (`shapescript.compile`), in
the `.pt2` that `shapescript export --fn forward --weights` writes, and in the `--hf --vllm` folder
loaded by transformers with trust_remote_code.

The mapping is written here by name, apart from `shapescript import-weights` (which computes it,
tested in test_import_weights.py), so that each checks the other. Both sides store a linear
layer's weight as [out in] and stack nothing, so each block's tensor goes to its layer's slice of
a stacked parameter; transformers' rotary embedding pairs (i, i + head_dim/2) (rotate_half), as
the examples' `rope` does, so q and k need no permutation.

    $SHAPESCRIPT_VENV/bin/python -m pytest tests/python/test_architectures.py
"""
from __future__ import annotations

from dataclasses import dataclass

import pytest

import torch
import transformers

import shapescript
from conftest import ROOT as REPO, cli as run, llama_cpp_logits

# float32: the largest difference may be this fraction of the largest logit.
TOLERANCE = 1e-4


@dataclass
class Architecture:
    example: str
    model: str  # the ShapeScript model's name
    hf_class: str
    config_class: str
    D: int
    H: int
    Hkv: int
    F: int
    V: int
    L: int
    P: int
    rope_theta: float
    eps: float
    qkv_bias: bool
    tied: bool = False  # the output layer is the embedding table (no `w_out`)
    norm_offset: float = 0.0  # the norm multiplies by (offset + w): Gemma stores w around 0
    config_kwargs: tuple = ()  # the class's own settings, as (key, value) pairs
    # llama.cpp's GELU reads a float16 table (as for gpt2 in test_gguf_export.py): 1e-3 where a model uses it.
    llama_cpp_tolerance: float = TOLERANCE
    # Each block's tensors by the ShapeScript field they fill, where they aren't a Llama's (fused projections).
    layer_names: tuple = ()
    # The tokens each batch row compares: past a sliding window's width where there is one.
    sequence: int = 13

    @property
    def source(self):
        return REPO / "examples" / self.example

    def config(self):
        config_class = getattr(transformers, self.config_class)
        kwargs = dict(vocab_size=self.V, hidden_size=self.D, intermediate_size=self.F, num_hidden_layers=self.L,
                      num_attention_heads=self.H, num_key_value_heads=self.Hkv, head_dim=self.D // self.H,
                      max_position_embeddings=self.P, rms_norm_eps=self.eps, hidden_act="silu", tie_word_embeddings=self.tied,
                      rope_parameters={"rope_type": "default", "rope_theta": self.rope_theta})
        if self.config_class == "LlamaConfig":
            kwargs.update(attention_bias=False, mlp_bias=False)
        if self.config_class == "MistralConfig":
            kwargs.update(sliding_window=None)
        if self.config_class == "Qwen2Config":
            kwargs.update(use_sliding_window=False)
        kwargs.update(self.config_kwargs)
        config = config_class(**kwargs)
        config._attn_implementation = "eager"  # the plainest of transformers' attentions
        return config


ARCHITECTURES = {
    "llama_gqa": Architecture("llama_gqa.ss", "LlamaGqa", "LlamaForCausalLM", "LlamaConfig",
                              D=256, H=4, Hkv=2, F=512, V=512, L=2, P=256, rope_theta=10000.0, eps=1e-5, qkv_bias=False),
    "qwen2": Architecture("qwen2.ss", "Qwen2", "Qwen2ForCausalLM", "Qwen2Config",
                          D=256, H=4, Hkv=2, F=512, V=512, L=2, P=256, rope_theta=1e6, eps=1e-6, qkv_bias=True),
    "mistral": Architecture("mistral.ss", "Mistral", "MistralForCausalLM", "MistralConfig",
                            D=256, H=4, Hkv=1, F=768, V=512, L=2, P=256, rope_theta=1e6, eps=1e-5, qkv_bias=False),
    # Mistral 7B v0.1's sliding window, 32 of 256 positions here: 80 tokens are compared, so most see it.
    "mistral_sliding": Architecture("mistral_sliding.ss", "MistralSliding", "MistralForCausalLM", "MistralConfig",
                                    D=256, H=4, Hkv=1, F=768, V=512, L=2, P=256, rope_theta=1e6, eps=1e-5, qkv_bias=False,
                                    config_kwargs=(("sliding_window", 32),), sequence=80),
    "gemma": Architecture("gemma.ss", "Gemma", "GemmaForCausalLM", "GemmaConfig",
                          D=256, H=4, Hkv=1, F=768, V=512, L=2, P=256, rope_theta=10000.0, eps=1e-6, qkv_bias=False,
                          tied=True, norm_offset=1.0, config_kwargs=(("hidden_act", "gelu_pytorch_tanh"),), llama_cpp_tolerance=1e-3),
    "phi3": Architecture("phi3.ss", "Phi3", "Phi3ForCausalLM", "Phi3Config",
                         D=256, H=4, Hkv=4, F=512, V=512, L=2, P=256, rope_theta=10000.0, eps=1e-5, qkv_bias=False,
                         config_kwargs=(("pad_token_id", None), ("bos_token_id", 1), ("eos_token_id", 2),
                                        ("original_max_position_embeddings", 256)),
                         layer_names=(("attn_norm", "input_layernorm.weight"), ("w_qkv", "self_attn.qkv_proj.weight"),
                                      ("wo", "self_attn.o_proj.weight"), ("ffn_norm", "post_attention_layernorm.weight"),
                                      ("w_gate_up", "mlp.gate_up_proj.weight"), ("w_down", "mlp.down_proj.weight"))),
}


def reference_model(arch: Architecture, seed: int):
    """transformers' class with weights of enough spread that every part moves the logits:
    matrices of unit scale per input, norms around 1, biases around 0 but not 0."""
    torch.manual_seed(seed)
    model = getattr(transformers, arch.hf_class)(arch.config()).eval()
    with torch.no_grad():
        for name, value in model.named_parameters():
            if name.endswith("norm.weight"):
                value.copy_(1 - arch.norm_offset + 0.2 * torch.randn_like(value))
            elif name.endswith(".bias"):
                value.copy_(0.5 * torch.randn_like(value))
            else:
                value.copy_(torch.randn_like(value) / value.shape[-1] ** 0.5)
    # The config's rotary base is the one in use (transformers has renamed where it lives before).
    inv_freq = model.model.rotary_emb.inv_freq
    dh = arch.D // arch.H
    torch.testing.assert_close(inv_freq[1].item(), arch.rope_theta ** (-2 / dh), rtol=1e-5, atol=0)
    return model


def shapescript_weights(arch: Architecture, model) -> dict:
    """transformers' state dict as the ShapeScript model's parameters, by name; per-layer tensors stacked."""
    state = model.state_dict()
    layer = "model.layers.{}."
    per_layer = dict(arch.layer_names) or {
        "attn_norm": "input_layernorm.weight", "wq": "self_attn.q_proj.weight", "wk": "self_attn.k_proj.weight",
        "wv": "self_attn.v_proj.weight", "wo": "self_attn.o_proj.weight", "ffn_norm": "post_attention_layernorm.weight",
        "w_gate": "mlp.gate_proj.weight", "w_up": "mlp.up_proj.weight", "w_down": "mlp.down_proj.weight"}
    if arch.qkv_bias:
        per_layer.update(bq="self_attn.q_proj.bias", bk="self_attn.k_proj.bias", bv="self_attn.v_proj.bias")
    weights = {"wte": state["model.embed_tokens.weight"], "norm": state["model.norm.weight"]}
    if not arch.tied:
        weights["w_out"] = state["lm_head.weight"]
    for ours, theirs in per_layer.items():
        weights[ours] = torch.stack([state[layer.format(i) + theirs] for i in range(arch.L)])
    # Every tensor of transformers' model is used, and once: nothing of it is left unmapped.
    used = {"model.embed_tokens.weight", "model.norm.weight", "lm_head.weight"}
    used |= {layer.format(i) + theirs for theirs in per_layer.values() for i in range(arch.L)}
    if arch.tied:  # the same tensor as the embedding's, when the state names it at all
        assert "lm_head.weight" not in state or state["lm_head.weight"].data_ptr() == state["model.embed_tokens.weight"].data_ptr()
        if "lm_head.weight" not in state:
            used.discard("lm_head.weight")
    assert used == set(state), sorted(set(state) ^ used)
    return {name: value.detach().clone().contiguous() for name, value in weights.items()}


def relative_difference(got, expected):
    return ((got - expected).abs().max() / expected.abs().max()).item()


@pytest.fixture(scope="module", params=sorted(ARCHITECTURES))
def case(request, tmp_path_factory):
    arch = ARCHITECTURES[request.param]
    model = reference_model(arch, seed=7)
    weights = shapescript_weights(arch, model)
    tmp_path = tmp_path_factory.mktemp(request.param)
    torch.save(weights, tmp_path / "ckpt.pt")
    ids = torch.randint(0, arch.V, (2, arch.sequence), generator=torch.Generator().manual_seed(3))
    with torch.no_grad():
        expected = model(input_ids=ids).logits
    return arch, weights, tmp_path, ids, expected


def test_the_example_checks_clean(case):
    arch, *_ = case
    result = run("check", str(arch.source), cwd=REPO)
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")


WINDOWED = sorted(name for name, arch in ARCHITECTURES.items() if dict(arch.config_kwargs).get("sliding_window"))


@pytest.mark.parametrize("name", WINDOWED)
def test_a_sliding_window_changes_the_reference(name):
    """The comparisons below can tell a sliding window from none: on the tokens they compare,
    transformers' model without its window gives other logits."""
    arch = ARCHITECTURES[name]
    assert dict(arch.config_kwargs)["sliding_window"] < arch.sequence
    ids = torch.randint(0, arch.V, (2, arch.sequence), generator=torch.Generator().manual_seed(3))
    unwindowed = Architecture(**{**arch.__dict__, "config_kwargs": ()})
    with torch.no_grad():
        windowed_logits = reference_model(arch, seed=7)(input_ids=ids).logits
        full_logits = reference_model(unwindowed, seed=7)(input_ids=ids).logits
    assert relative_difference(full_logits, windowed_logits) > 100 * TOLERANCE


def test_compiled_forward_matches_transformers(case):
    arch, weights, _, ids, expected = case
    compiled = shapescript.compile(arch.source)
    model = getattr(compiled, arch.model)()
    model.load_state_dict(weights)
    with torch.no_grad():
        got = compiled.forward(model, ids, torch.arange(ids.shape[1]).expand(ids.shape[0], -1))
    difference = relative_difference(got, expected)
    print(f"{arch.example} compiled: largest difference {difference:.2e} of the largest logit")
    assert difference < TOLERANCE


def test_pt2_matches_transformers(case):
    arch, _, tmp_path, ids, expected = case
    result = run("export", str(arch.source), "--fn", "forward", "-o", "model.pt2", "--weights", "ckpt.pt", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    program = torch.export.load(str(tmp_path / "model.pt2"))
    with torch.no_grad():
        got = program.module()(ids, torch.arange(ids.shape[1]).expand(ids.shape[0], -1))
    difference = relative_difference(got, expected)
    print(f"{arch.example} .pt2: largest difference {difference:.2e} of the largest logit")
    assert difference < TOLERANCE


def test_hf_folder_matches_transformers(case):
    arch, _, tmp_path, ids, expected = case
    result = run("export", str(arch.source), "--hf", "hf", "--vllm", "--weights", "ckpt.pt", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.endswith("vLLM can serve it\n"), result.stdout
    model = transformers.AutoModelForCausalLM.from_pretrained(str(tmp_path / "hf"), trust_remote_code=True, dtype=torch.float32).eval()
    assert (model.config.num_attention_heads, model.config.num_key_value_heads) == (arch.H, arch.Hkv)
    with torch.no_grad():
        got = model(input_ids=ids).logits
    difference = relative_difference(got, expected)
    print(f"{arch.example} --hf: largest difference {difference:.2e} of the largest logit")
    assert difference < TOLERANCE
    assert getattr(model.config, "sliding_window", None) == dict(arch.config_kwargs).get("sliding_window")


def test_hf_folder_generates_as_transformers(case):
    """generate() through the folder's key-value cache, one token a step, past a sliding window's
    width: the same greedy tokens as transformers' class on the same weights."""
    arch, _, tmp_path, ids, _ = case
    folder = tmp_path / "hf"
    if not folder.exists():
        result = run("export", str(arch.source), "--hf", "hf", "--vllm", "--weights", "ckpt.pt", cwd=tmp_path)
        assert result.returncode == 0, result.stderr
    ours = transformers.AutoModelForCausalLM.from_pretrained(str(folder), trust_remote_code=True, dtype=torch.float32).eval()
    theirs = reference_model(arch, seed=7)
    prompt = ids[:1, :30]
    settings = dict(max_new_tokens=24, do_sample=False, pad_token_id=0, eos_token_id=None)
    with torch.no_grad():
        assert ours.generate(prompt, **settings).tolist() == theirs.generate(prompt, **settings).tolist()


# None: llama.cpp has no architecture for it, and --gguf says why.
GGUF_ARCHITECTURE = {"llama_gqa": "llama", "mistral": "llama", "qwen2": "qwen2", "gemma": "gemma", "phi3": "phi3", "mistral_sliding": None}


def test_gguf_runs_in_llama_cpp_to_transformers_logits(case):
    """`--gguf` finds llama.cpp's architecture by its computed search (Qwen2's biases make it
    `qwen2`, which rotates pairs (i, i + hd/2) as transformers does), and real llama.cpp agrees."""
    import gguf  # a missing package fails the test: never a skip counted as a pass

    arch, _, tmp_path, ids, expected = case
    out = tmp_path / "model.gguf"
    result = run("export", str(arch.source), "--gguf", str(out), "--weights", "ckpt.pt", cwd=tmp_path)
    name = GGUF_ARCHITECTURE[arch.example.removesuffix(".ss")]
    if name is None:  # llama.cpp's Llama attends to every earlier position: refused, and nothing written
        assert result.returncode == 1, result.stdout
        assert (f"error: `{arch.model}` isn't an architecture llama.cpp has: its attention sees only the last "
                f"{dict(arch.config_kwargs)['sliding_window']} positions of its {arch.P} (`window=`)") in result.stderr
        assert not out.exists()
        return
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"wrote {out}: llama.cpp's `{name}`, {arch.L} blocks of {arch.H} heads"), result.stdout
    meta = {k: f.contents() for k, f in gguf.GGUFReader(str(out)).fields.items() if not k.startswith("tokenizer.ggml.")}
    assert (meta[f"{name}.attention.head_count"], meta[f"{name}.attention.head_count_kv"]) == (arch.H, arch.Hkv)
    assert meta[f"{name}.rope.freq_base"] == pytest.approx(arch.rope_theta)

    got = torch.from_numpy(llama_cpp_logits(out, ids[0].tolist())).float()
    difference = relative_difference(got, expected[0])
    print(f"{arch.example} llama.cpp: largest difference {difference:.2e} of the largest logit")
    assert difference < arch.llama_cpp_tolerance

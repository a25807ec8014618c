"""`shapescript import-weights FILE.ss HF_DIR -o ckpt.pt`: a Hugging Face folder saved by
transformers' own `save_pretrained`, read onto the model's params by the import's search, for each
architecture of test_architectures.py (those added there join here), a sharded save, GPT-2's Conv1D
weights and fused qkv onto examples/gpt2.ss, a folder that doesn't fit, and `--weights HF_DIR` on
`export --gguf` and `--hf`.

    $SHAPESCRIPT_VENV/bin/python -m pytest tests/python/test_import_weights.py
"""
from __future__ import annotations

import re

import pytest
import torch
import transformers

import shapescript
from conftest import ROOT as REPO, cli as run, llama_cpp_logits
from test_architectures import ARCHITECTURES, TOLERANCE, reference_model, relative_difference, shapescript_weights


def compiled_logits(source, model_name, weights, ids):
    compiled = shapescript.compile(source)
    model = getattr(compiled, model_name)()
    model.load_state_dict(weights)
    with torch.no_grad():
        return compiled.forward(model, ids, torch.arange(ids.shape[1]).expand(ids.shape[0], -1))


@pytest.fixture(scope="module", params=sorted(ARCHITECTURES))
def saved(request, tmp_path_factory):
    arch = ARCHITECTURES[request.param]
    model = reference_model(arch, seed=11)
    folder = tmp_path_factory.mktemp(request.param) / "hf"
    model.save_pretrained(folder)
    # As many tokens as test_architectures.py compares: past a sliding window's width.
    ids = torch.randint(0, arch.V, (2, arch.sequence), generator=torch.Generator().manual_seed(5))
    with torch.no_grad():
        expected = model(input_ids=ids).logits
    return arch, model, folder, ids, expected


def test_import_round_trips(saved):
    arch, model, folder, ids, expected = saved
    out = folder.parent / "ckpt.pt"
    result = run("import-weights", arch.source, folder, "-o", out, cwd=folder.parent)
    assert result.returncode == 0, result.stderr
    from safetensors import safe_open

    saved_tensors = sum(len(safe_open(str(f), "pt").keys()) for f in folder.glob("*.safetensors"))  # a tied output isn't saved
    assert result.stdout.startswith(f"wrote {out}: {saved_tensors} tensors of {folder} into"), result.stdout
    # The tokens compared reach past a sliding window; the runner-up lost by far more than the tolerance.
    window = dict(arch.config_kwargs).get("sliding_window")
    said = re.search(r"\ncompared 2 rows of (\d+) tokens in \d+ forwards?; the runner-up \(.+\) differed by (\S+) of the largest logit\n$",
                     result.stdout)
    assert said and int(said[1]) > (window or 8) and float(said[2]) > 100 * TOLERANCE, result.stdout
    got = torch.load(out, weights_only=True)
    want = shapescript_weights(arch, model)
    assert sorted(got) == sorted(want)
    for name in want:
        assert torch.equal(got[name], want[name]), name
    difference = relative_difference(compiled_logits(arch.source, arch.model, got, ids), expected)
    print(f"{arch.example} imported: largest difference {difference:.2e} of the largest logit")
    assert difference < TOLERANCE


def test_sharded_folder_imports(tmp_path):
    arch = ARCHITECTURES["llama_gqa"]
    model = reference_model(arch, seed=13)
    model.save_pretrained(tmp_path / "hf", max_shard_size="300KB")
    shards = sorted(p.name for p in (tmp_path / "hf").glob("*.safetensors"))
    assert len(shards) > 2 and (tmp_path / "hf" / "model.safetensors.index.json").exists(), shards
    result = run("import-weights", arch.source, "hf", "-o", "ckpt.pt", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert f"from {len(shards)} safetensors files" in result.stderr
    got = torch.load(tmp_path / "ckpt.pt", weights_only=True)
    want = shapescript_weights(arch, model)
    assert all(torch.equal(got[name], want[name]) for name in want)


def test_gpt2_conv1d_weights_and_fused_qkv(tmp_path):
    """transformers' GPT2LMHeadModel stores Conv1D weights [in out] and ties lm_head to wte: the
    import must transpose them; q, k and v stay fused as examples/gpt2.ss's w_qkv."""
    config = transformers.GPT2Config(vocab_size=500, n_positions=128, n_embd=64, n_layer=2, n_head=4,
                                     activation_function="gelu_new", bos_token_id=0, eos_token_id=0)
    config._attn_implementation = "eager"
    torch.manual_seed(2)
    model = transformers.GPT2LMHeadModel(config).eval()
    with torch.no_grad():
        for name, value in model.named_parameters():
            if name.endswith(("ln_1.weight", "ln_2.weight", "ln_f.weight")):
                value.copy_(1 + 0.2 * torch.randn_like(value))
            elif name.endswith(".bias"):
                value.copy_(0.5 * torch.randn_like(value))
            else:
                value.copy_(torch.randn_like(value) / value.shape[0] ** 0.5)
    model.save_pretrained(tmp_path / "hf")
    source = REPO / "examples" / "gpt2.ss"
    result = run("import-weights", source, "hf", "-o", "ckpt.pt", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "transposed 4" in result.stdout, result.stdout
    got = torch.load(tmp_path / "ckpt.pt", weights_only=True)
    state = model.state_dict()
    layer = "transformer.h.{}."
    stack = lambda key, t=False: torch.stack([state[layer.format(i) + key].T if t else state[layer.format(i) + key] for i in range(2)])
    assert torch.equal(got["wte"], state["transformer.wte.weight"]) and torch.equal(got["wpe"], state["transformer.wpe.weight"])
    assert torch.equal(got["w_qkv"], stack("attn.c_attn.weight", True)) and torch.equal(got["b_qkv"], stack("attn.c_attn.bias"))
    assert torch.equal(got["w_o"], stack("attn.c_proj.weight", True)) and torch.equal(got["w_down"], stack("mlp.c_proj.weight", True))
    ids = torch.randint(0, 500, (2, 9), generator=torch.Generator().manual_seed(5))
    with torch.no_grad():
        expected = model(input_ids=ids).logits
    assert relative_difference(compiled_logits(source, "Gpt2", got, ids), expected) < TOLERANCE


def test_a_folder_that_does_not_fit_fails_and_writes_nothing(saved):
    arch, _, folder, _, _ = saved
    keep = folder.parent / "keep.pt"
    keep.write_bytes(b"an earlier checkpoint")
    # Another architecture's folder (other widths): no reading explains some params.
    other = next(a for name, a in sorted(ARCHITECTURES.items()) if a.F != arch.F)
    result = run("import-weights", other.source, folder, "-o", keep, cwd=folder.parent)
    assert result.returncode == 1, result.stdout
    # It names the params no reading explains, with their shapes (which ones depends on the pair).
    assert re.search(r"error: no tensor of `[^`]+` fits `\w+` \[\d+ \d+", result.stderr), result.stderr
    # Each with the line of the .ss that declares it.
    assert re.search(r"fits `\w+` \[[\d ]+\] \(\w+\.ss:\d+:\d+\)", result.stderr), result.stderr
    assert keep.read_bytes() == b"an earlier checkpoint"
    result = run("import-weights", arch.source, folder.parent / "nowhere", "-o", keep, cwd=folder.parent)
    assert result.returncode == 2 and "no such folder" in result.stderr, result.stderr
    assert keep.read_bytes() == b"an earlier checkpoint"


def test_a_folder_that_computes_otherwise_fails(tmp_path):
    """Every shape fits but the folder's rotary base isn't the model's: the numbers say no."""
    arch = ARCHITECTURES["llama_gqa"]
    model = reference_model(arch, seed=17)
    model.config.rope_parameters = {"rope_type": "default", "rope_theta": 500.0}
    model.save_pretrained(tmp_path / "hf")
    (tmp_path / "ckpt.pt").write_bytes(b"kept")
    result = run("import-weights", arch.source, "hf", "-o", "ckpt.pt", cwd=tmp_path)
    assert result.returncode == 1, result.stdout
    assert re.search(r"no reading of `hf` gives transformers' logits in `forward` \(\w+\.ss:\d+:\d+\)", result.stderr), result.stderr
    assert (tmp_path / "ckpt.pt").read_bytes() == b"kept"


def test_export_weights_from_a_folder(tmp_path):
    """`--weights HF_DIR` runs the same import inside export: --gguf (run by llama.cpp), --hf and .pt2."""
    arch = ARCHITECTURES["qwen2"]
    model = reference_model(arch, seed=19)
    folder = tmp_path / "hf"
    model.save_pretrained(folder)
    ids = torch.randint(0, arch.V, (2, 9), generator=torch.Generator().manual_seed(5))
    with torch.no_grad():
        expected = model(input_ids=ids).logits
    out = folder.parent / "model.gguf"
    result = run("export", arch.source, "--gguf", out, "--weights", folder, cwd=folder.parent)
    assert result.returncode == 0, result.stderr
    got = torch.from_numpy(llama_cpp_logits(out, ids[0].tolist())).float()
    assert relative_difference(got, expected[0]) < TOLERANCE
    result = run("export", arch.source, "--hf", "exported", "--weights", folder, cwd=folder.parent)
    assert result.returncode == 0, result.stderr
    hf = transformers.AutoModelForCausalLM.from_pretrained(str(folder.parent / "exported"), trust_remote_code=True, dtype=torch.float32).eval()
    with torch.no_grad():
        assert relative_difference(hf(input_ids=ids).logits, expected) < TOLERANCE
    result = run("export", arch.source, "--fn", "forward", "-o", "model.pt2", "--weights", folder, cwd=folder.parent)
    assert result.returncode == 0, result.stderr
    with torch.no_grad():
        got = torch.export.load(str(folder.parent / "model.pt2")).module()(ids, torch.arange(ids.shape[1]).expand(ids.shape[0], -1))
    assert relative_difference(got, expected) < TOLERANCE


def test_the_python_api_imports_a_folder_without_touching_sys_path(tmp_path):
    """`shapescript.export(..., weights=HF_DIR)` runs the import in the caller's process: the
    runtime's modules come from the package, so neither sys.path nor a user's own `script` or
    `weights` module is touched (run in a fresh Python, where the user's `script` is loaded first)."""
    import subprocess
    import sys

    arch = ARCHITECTURES["qwen2"]
    model = reference_model(arch, seed=19)
    model.save_pretrained(tmp_path / "hf")
    (tmp_path / "user").mkdir()
    (tmp_path / "user" / "script.py").write_text("MINE = True\n")
    code = f"""
import sys
sys.path.insert(0, {str(tmp_path / "user")!r})
import script
import shapescript
before = list(sys.path)
shapescript.export({str(arch.source)!r}, "forward", {str(tmp_path / "model.pt2")!r}, weights={str(tmp_path / "hf")!r})
assert sys.path == before, [p for p in sys.path if p not in before]
assert sys.modules["script"].MINE and not {{"weights", "import_weights"}} & set(sys.modules)
print("imported in process")
"""
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip().endswith("imported in process")
    assert (tmp_path / "model.pt2").exists()


# --- readings no example needs as it is: fused splits, concatenations, the rotary row order --------

SMALL = dict(D=64, H=2, Hkv=2, F=192, V=512, L=2, P=256, rope_theta=10000.0, eps=1e-5, qkv_bias=False)
PHI3_CONFIG = (("pad_token_id", None), ("bos_token_id", 1), ("eos_token_id", 2), ("original_max_position_embeddings", 256))


def with_small_dims(example: str) -> str:
    """An example's text with examples/llama.ss's dims (D=64, H=2, F=192)."""
    text = (REPO / "examples" / example).read_text()
    return re.sub(r"(?m)^dim (D|H|F)( *)= \d+", lambda m: f"dim {m[1]}{m[2]}= {SMALL[m[1]]}", text)


def import_folder(tmp_path, model, source_text, name):
    model.save_pretrained(tmp_path / "hf")
    (tmp_path / "model.ss").write_text(source_text)
    result = run("import-weights", "model.ss", "hf", "-o", "ckpt.pt", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    ids = torch.randint(0, SMALL["V"], (2, 9), generator=torch.Generator().manual_seed(6))
    with torch.no_grad():
        expected = model(input_ids=ids).logits
    got = torch.load(tmp_path / "ckpt.pt", weights_only=True)
    assert relative_difference(compiled_logits(tmp_path / "model.ss", name, got, ids), expected) < TOLERANCE
    return got, {k: v.detach() for k, v in model.state_dict().items()}, result.stdout


def stacked(state, key):
    return torch.stack([state[f"model.layers.{i}.{key}"] for i in range(SMALL["L"])])


def test_a_fused_folder_is_split_onto_separate_params(tmp_path):
    """Phi-3's fused qkv_proj and gate_up_proj onto examples/llama.ss's wq, wk, wv, w_gate and w_up."""
    from test_architectures import Architecture

    arch = Architecture("llama.ss", "Llama", "Phi3ForCausalLM", "Phi3Config", **SMALL, config_kwargs=PHI3_CONFIG)
    got, state, said = import_folder(tmp_path, reference_model(arch, seed=8), (REPO / "examples" / "llama.ss").read_text(), "Llama")
    qkv, gate_up = stacked(state, "self_attn.qkv_proj.weight"), stacked(state, "mlp.gate_up_proj.weight")
    assert [torch.equal(got[p], qkv[:, 64 * i:64 * (i + 1)]) for i, p in enumerate(["wq", "wk", "wv"])] == [True] * 3
    assert torch.equal(got["w_gate"], gate_up[:, :192]) and torch.equal(got["w_up"], gate_up[:, 192:])
    assert "split" in said, said


def test_a_grouped_query_fused_folder_is_split_by_its_heads(tmp_path):
    """Phi-3-medium's qkv_proj holds q, k and v of H, Hkv and Hkv heads: unequal parts, split by the
    config's head counts onto examples/llama_gqa.ss's wq, wk and wv (4 query heads over 2)."""
    from test_architectures import Architecture

    arch = Architecture("llama_gqa.ss", "LlamaGqa", "Phi3ForCausalLM", "Phi3Config", D=256, H=4, Hkv=2, F=512, V=512, L=2, P=256,
                        rope_theta=10000.0, eps=1e-5, qkv_bias=False, config_kwargs=PHI3_CONFIG)
    got, state, said = import_folder(tmp_path, reference_model(arch, seed=12), (REPO / "examples" / "llama_gqa.ss").read_text(), "LlamaGqa")
    qkv = stacked(state, "self_attn.qkv_proj.weight")
    assert qkv.shape[1] == (4 + 2 + 2) * 64
    assert torch.equal(got["wq"], qkv[:, :256]) and torch.equal(got["wk"], qkv[:, 256:384]) and torch.equal(got["wv"], qkv[:, 384:])
    assert "(split 5, stacked 9)" in said, said  # q, k, v and gate, up: no tensor counted as tied


def test_separate_projections_are_joined_onto_a_fused_param(tmp_path):
    """A Llama's q/k/v and gate/up projections onto examples/phi3.ss's fused w_qkv and w_gate_up."""
    from test_architectures import Architecture

    arch = Architecture("phi3.ss", "Phi3", "LlamaForCausalLM", "LlamaConfig", **SMALL,
                        config_kwargs=(("attention_bias", False), ("mlp_bias", False)))
    got, state, said = import_folder(tmp_path, reference_model(arch, seed=9), with_small_dims("phi3.ss"), "Phi3")
    q, k, v = (stacked(state, f"self_attn.{p}_proj.weight") for p in "qkv")
    assert torch.equal(got["w_qkv"], torch.cat([q, k, v], dim=1))
    assert torch.equal(got["w_gate_up"], torch.cat([stacked(state, "mlp.gate_proj.weight"), stacked(state, "mlp.up_proj.weight")], dim=1))
    assert "concatenated" in said or "joined" in said, said


def test_q_and_k_rows_are_reordered_for_a_model_rotating_adjacent_pairs(tmp_path):
    """transformers' Llama rotates pairs (i, i + hd/2); a ShapeScript Llama rotating (2i, 2i+1) reads
    the same q and k projections with each head's rows interleaved: the logits decide which."""
    from test_architectures import Architecture

    llama = (REPO / "examples" / "llama.ss").read_text()
    pairs = llama.replace("x1, x2 = x |> split(b H n (2 h) -> b H n h)", "x1, x2 = x |> split(b H n (h 2) -> b H n h)").replace(
        "    return concat(x1 * cos(angle) - x2 * sin(angle), x2 * cos(angle) + x1 * sin(angle), over=h)",
        "    y = concat(x1 * cos(angle) - x2 * sin(angle), x2 * cos(angle) + x1 * sin(angle), over=h)\n"
        "    return y |> rearrange(b H n (2 h) -> b H n (h 2))")
    assert pairs.count("(h 2)") == 2
    arch = Architecture("llama.ss", "Llama", "LlamaForCausalLM", "LlamaConfig", **SMALL,
                        config_kwargs=(("attention_bias", False), ("mlp_bias", False)))
    got, state, said = import_folder(tmp_path, reference_model(arch, seed=10), pairs, "Llama")
    q = stacked(state, "self_attn.q_proj.weight")
    interleaved = q.reshape(2, 2, 2, 16, 64).transpose(2, 3).reshape(q.shape)  # [L, heads, (2, hd/2)] -> [L, heads, (hd/2, 2)]
    assert torch.equal(got["wq"], interleaved) and not torch.equal(got["wq"], q)
    assert torch.equal(got["wv"], stacked(state, "self_attn.v_proj.weight"))  # v isn't rotated: as stored


# --- windows, experts and numbered slots ----------------------------------------------------------

TINY = dict(D=64, H=2, F=96, V=128, P=64)


def with_dims(example: str, **dims) -> str:
    """An example's text with some of its `dim` lines given other sizes."""
    text = (REPO / "examples" / example).read_text()
    for name, size in dims.items():
        text, found = re.subn(rf"(?m)^dim {name}( *)= \d+", lambda m: f"dim {name}{m[1]}= {size}", text)
        assert found == 1, name
    return text


def test_a_sliding_window_the_program_lacks_is_seen(tmp_path):
    """A Mistral folder with a sliding window of 16: onto examples/mistral.ss (no window) the logits
    agree on the first 16 positions only, and the import fails saying so; onto the windowed example
    with a window of 16 it imports. 2 rows of 32 tokens are compared (8 saw no window)."""
    from test_architectures import Architecture

    arch = Architecture("mistral.ss", "Mistral", "MistralForCausalLM", "MistralConfig", D=64, H=2, Hkv=1, F=96, V=128, L=2, P=64,
                        rope_theta=1e6, eps=1e-5, qkv_bias=False, config_kwargs=(("sliding_window", 16),))
    reference_model(arch, seed=23).save_pretrained(tmp_path / "hf")
    (tmp_path / "plain.ss").write_text(with_dims("mistral.ss", **TINY))
    (tmp_path / "windowed.ss").write_text(with_dims("mistral_sliding.ss", **TINY, W=16))
    (tmp_path / "ckpt.pt").write_bytes(b"kept")
    result = run("import-weights", "plain.ss", "hf", "-o", "ckpt.pt", cwd=tmp_path)
    assert result.returncode == 1, result.stdout
    assert "comparing logits on 2 rows of 32 tokens (sliding window 16)" in result.stderr, result.stderr
    assert re.search(r"differs by \d\.\d\de-0[0-2] of the largest logit, from position 16 on \(the first 16 agree\): the folder's "
                     r"config has a sliding window of 16 \(`sliding_window`\), the program's attention none", result.stderr), result.stderr
    assert (tmp_path / "ckpt.pt").read_bytes() == b"kept"
    result = run("import-weights", "windowed.ss", "hf", "-o", "ckpt.pt", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "compared 2 rows of 32 tokens in " in result.stdout, result.stdout


def mixtral_folder(folder, experts, seed):
    """transformers' Mixtral routing every token to all its experts (top-k of k = E: the softmax)."""
    config = transformers.MixtralConfig(vocab_size=128, hidden_size=64, intermediate_size=96, num_hidden_layers=2, num_attention_heads=2,
                                        num_key_value_heads=1, head_dim=32, num_local_experts=experts, num_experts_per_tok=experts,
                                        max_position_embeddings=64, rms_norm_eps=1e-5, sliding_window=None,
                                        rope_parameters={"rope_type": "default", "rope_theta": 1e6})
    config._attn_implementation = "eager"
    torch.manual_seed(seed)
    model = transformers.MixtralForCausalLM(config).eval()
    with torch.no_grad():
        for name, value in model.named_parameters():
            value.copy_(1 + 0.2 * torch.randn_like(value) if name.endswith("norm.weight") else torch.randn_like(value) / value.shape[-1] ** 0.5)
    model.save_pretrained(folder)
    from safetensors.torch import load_file

    return model, load_file(str(folder / "model.safetensors"))


def mixtral_source(experts, model, fields, feed_forward, forward):
    """examples/mistral.ss at Mixtral's tiny sizes with a feed-forward of `experts` experts."""
    text = with_dims("mistral.ss", **TINY).replace("dim V ", f"dim E   = {experts}\ndim V ")
    text = text.replace("model Mistral:", f"model {model}:").replace("fn forward(m: Mistral,", f"fn forward(m: {model},")
    text = re.sub(r"(?m)^    param w_gate:.*\n    param w_up:.*\n    param w_down:.*\n", fields, text)
    text = text[:text.index("## SwiGLU")] + feed_forward + text[text.index("fn forward"):]
    return re.sub(r"(?m)^        x = x \+ feed_forward\(.*\n", forward, text)


def test_experts_stacked_over_layer_and_expert(tmp_path):
    """Mixtral's experts.M.w1 of every layer N onto one [L E F D] param: stacked over two levels."""
    model, state = mixtral_folder(tmp_path / "hf", experts=2, seed=21)
    source = mixtral_source(2, "Mixtral", "".join(f"    param {p}: {s} = normal(std=0.02)\n" for p, s in (
        ("w_router", "[L E D]"), ("w_gate", "[L E F D]"), ("w_up", "[L E F D]"), ("w_down", "[L E D F]"))), """\
## Every expert on every token, weighted by a softmax over the router's logits.
fn dense_experts(x: [b n D], router: [E D], w_gate: [E F D], w_up: [E F D], w_down: [E D F]) -> [b n D]:
    weights = softmax(linear(x, router), over=E)
    gate = einsum(x, w_gate: b n D, E F D -> b n E F)
    up = einsum(x, w_up: b n D, E F D -> b n E F)
    out = einsum(silu(gate) * up, w_down: b n E F, E D F -> b n E D)
    return einsum(weights, out: b n E, b n E D -> b n D)

""", "        x = x + dense_experts(rms_norm(x, over=D, weight=m.ffn_norm[l]), m.w_router[l], m.w_gate[l], m.w_up[l], m.w_down[l])\n")
    (tmp_path / "model.ss").write_text(source)
    result = run("import-weights", "model.ss", "hf", "-o", "ckpt.pt", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    got = torch.load(tmp_path / "ckpt.pt", weights_only=True)
    expert = lambda w: torch.stack([torch.stack([state[f"model.layers.{n}.block_sparse_moe.experts.{e}.{w}.weight"] for e in range(2)])
                                    for n in range(2)])
    assert torch.equal(got["w_gate"], expert("w1")) and torch.equal(got["w_up"], expert("w3")) and torch.equal(got["w_down"], expert("w2"))
    ids = torch.randint(0, 128, (2, 20), generator=torch.Generator().manual_seed(6))
    with torch.no_grad():
        expected = model(input_ids=ids).logits
    assert relative_difference(compiled_logits(tmp_path / "model.ss", "Mixtral", got, ids), expected) < TOLERANCE


def test_fused_experts_are_split_onto_gate_and_up(tmp_path):
    """transformers 5 holds a Mixtral's experts fused, `mlp.experts.gate_up_proj` [E 2F D] and
    `down_proj` [E D F] per layer; a folder stored that way (as its state_dict is, not as
    save_pretrained converts it back) imports onto examples/mixtral.ss's [L E F D] w_gate and w_up,
    each layer's 3-D tensor split along its rows."""
    from safetensors.torch import save_file

    model, _ = mixtral_folder(tmp_path / "hf", experts=4, seed=24)
    state = {k: v.detach().contiguous() for k, v in model.state_dict().items()}
    assert state["model.layers.0.mlp.experts.gate_up_proj"].shape == (4, 192, 64)
    save_file(state, str(tmp_path / "hf" / "model.safetensors"), metadata={"format": "pt"})
    (tmp_path / "model.ss").write_text(with_dims("mixtral.ss", F=96, K=4))  # mixtral_folder routes to every expert
    result = run("import-weights", "model.ss", "hf", "-o", "ckpt.pt", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    got = torch.load(tmp_path / "ckpt.pt", weights_only=True)
    gate_up = torch.stack([state[f"model.layers.{n}.mlp.experts.gate_up_proj"] for n in range(2)])
    assert torch.equal(got["w_gate"], gate_up[:, :, :96]) and torch.equal(got["w_up"], gate_up[:, :, 96:])
    assert torch.equal(got["w_down"], torch.stack([state[f"model.layers.{n}.mlp.experts.down_proj"] for n in range(2)]))


def test_numbered_params_take_the_numbered_tensors(tmp_path):
    """One param per expert (`w1_e0` ... `w3_e3`), used in the order 2, 0, 3, 1: the slot numbers of
    the names, not the order of use, say which expert is which, so the first mapping agrees (the
    second forward is the runner-up's). Without the numbers the search ran out of forwards."""
    model, state = mixtral_folder(tmp_path / "hf", experts=4, seed=22)
    fields = "    param w_router: [L E D] = normal(std=0.02)\n" + "".join(
        f"    param w{w}_e{e}: {'[L D F]' if w == 2 else '[L F D]'} = normal(std=0.02)\n" for e in range(4) for w in (1, 2, 3))
    forward = ("        h = rms_norm(x, over=D, weight=m.ffn_norm[l])\n"
               "        p0, p1, p2, p3 = softmax(linear(h, m.w_router[l]), over=E) |> split(b n (4 k) -> b n k)\n"
               + "".join(f"        x = x + einsum(expert(h, m.w1_e{e}[l], m.w2_e{e}[l], m.w3_e{e}[l]), p{e}: b n D, b n k -> b n D)\n"
                         for e in (2, 0, 3, 1)))
    source = mixtral_source(4, "MixtralExperts", fields, """\
fn expert(x: [b n D], w1: [F D], w2: [D F], w3: [F D]) -> [b n D]:
    return linear(silu(linear(x, w1)) * linear(x, w3), w2)

""", forward)
    (tmp_path / "model.ss").write_text(source)
    result = run("import-weights", "model.ss", "hf", "-o", "ckpt.pt", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "first mapping: largest difference" in result.stderr and " in 2 forwards; the runner-up (" in result.stdout, result.stdout
    got = torch.load(tmp_path / "ckpt.pt", weights_only=True)
    for e in range(4):
        for w in (1, 2, 3):
            want = torch.stack([state[f"model.layers.{n}.block_sparse_moe.experts.{e}.w{w}.weight"] for n in range(2)])
            assert torch.equal(got[f"w{w}_e{e}"], want), f"w{w}_e{e}"
    ids = torch.randint(0, 128, (2, 20), generator=torch.Generator().manual_seed(6))
    with torch.no_grad():
        expected = model(input_ids=ids).logits
    assert relative_difference(compiled_logits(tmp_path / "model.ss", "MixtralExperts", got, ids), expected) < TOLERANCE


def unrolled(text: str, layers: int) -> str:
    """A model with its blocks written out: each `param x: [L ...]` as `x0`, `x1`... of one layer,
    and the loop over the layers as one copy of its body per layer, last layer's params first in
    the model (so that neither the fields' order nor the names without their numbers say which is
    which)."""
    def params(m):
        return "".join(f"    param {m[1]}{i}:{m[2]}[{m[3]}]{m[4]}\n" for i in reversed(range(layers)))

    text = re.sub(r"(?m)^    param (\w+):( *)\[L ([^\]]+)\](.*)\n", params, text)
    loop = re.search(r"(?m)^    for l in 0\.\.L:\n((?:        .*\n)+)", text)
    body = "".join(re.sub(r"m\.(\w+)\[l\]", lambda m: f"m.{m[1]}{i}", line[4:]) for i in range(layers) for line in loop[1].splitlines(True))
    return text[:loop.start()] + body + text[loop.end():]


def test_an_unrolled_model_takes_each_layer_by_its_number(tmp_path):
    """examples/llama.ss with its two blocks written out (`wq0`, `wq1`, ...): each layer's tensor,
    read on its own, goes to the param of its number, in the first mapping. Run by the runtime
    itself: the CLI's gate wants the blocks in a `for` today."""
    from shapescript.runtime import import_weights
    from test_architectures import Architecture

    arch = Architecture("llama.ss", "Llama", "LlamaForCausalLM", "LlamaConfig", **SMALL,
                        config_kwargs=(("attention_bias", False), ("mlp_bias", False)))
    model = reference_model(arch, seed=14)
    model.save_pretrained(tmp_path / "hf")
    source = unrolled((REPO / "examples" / "llama.ss").read_text(), 2)
    assert "m.wq1" in source and "[l]" not in source
    (tmp_path / "model.ss").write_text(source)
    compiled = shapescript.compile(tmp_path / "model.ss")
    params = [{"name": k, "shape": list(v.shape)} for k, v in compiled.Llama().state_dict().items()]
    spec = {"parameters": params, "model": "Llama", "function": "forward", "takes_positions": True, "max_positions": SMALL["P"]}
    got, summary = import_weights.import_folder(spec, compiled, str(tmp_path / "hf"), "hf")
    state = model.state_dict()
    for ours, theirs in (("wq", "self_attn.q_proj"), ("wo", "self_attn.o_proj"), ("w_gate", "mlp.gate_proj"), ("w_up", "mlp.up_proj"),
                         ("attn_norm", "input_layernorm"), ("ffn_norm", "post_attention_layernorm")):
        for n in range(2):
            assert torch.equal(got[f"{ours}{n}"], state[f"model.layers.{n}.{theirs}.weight"]), f"{ours}{n}"
    assert summary["forwards"] == 2 and summary["runner_up"]["difference"] > 100 * TOLERANCE, summary


def test_a_bias_named_with_a_b_prefix_ranks_as_a_bias():
    # `bq` is q's bias as `wq` is q's weight: ranked as a weight, an OPT's biases found no reading.
    from shapescript.runtime import import_weights as iw

    assert iw.concepts("bq") >= {"q", "bias"} and "weight" not in iw.concepts("bq")
    assert iw.name_score("bq", "model.decoder.layers.{0..1}.self_attn.q_proj.bias") > iw.name_score("bq", "model.decoder.layers.{0..1}.self_attn.q_proj.weight")

"""`shapescript export --hf DIR [--vllm] [--weights ckpt.pt]`: Hugging Face folders vLLM can serve.

Run with the venv's Python (torch, einops, transformers, safetensors):
    /root/.cache/shapescript/venv/bin/python -m pytest tests/python/test_hf_export.py
The binary is $SHAPESCRIPT_BIN, else build/shapescript.
"""

from __future__ import annotations

import ast
import inspect
import json
import sys
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
import transformers

from conftest import EXAMPLES, ROOT as REPO, chapter_transcript, cli, model_class, place, unit_scale_weights

# A language model with other dims and names: 3 blocks of 2 heads, an untied output layer, a
# final norm and a feed-forward layer in each block.
OTHER = """\
dim E  = 48
dim NH = 2
dim HD = E / NH
dim VOC = 97
dim B  = 3

model Other:
    param emb:   [VOC E]   = normal(std=0.02)
    param qkv:   [B 3*E E] = normal(std=0.02)
    param proj:  [B E E]   = normal(std=0.02)
    param up:    [B 2*E E] = normal(std=0.02)
    param down:  [B E 2*E] = normal(std=0.02)
    param ln1:   [B E]     = ones
    param ln2:   [B E]     = ones
    param final: [E]       = ones
    param head:  [VOC E]   = normal(std=0.02)

fn mix(h: [b t E], qkv: [3*E E], proj: [E E]) -> [b t E]:
    q, k, v = linear(h, qkv) |> split(b t (3 NH HD) -> b NH t HD)
    return scaled_dot_product_attention(q, k, v, attn_mask=causal[t t])
        |> rearrange(b NH t HD -> b t (NH HD))
        |> linear(proj)

fn mlp(h: [b t E], up: [2*E E], down: [E 2*E]) -> [b t E]:
    return linear(h, up) |> gelu |> linear(down)

fn forward(m: Other, tokens: [b t] Index[VOC]) -> [b t VOC] Logit over VOC:
    h = embedding(tokens, m.emb)
    for i in 0..B:
        h = h + mix(layer_norm(h, over=E, weight=m.ln1[i]), m.qkv[i], m.proj[i])
        h = h + mlp(layer_norm(h, over=E, weight=m.ln2[i]), m.up[i], m.down[i])
    h = rms_norm(h, over=E, weight=m.final)
    return linear(h, m.head)
"""

CLASSIFIER = """\
dim D = 32
dim C = 5

model Clf:
    param w1: [D D] = normal(std=0.02)
    param w2: [C D] = normal(std=0.02)

fn classify(m: Clf, x: [b D]) -> [b C] Logit over C:
    return linear(x, m.w1) |> relu |> linear(m.w2)
"""


def run(args, cwd):
    return cli(*args, cwd=cwd, timeout=300)


def export(tmp_path, source: Path | str, name="model", extra=(), filename=None):
    src = place(tmp_path, source, filename)
    result = run(["export", src.name, "--hf", name, *extra], tmp_path)
    assert result.returncode == 0, result.stderr
    return tmp_path / name, result


def load(folder, cls=None):
    cls = cls or transformers.AutoModelForCausalLM
    return cls.from_pretrained(str(folder), trust_remote_code=True, dtype=torch.float32).eval()


def tiny_params(seed=1, pos=False):
    g = torch.Generator().manual_seed(seed)
    p = {
        "wte": torch.randn(500, 64, generator=g) * 0.1,
        "w_qkv": torch.randn(2, 192, 64, generator=g) * 0.1,
        "w_o": torch.randn(2, 64, 64, generator=g) * 0.1,
        "norm": 1 + torch.randn(2, 64, generator=g) * 0.1,
    }
    if pos:
        p["wpe"] = torch.randn(128, 64, generator=g) * 0.1
    return p


def tiny_reference(p, ids, pos=None):
    """The chapter's Tiny forward, in plain torch."""
    x = F.embedding(ids, p["wte"])
    if pos is not None:
        x = x + F.embedding(pos, p["wpe"])
    b, n, _ = x.shape
    for l in range(2):
        h = F.rms_norm(x, (64,), weight=p["norm"][l], eps=1e-5)
        q, k, v = F.linear(h, p["w_qkv"][l]).view(b, n, 3, 4, 16).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(b, n, 64)
        x = x + F.linear(a, p["w_o"][l])
    return F.linear(x, p["wte"])


# --- the chapter's transcripts --------------------------------------------------------------


def test_chapter_refuses_handwritten_attention_with_vllm(tmp_path):
    place(tmp_path, EXAMPLES / "tiny.ss")
    result = run(["export", "tiny.ss", "--hf", "tiny_hf", "--vllm"], tmp_path)
    assert result.returncode == 1
    assert result.stdout == ""
    # the renderer ends each diagnostic with a blank line, which separates diagnostics
    assert result.stderr == chapter_transcript("shapescript export tiny.ss --hf tiny_hf --vllm") + "\n"
    assert not (tmp_path / "tiny_hf").exists()


def test_chapter_wrote_line_with_weights(tmp_path):
    place(tmp_path, EXAMPLES / "tiny_sdpa.ss", "tiny.ss")
    params = tiny_params()
    torch.save(params, tmp_path / "ckpt.pt")
    result = run(["export", "tiny.ss", "--hf", "tiny_hf", "--vllm", "--weights", "ckpt.pt"], tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == chapter_transcript("shapescript export tiny.ss --hf tiny_hf --vllm --weights ckpt.pt")
    assert result.stderr == ""
    folder = tmp_path / "tiny_hf"
    assert sorted(p.name for p in folder.iterdir()) == [
        "config.json", "configuration_shapescript.py", "model.safetensors", "modeling_shapescript.py"]
    model = load(folder)
    ids = torch.randint(0, 500, (3, 11), generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        torch.testing.assert_close(model(input_ids=ids).logits, tiny_reference(params, ids), atol=1e-5, rtol=1e-5)
        # transformers' own sdpa and eager attention give the same logits as the default
        for impl in ("eager", "sdpa"):
            model.set_attn_implementation(impl)
            torch.testing.assert_close(model(input_ids=ids).logits, tiny_reference(params, ids), atol=1e-5, rtol=1e-5)
    assert model.lm_head.weight.data_ptr() == model.model.embed_tokens.weight.data_ptr()  # tied
    out = model.generate(ids[:1, :4], max_new_tokens=5, do_sample=False)
    assert out.shape == (1, 9)
    # greedy decoding agrees with the reference, step by step
    seq = ids[:1, :4]
    for _ in range(5):
        seq = torch.cat([seq, tiny_reference(params, seq)[:, -1:].argmax(-1)], dim=1)
    assert torch.equal(out, seq)


def test_config(tmp_path):
    folder, _ = export(tmp_path, EXAMPLES / "tiny_sdpa.ss", "tiny_hf", ["--vllm"])
    import json

    config = json.loads((folder / "config.json").read_text())
    assert config["model_type"] == "shapescript"
    assert config["architectures"] == ["ShapeScriptForCausalLM"]
    assert list(config["auto_map"]) == ["AutoConfig", "AutoModel", "AutoModelForCausalLM"]
    assert config["auto_map"]["AutoModel"] == "modeling_shapescript.ShapeScriptModel"
    assert (config["hidden_size"], config["num_attention_heads"], config["num_hidden_layers"], config["vocab_size"],
            config["head_dim"], config["tie_word_embeddings"]) == (64, 4, 2, 500, 16, True)
    assert config["dims"] == {"D": 64, "Dh": 16, "H": 4, "L": 2, "V": 500}


# --- what the checker and the translation refuse ----------------------------------------------


def test_hf_alone_writes_handwritten_attention_and_notes(tmp_path):
    place(tmp_path, EXAMPLES / "tiny.ss")
    params = tiny_params()
    torch.save(params, tmp_path / "ckpt.pt")
    result = run(["export", "tiny.ss", "--hf", "tiny_hf", "--weights", "ckpt.pt"], tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == ("wrote tiny_hf: 2 layers, vocabulary of 500; vLLM can't serve it: "
                             "this works along `n`, which mixes its positions\n")
    chapter = chapter_transcript("shapescript export tiny.ss --hf tiny_hf --vllm")
    assert result.stderr == chapter.replace("error[E3304]", "info[E3304]") + "\n"
    model = load(tmp_path / "tiny_hf")
    ids = torch.randint(0, 500, (2, 9))
    with torch.no_grad():
        torch.testing.assert_close(model(input_ids=ids).logits, tiny_reference(params, ids), atol=1e-5, rtol=1e-5)


def test_exercise_3_wrong_positions_is_E3305(tmp_path):
    wrong = (EXAMPLES / "tiny_pos.ss").read_text()
    wrong = wrong.replace(", pos: [b n] Index[P])", ")").replace("embedding(pos, m.wpe)", "embedding(n |> map(i => i), m.wpe)")
    assert "map(i => i)" in wrong
    (tmp_path / "tiny.ss").write_text(wrong)
    result = run(["export", "tiny.ss", "--hf", "tiny_hf", "--vllm"], tmp_path)
    assert result.returncode == 1
    assert "error[E3305]: a serving engine can't run this: positions computed from `n`" in result.stderr


@pytest.mark.parametrize("ckpt, message", [
    ({"wte": torch.zeros(500, 64), "w_qkv": torch.zeros(2, 192, 64), "w_o": torch.zeros(2, 64, 64)},
     "error: `ckpt.pt` has no tensor `norm`; `Tiny.norm` is [2 64]"),
    ({**tiny_params(), "w_o": torch.zeros(2, 64, 32)},
     "error: `ckpt.pt`'s `w_o` is [2 64 32], but `Tiny.w_o` is [2 64 64]"),
    ({**tiny_params(), "extra": torch.zeros(3)},
     "error: `ckpt.pt` has a tensor `extra` ([3]) that `Tiny` has no parameter for"),
])
def test_weights_errors(tmp_path, ckpt, message):
    place(tmp_path, EXAMPLES / "tiny_sdpa.ss", "tiny.ss")
    torch.save(ckpt, tmp_path / "ckpt.pt")
    result = run(["export", "tiny.ss", "--hf", "tiny_hf", "--weights", "ckpt.pt"], tmp_path)
    assert result.returncode == 1
    assert message in result.stderr.splitlines()


def test_untranslatable_construct_is_named(tmp_path):
    src = (EXAMPLES / "tiny_sdpa.ss").read_text().replace("m.norm[l]", "m.norm[0]")
    (tmp_path / "tiny.ss").write_text(src)
    result = run(["export", "tiny.ss", "--hf", "tiny_hf"], tmp_path)
    assert result.returncode == 1
    assert "can't write `forward` as a Hugging Face model" in result.stderr
    assert "m.norm" in result.stderr


# --- packing, as vLLM calls the base model ---------------------------------------------------


def packed_attn(module, query, key, value, attention_mask, scaling=None, cu_seqlens=None, **kw):
    assert query.shape[0] == 1
    T, hq, hkv = query.shape[2], query.shape[1], key.shape[1]
    k = key.repeat_interleave(hq // hkv, 1)
    v = value.repeat_interleave(hq // hkv, 1)
    seg = torch.zeros(T, dtype=torch.long)
    seg[cu_seqlens[1:-1]] = 1
    seg = seg.cumsum(0)
    i = torch.arange(T)
    ok = (seg[:, None] == seg[None, :]) & (i[None, :] <= i[:, None])
    out = F.scaled_dot_product_attention(query, k, v, attn_mask=ok, scale=scaling)
    return out.transpose(1, 2).reshape(T, -1), None


@pytest.mark.parametrize("example", ["tiny_sdpa.ss", "tiny_pos.ss", "other.ss", "llama.ss", "gpt2.ss"])
def test_packing(tmp_path, example):
    source = OTHER if example == "other.ss" else EXAMPLES / example
    folder, result = export(tmp_path, source, "hf", ["--vllm"], filename=example)
    transformers.AttentionInterface.register("packed_test", packed_attn)
    model = load(folder)
    model.set_attn_implementation("packed_test")
    vocab = model.config.vocab_size

    def body(ids, pos, cu):
        return model.model(input_ids=ids[None], position_ids=pos[None], use_cache=False, return_dict=False, cu_seqlens=cu)[0][0]

    g = torch.Generator().manual_seed(3)
    a, b = torch.randint(0, vocab, (5,), generator=g), torch.randint(0, vocab, (3,), generator=g)
    with torch.no_grad():
        packed = body(torch.cat([a, b]), torch.cat([torch.arange(5), torch.arange(3)]), torch.tensor([0, 5, 8]))
        torch.testing.assert_close(packed[:5], body(a, torch.arange(5), torch.tensor([0, 5])))
        torch.testing.assert_close(packed[5:], body(b, torch.arange(3), torch.tensor([0, 3])))
        # and the default attention, batched, agrees with the packed hidden states
        model.set_attn_implementation("sdpa")
        alone = model.model(input_ids=b[None]).last_hidden_state[0]
        torch.testing.assert_close(packed[5:], alone, atol=1e-5, rtol=1e-5)


def test_other_model_matches_its_reference(tmp_path):
    folder, result = export(tmp_path, OTHER, "other_hf", ["--vllm"], filename="other.ss")
    assert result.stdout == "wrote other_hf: 3 attention layers of 2 heads, vocabulary of 97; vLLM can serve it\n"
    model = load(folder)
    assert not model.config.tie_word_embeddings
    assert model.lm_head.weight.data_ptr() != model.model.embed_tokens.weight.data_ptr()
    sd = {k: v for k, v in model.state_dict().items()}
    ids = torch.randint(0, 97, (2, 6))
    with torch.no_grad():
        h = F.embedding(ids, sd["model.embed_tokens.weight"])
        b, t, _ = h.shape
        for i in range(3):
            pre = f"model.layers.{i}."
            x = F.layer_norm(h, (48,), weight=sd[pre + "ln1"], eps=1e-5)
            q, k, v = F.linear(x, sd[pre + "mix.qkv.weight"]).view(b, t, 3, 2, 24).permute(2, 0, 3, 1, 4)
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(b, t, 48)
            h = h + F.linear(a, sd[pre + "mix.proj.weight"])
            x = F.layer_norm(h, (48,), weight=sd[pre + "ln2"], eps=1e-5)
            h = h + F.linear(F.gelu(F.linear(x, sd[pre + "mlp.up.weight"])), sd[pre + "mlp.down.weight"])
        h = F.rms_norm(h, (48,), weight=sd["model.final"], eps=1e-5)
        torch.testing.assert_close(model(input_ids=ids).logits, F.linear(h, sd["lm_head.weight"]), atol=1e-5, rtol=1e-5)


def test_positions_model(tmp_path):
    params = tiny_params(pos=True)
    torch.save(params, tmp_path / "ckpt.pt")
    folder, result = export(tmp_path, EXAMPLES / "tiny_pos.ss", "pos_hf", ["--vllm", "--weights", "ckpt.pt"])
    assert result.stdout == "wrote pos_hf: 2 attention layers of 4 heads, vocabulary of 500; vLLM can serve it\n"
    model = load(folder)
    assert model.config.max_position_embeddings == 128
    ids = torch.randint(0, 500, (2, 10))
    pos = torch.arange(10).expand(2, 10)
    with torch.no_grad():
        torch.testing.assert_close(model(input_ids=ids).logits, tiny_reference(params, ids, pos), atol=1e-5, rtol=1e-5)
        shifted = pos + 7
        torch.testing.assert_close(model(input_ids=ids, position_ids=shifted).logits, tiny_reference(params, ids, shifted),
                                   atol=1e-5, rtol=1e-5)
    assert model.generate(ids[:1, :3], max_new_tokens=4, do_sample=False).shape == (1, 7)


# --- vLLM's documented requirements, structurally --------------------------------------------


@pytest.mark.parametrize("example", ["tiny_sdpa.ss", "tiny_pos.ss", "other.ss"])
def test_vllm_structure(tmp_path, example):
    source = OTHER if example == "other.ss" else EXAMPLES / example
    folder, _ = export(tmp_path, source, "hf", ["--vllm"], filename=example)
    base_cls = transformers.AutoModel
    model = load(folder, base_cls)
    assert type(model).__name__ == "ShapeScriptModel"
    assert type(model).is_backend_compatible()
    assert isinstance(model.get_input_embeddings(), torch.nn.Embedding)
    params = inspect.signature(type(model).forward).parameters
    for name in ("input_ids", "inputs_embeds", "position_ids", "kwargs"):
        assert name in params
    # one attention call per layer, in a module with config and an integer layer_idx
    attention_modules = []
    for name, module in model.named_modules():
        src = inspect.getsource(type(module).forward) if type(module).__module__.endswith("modeling_shapescript") else ""
        tree = ast.parse(src.strip() and inspect.cleandoc("\n" + src) or "pass")
        calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                 and n.func.attr == "get_interface" and isinstance(n.func.value, ast.Name)
                 and n.func.value.id == "ALL_ATTENTION_FUNCTIONS"]
        if calls:
            assert len(calls) == 1
            uses = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
                    and n.func.id == "attention_interface"]
            assert len(uses) == 1
            scaling = [k for k in uses[0].keywords if k.arg == "scaling"][0].value
            assert isinstance(scaling, ast.Attribute) and isinstance(getattr(module, scaling.attr), float)
            assert any(k.arg is None for k in uses[0].keywords)  # **kwargs passed on
            assert module.config is model.config and isinstance(module.layer_idx, int)
            assert module.is_causal is True
            attention_modules.append(module)
    assert sorted(m.layer_idx for m in attention_modules) == list(range(model.config.num_hidden_layers))
    # kwargs reach attention: count calls with a marker kwarg
    seen = []

    def spy(module, query, key, value, attention_mask, scaling=None, marker=None, **kw):
        seen.append((module.layer_idx, marker))
        return F.scaled_dot_product_attention(query, key, value, is_causal=True, scale=scaling).transpose(1, 2), None

    transformers.AttentionInterface.register("spy_test", spy)
    model.set_attn_implementation("spy_test")
    with torch.no_grad():
        model(input_ids=torch.zeros(1, 4, dtype=torch.long), marker="here")
    assert seen == [(i, "here") for i in range(model.config.num_hidden_layers)]
    # every nn.Linear is in the tp plan
    import re

    plan = model.config.base_model_tp_plan
    linears = [n for n, m in model.named_modules() if isinstance(m, torch.nn.Linear)]
    assert linears
    for name in linears:
        assert any(re.fullmatch(p.replace(".", r"\.").replace("*", r"\d+"), name) for p in plan), name


# --- any model: a classifier with --fn -------------------------------------------------------


def test_classifier_with_fn(tmp_path):
    folder, result = export(tmp_path, CLASSIFIER, "clf_hf", ["--fn", "classify"], filename="clf.ss")
    assert result.stdout.startswith("wrote clf_hf: `classify` as the model's forward; vLLM can't serve it")
    model = load(folder, transformers.AutoModel)
    x = torch.randn(3, 32)
    with torch.no_grad():
        expected = F.linear(torch.relu(F.linear(x, model.w1)), model.w2)
        torch.testing.assert_close(model(x), expected)
    result = run(["export", "clf.ss", "--hf", "clf2", "--fn", "classify", "--vllm"], tmp_path)
    assert result.returncode == 1


# --- generate() with a key-value cache ---------------------------------------------------------


@pytest.mark.parametrize("example", ["llama.ss", "gpt2.ss", "tiny_sdpa.ss"])
def test_generate_with_the_cache_is_greedy_decoding_of_the_compiled_forward(tmp_path, example):
    sys.path.insert(0, str(REPO / "python"))
    import shapescript

    compiled = shapescript.compile(EXAMPLES / example)
    reference = model_class(compiled)()
    reference.load_state_dict(unit_scale_weights(reference.state_dict(), seed=2))  # so that the argmax depends on every part
    generator = torch.Generator().manual_seed(3)
    torch.save(reference.state_dict(), tmp_path / "ckpt.pt")
    folder, _ = export(tmp_path, EXAMPLES / example, "hf", ["--vllm", "--weights", "ckpt.pt"])
    model = load(folder)
    takes_positions = len(inspect.signature(compiled.forward).parameters) == 3

    def shapescript_forward(ids):  # the file's forward, compiled by the pt2 code generator
        args = [reference, ids] + ([torch.arange(ids.shape[1])[None]] if takes_positions else [])
        return compiled.forward(*args)

    prompt = torch.randint(0, model.config.vocab_size, (1, 5), generator=generator)
    lengths = []
    forward = model.forward
    model.forward = lambda *a, **k: (lengths.append(k["input_ids"].shape[1]), forward(*a, **k))[1]
    with torch.no_grad():
        cached = model.generate(prompt, max_new_tokens=8, do_sample=False)
        assert lengths == [5] + [1] * 7  # the prompt, then one new token a step: the cache holds the rest
        uncached = model.generate(prompt, max_new_tokens=8, do_sample=False, use_cache=False)
        ids = prompt
        for _ in range(8):  # the whole sequence each step, as the ShapeScript forward computes it
            ids = torch.cat([ids, shapescript_forward(ids)[:, -1:].argmax(-1)], dim=1)
        torch.testing.assert_close(forward(input_ids=ids, use_cache=False).logits, shapescript_forward(ids), rtol=1e-4, atol=1e-4)
    assert cached.tolist() == uncached.tolist() == ids.tolist()
    source = (folder / "modeling_shapescript.py").read_text()
    assert "DynamicCache(config=self.config)" in source


def test_a_model_that_is_not_servable_generates_without_a_cache(tmp_path):
    folder, _ = export(tmp_path, EXAMPLES / "tiny.ss", "hf")
    source = (folder / "modeling_shapescript.py").read_text()
    assert "DynamicCache(config" not in source and "each step runs\n        # the whole sequence" in source
    model = load(folder)
    assert model.generate(torch.tensor([[1, 2, 3]]), max_new_tokens=3, do_sample=False).shape == (1, 6)


def test_gemma2_decides_its_window_per_block(tmp_path):
    """examples/gemma2.ss slides its window on the blocks where `l % 2 == 0`: each layer of the folder
    reads its own index, and transformers' logits are the compiled forward's."""
    sys.path.insert(0, str(REPO / "python"))
    import shapescript

    compiled = shapescript.compile(EXAMPLES / "gemma2.ss")
    reference = model_class(compiled)()
    reference.load_state_dict(unit_scale_weights(reference.state_dict(), seed=2))
    torch.save(reference.state_dict(), tmp_path / "ckpt.pt")
    folder, _ = export(tmp_path, EXAMPLES / "gemma2.ss", "hf", ["--weights", "ckpt.pt"])
    assert "l = self.layer_idx" in (folder / "modeling_shapescript.py").read_text()
    model = load(folder)
    ids = torch.randint(0, 128, (2, 24), generator=torch.Generator().manual_seed(4))  # longer than the window of 8
    with torch.no_grad():
        expected = compiled.forward(reference, ids, torch.arange(24).expand(2, 24))
        torch.testing.assert_close(model(input_ids=ids).logits, expected, rtol=1e-4, atol=1e-4)


ALTERNATING = """\
dim D  = 32
dim H  = 2
dim Dh = D / H
dim V  = 64
dim L  = 4
dim W  = 4

model Alternating:
    param wte:   [V D]     = normal(std=0.02)
    param w_qkv: [L 3*D D] = normal(std=0.02)
    param w_o:   [L D D]   = normal(std=0.02)
    param norm:  [L D]     = ones

fn forward(m: Alternating, ids: [b n] Index[V]) -> [b n V] Logit over V:
    x = embedding(ids, m.wte)
    for l in 0..L:
        q, k, v = linear(rms_norm(x, over=D, weight=m.norm[l]), m.w_qkv[l]) |> split(b n (3 H Dh) -> b H n Dh)
        if l % 2 == 0:
            a = scaled_dot_product_attention(q, k, v, attn_mask=causal[n n], window=W)
        else:
            a = scaled_dot_product_attention(q, k, v, attn_mask=causal[n n])
        x = x + linear(rearrange(a, b H n Dh -> b n (H Dh)), m.w_o[l])
    return linear(x, m.wte)
"""


def test_a_window_on_every_other_block_is_layer_types(tmp_path):
    """An `if l % 2 == 0:` around two attentions: one per block, which --hf writes as transformers'
    `layer_types` (what vLLM slides by), and whose logits are the compiled forward's. vLLM 0.32 finds a
    block's attention only in a forward that calls the attention interface once (with two calls:
    "Layer 0 (sliding_attention) does not dispatch through the Transformers attention interface"), so
    both branches call it through the block's one `attend`."""
    sys.path.insert(0, str(REPO / "python"))
    import shapescript

    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "alternating.ss").write_text(ALTERNATING)
    compiled = shapescript.compile(tmp_path / "src" / "alternating.ss")
    reference = model_class(compiled)()
    reference.load_state_dict(unit_scale_weights(reference.state_dict(), seed=2))
    torch.save(reference.state_dict(), tmp_path / "ckpt.pt")
    folder, result = export(tmp_path, tmp_path / "src" / "alternating.ss", "hf", ["--vllm", "--weights", "ckpt.pt"])
    assert (folder / "modeling_shapescript.py").read_text().count("attention_interface(self") == 1
    config = json.loads((folder / "config.json").read_text())
    assert config["sliding_window"] == 4
    assert config["layer_types"] == ["sliding_attention", "full_attention"] * 2
    model = load(folder)
    ids = torch.randint(0, 64, (2, 12), generator=torch.Generator().manual_seed(5))  # longer than the window
    with torch.no_grad():
        torch.testing.assert_close(model(input_ids=ids).logits, compiled.forward(reference, ids), rtol=1e-4, atol=1e-4)


# --- pipeline parallelism, as vLLM's Transformers backend splits a folder -------------------------


class PPMissingLayer(torch.nn.Module):
    """vLLM's placeholder for a module another pipeline stage runs: it returns its first input."""

    def forward(self, *args, **kwargs):
        return args[0] if args else next(iter(kwargs.values()))


def pipeline_stage(folder, rank, world):
    """The folder's model as stage `rank` of `world` holds it: vLLM's `pipeline_parallel()` (0.32,
    transformers/base.py) applied to the base model's `base_model_pp_plan`."""
    model = load(folder)
    base = model.model
    assert base.supports_pp_plan
    names = list(base._pp_plan)
    at = next(i for i, name in enumerate(names) if isinstance(getattr(base, name), torch.nn.ModuleList))
    tied = model.config.tie_word_embeddings
    for name in names[:at]:
        if not (rank == 0 or (tied and rank == world - 1)):
            setattr(base, name, PPMissingLayer())
    layers = getattr(base, names[at])
    start, end = rank * len(layers) // world, (rank + 1) * len(layers) // world  # get_pp_indices: even runs
    for i in range(len(layers)):
        if not start <= i < end:
            layers[i] = PPMissingLayer()
    for name in names[at + 1:]:
        if rank != world - 1:
            setattr(base, name, PPMissingLayer())
    return model


# gpt2: learned positions added before the blocks; gemma: a scaled, tied embedding and a (1 + w)
# norm after them; llama: rope's tables prepared once before the blocks (hoisting).
@pytest.mark.parametrize("example", ["gpt2.ss", "gemma.ss", "llama.ss"])
def test_two_pipeline_stages_compute_the_one_process_logits(tmp_path, example):
    folder, result = export(tmp_path, EXAMPLES / example, "hf")
    assert result.returncode == 0, result.stderr
    config = json.loads((folder / "config.json").read_text())
    ids = torch.randint(0, config["vocab_size"], (2, 7), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        expected = load(folder)(input_ids=ids).logits
        first, last = pipeline_stage(folder, 0, 2), pipeline_stage(folder, 1, 2)
        handed_on = first.model(input_ids=ids).last_hidden_state
        got = last(inputs_embeds=handed_on).logits
    torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-5)


def test_a_latent_attention_of_other_sizes_is_cached_whole_by_vllm(tmp_path):
    """examples/deepseek_v3.ss at C = 24, Dr = 8: the folder still caches the latent (transformers'
    generate() reads it back through expand_kv), but vLLM's MLA kernels cache 576 numbers a token, so
    config.json says nothing of MLA and vLLM caches each head's keys and values; the report says so."""
    source = (EXAMPLES / "deepseek_v3.ss").read_text()
    for old, new in (("dim C   = 512 ", "dim C   = 24  "), ("dim Dr  = 64 ", "dim Dr  = 8  ")):
        assert old in source
        source = source.replace(old, new)
    place(tmp_path, source, "small.ss")
    result = cli("export", "small.ss", "--hf", "hf", "--vllm", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert ("2 attention layers of 2 heads (latent attention: its cache holds 32 numbers a token and layer; vLLM's MLA kernels "
            "cache 576, so vLLM caches each head's keys and values)") in result.stdout
    config = json.loads((tmp_path / "hf" / "config.json").read_text())
    assert "kv_lora_rank" not in config and (config["head_dim"], config["num_key_value_heads"]) == (72, 2)
    modeling = (tmp_path / "hf" / "modeling_shapescript.py").read_text()
    assert "def expand_kv(self, cached_latent, k_shared):" in modeling


SHARED_BLOCKS = '''
dim D = 64
dim H = 2
dim V = 64
dim L = 4
dim S = 2

model M:
    param wte: [V D] = normal(std=0.02)
    param norm: [L D] = ones
    param wq: [S D D] = normal(std=0.02)
    param wo: [L D D] = normal(std=0.02)

fn attend(x: [b n D], wq: [D D], wo: [D D]) -> [b n D]:
    q = rearrange(linear(x, wq), b n (H e) -> b H n e)
    return linear(rearrange(scaled_dot_product_attention(q, q, q, attn_mask=causal[n n]), b H n e -> b n (H e)), wo)

fn forward(m: M, ids: [b n] Index[V]) -> [b n V]:
    x = embedding(ids, m.wte)
    for l in 0..L:
        s = (l % 2) as Index[S]
        x = x + attend(rms_norm(x, over=D, weight=m.norm[l]), m.wq[s], m.wo[l])
    return linear(x, m.wte)
'''


def test_weights_that_blocks_share_are_a_copy_in_each_layer(tmp_path):
    """`m.wq[s]`, `s = (l % 2) as Index[S]`: every other block reads one slice (weights shared by blocks). Each
    block's layer holds a copy of its slice, so transformers (and vLLM, which loads each layer's
    weights by name) compute what the compiled forward does."""
    import shapescript

    source = place(tmp_path, SHARED_BLOCKS, "shared.ss")
    compiled = shapescript.compile(source)
    ours = model_class(compiled)()
    ours.load_state_dict(unit_scale_weights(ours.state_dict(), seed=3))
    torch.save(ours.state_dict(), tmp_path / "ckpt.pt")
    result = cli("export", "shared.ss", "--hf", "hf", "--vllm", "--weights", "ckpt.pt", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "wrote hf: 4 attention layers of 2 heads, vocabulary of 64; vLLM can serve it\n"
    folder = transformers.AutoModelForCausalLM.from_pretrained(str(tmp_path / "hf"), trust_remote_code=True, dtype=torch.float32).eval()
    layers = folder.model.layers
    assert torch.equal(layers[0].attend.wq.weight, layers[2].attend.wq.weight)
    assert not torch.equal(layers[0].attend.wq.weight, layers[1].attend.wq.weight)
    ids = torch.randint(0, 64, (2, 9), generator=torch.Generator().manual_seed(4))
    with torch.no_grad():
        torch.testing.assert_close(folder(input_ids=ids).logits, compiled.forward(ours, ids), atol=1e-5, rtol=1e-5)

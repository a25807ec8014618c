"""Output heads beyond `return linear(h, m.W)`: a biased output layer (Phi-2, GPT-J, CodeGen), a
`scale` after it (Cohere's logit_scale) and a final logit softcap (Gemma 2), through `check`,
`--hf` (transformers loading the folder computes the compiled forward's logits), `--hf --vllm`
(config.json's logit_scale and final_logit_softcapping, or E3307 for what vLLM can't apply),
`--gguf` and `import-weights` (refusals that name the line).
"""

from __future__ import annotations

import json
import sys

import pytest
import torch
import transformers

from conftest import ROOT, cli, model_class, unit_scale_weights

PROGRAM = """\
dim D = 64
dim H = 2
dim Dh = D / H
dim V = 96
dim L = 2

model Tiny:
    param wte:       [V D]     = normal(std=0.02)
    param norm:      [L D]     = ones
    param w_qkv:     [L 3*D D] = normal(std=0.02)
    param w_o:       [L D D]   = normal(std=0.02)
    param final:     [D]       = ones
    param head:      [V D]     = normal(std=0.02)
{bias}
fn attention(x: [b n D], w_qkv: [3*D D], w_o: [D D]) -> [b n D]:
    q, k, v = linear(x, w_qkv) |> split(b n (3 H Dh) -> b H n Dh)
    return scaled_dot_product_attention(q, k, v, attn_mask=causal[n n])
        |> rearrange(b H n Dh -> b n (H Dh))
        |> linear(w_o)

fn forward(m: Tiny, ids: [b n] Index[V]) -> [b n V] Logit over V:
    x = embedding(ids, m.wte)
    for l in 0..L:
        x = x + attention(rms_norm(x, over=D, weight=m.norm[l]), m.w_qkv[l], m.w_o[l])
    h = rms_norm(x, over=D, weight=m.final)
{head}
"""
HEAD_LINE = PROGRAM.splitlines().index("{head}") + 1  # the head's first line, in the written file

# name: (the head's lines, whether it has a bias, what config.json must say, vLLM serves it)
HEADS = {
    "bias": (["return linear(h, m.head, m.head_bias)"], True, {}, True),
    "scale": (["return linear(h, m.head) |> scale(0.0625)"], False, {"logit_scale": 0.0625}, True),
    "softcap": (["z = linear(h, m.head)", "return tanh(z / 3.0) * 3.0"], False, {"final_logit_softcapping": 3.0}, True),
    "bias_softcap_scale": (["z = linear(h, m.head, m.head_bias)", "capped = scale(tanh(scale(z, 1 / 3.0)), 3.0)",
                            "return capped |> scale(0.5)"], True, {"final_logit_softcapping": 3.0, "logit_scale": 0.5}, True),
    "other": (["return tanh(linear(h, m.head))"], False, {}, False),
}


def program(name: str) -> str:
    lines, bias, _, _ = HEADS[name]
    return PROGRAM.format(bias="    param head_bias: [V]       = zeros\n" if bias else "",
                          head="\n".join("    " + line for line in lines))


def head_line(name: str) -> int:
    return HEAD_LINE + (1 if HEADS[name][1] else 0)


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """Each head's program, its compiled module with unit-scale weights, and its --hf folder
    (with --vllm where vLLM serves it)."""
    sys.path.insert(0, str(ROOT / "python"))
    import shapescript

    out = {}
    for name, (_, _, _, served) in HEADS.items():
        folder = tmp_path_factory.mktemp(name)
        (folder / "model.ss").write_text(program(name))
        compiled = shapescript.compile(folder / "model.ss")
        reference = model_class(compiled)()
        reference.load_state_dict(unit_scale_weights(reference.state_dict(), seed=4))
        torch.save(reference.state_dict(), folder / "ckpt.pt")
        # A folder name of its own: transformers caches trust_remote_code modules by the folder's name.
        result = cli("export", "model.ss", "--hf", f"hf_{name}", "--weights", "ckpt.pt", *(["--vllm"] if served else []), cwd=folder, timeout=300)
        out[name] = (folder, compiled, reference, result)
    return out


@pytest.mark.parametrize("name", list(HEADS))
def test_the_folder_computes_the_compiled_forwards_logits(exported, name):
    folder, compiled, reference, result = exported[name]
    assert result.returncode == 0, result.stderr
    model = transformers.AutoModelForCausalLM.from_pretrained(str(folder / f"hf_{name}"), trust_remote_code=True, dtype=torch.float32).eval()
    ids = torch.randint(0, 96, (2, 7), generator=torch.Generator().manual_seed(5))
    with torch.no_grad():
        expected = compiled.forward(reference, ids)
        got = model(input_ids=ids).logits
    assert (got - expected).abs().max() <= 1e-4 * expected.abs().max()
    assert model.lm_head.bias is not None if HEADS[name][1] else model.lm_head.bias is None


@pytest.mark.parametrize("name", list(HEADS))
def test_config_json_says_what_vllms_logits_processor_applies(exported, name):
    folder, _, _, result = exported[name]
    assert result.returncode == 0, result.stderr
    config = json.loads((folder / f"hf_{name}" / "config.json").read_text())
    said = {key: config[key] for key in ("logit_scale", "final_logit_softcapping") if key in config}
    assert said == HEADS[name][2]
    assert ("vLLM can serve it" in result.stdout) == HEADS[name][3]


@pytest.mark.parametrize("name", list(HEADS))
def test_check_stays_clean(exported, name):
    folder = exported[name][0]
    result = cli("check", "model.ss", cwd=folder)
    assert result.returncode == 0 and "error" not in result.stdout + result.stderr, result.stdout + result.stderr


def test_vllm_refuses_what_its_logits_processor_cant_apply_with_the_line(exported):
    folder = exported["other"][0]
    result = cli("export", "model.ss", "--hf", "refused", "--vllm", cwd=folder)
    assert result.returncode != 0
    assert f"error[E3307]: a serving engine can't run this: the engine can't apply `tanh(linear(h, m.head))` after the output layer" in result.stderr
    assert f"model.ss:{head_line('other')}:12" in result.stderr
    assert "`shapescript check --serving error`" in result.stderr


# llama.cpp's phi2 has an output bias and its gemma2 a softcap, but this model is neither: each
# architecture that lacks what its head computes says so with the line.
@pytest.mark.parametrize("name, what", [("bias", "its output layer adds the bias `head_bias`, and `llama` has no output bias"),
                                        ("softcap", "it computes `tanh(z / 3.0) * 3.0` after the output layer, and `llama` doesn't cap its logits")])
def test_gguf_refuses_an_output_head_llama_cpp_lacks_with_the_line(exported, name, what):
    folder = exported[name][0]
    result = cli("export", "model.ss", "--gguf", "model.gguf", cwd=folder)
    assert result.returncode != 0
    line = head_line(name) + (1 if name == "softcap" else 0)
    assert f"model.ss:{line}:" in result.stderr and what in result.stderr, result.stderr
    assert not (folder / "model.gguf").exists()


def test_a_forward_that_isnt_a_language_model_is_refused_with_its_line(tmp_path):
    source = PROGRAM.format(bias="", head="    return linear(h, m.head) |> softmax(over=V)")
    (tmp_path / "model.ss").write_text(source)
    (tmp_path / "folder").mkdir()
    why = f"model.ss:{HEAD_LINE}:5: `forward` isn't a language model's forward: it must end by returning the output layer"
    imported = cli("import-weights", "model.ss", "folder", "-o", "ckpt.pt", cwd=tmp_path)
    assert imported.returncode == 1 and why in imported.stderr, imported.stderr
    gguf = cli("export", "model.ss", "--gguf", "model.gguf", cwd=tmp_path)
    assert gguf.returncode == 1 and why in gguf.stderr, gguf.stderr
    verified = cli("verify", "model.ss", cwd=tmp_path)
    assert verified.returncode == 1 and why in verified.stderr, verified.stderr

"""Encoders through the README's flow (issue 19): transformers' own BertModel and ViTModel at tiny
random configs (the sizes of examples/bert.ss and examples/vit.ss, every vector moved by 0.2 randn
as test_model_zoo's reference_model does), saved with `save_pretrained`, read by the real
`shapescript import-weights` (the mapping is computed: ViT's convolution [D C p q] is read
flattened onto `patch_w: [D C*Pt*Pt]`, its class token [1 1 D] without its axes of 1), then the
compiled forward's last hidden state against transformers' on padded rows with token types (BERT)
or images (ViT), and `shapescript verify --weights HF_DIR`: .pt2, AOTInductor, transformers' own
class from the folder and, for BERT, the folder in real vLLM's pooling runner.

    $SHAPESCRIPT_VENV/bin/python -m pytest tests/python/test_encoders.py
"""
from __future__ import annotations

import pytest
import torch

import shapescript
from conftest import EXAMPLES, VLLM_VENV, cli
from test_model_zoo import Zoo, reference_model, relative_difference, settings
from test_verify import table
from shapescript.runtime.verify import GGUF_TOLERANCE

TOLERANCE = 1e-4

ENCODERS = {
    "bert": Zoo("bert.ss", "Bert", "BertModel", "BertConfig", settings(
        vocab_size=128, hidden_size=64, num_hidden_layers=2, num_attention_heads=2, intermediate_size=256,
        max_position_embeddings=64, type_vocab_size=2, layer_norm_eps=1e-12, hidden_act="gelu", pad_token_id=0), V=128),
    "vit": Zoo("vit.ss", "Vit", "ViTModel", "ViTConfig", settings(
        hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=256, image_size=32, patch_size=8,
        num_channels=3, layer_norm_eps=1e-12, hidden_act="gelu", qkv_bias=True), V=0),
}

_IMPORTED = {}


@pytest.fixture(scope="module", params=sorted(ENCODERS))
def imported(request, tmp_path_factory):
    """(zoo, transformers' model, the compiled module, the imported model, the folder holding hf/
    and ckpt.pt, import-weights' result), once per encoder."""
    name = request.param
    if name not in _IMPORTED:
        zoo = ENCODERS[name]
        model = reference_model(zoo, seed=23)
        folder = tmp_path_factory.mktemp(name)
        model.save_pretrained(folder / "hf", safe_serialization=True)
        result = cli("import-weights", zoo.source, "hf", "-o", "ckpt.pt", cwd=folder)
        assert result.returncode == 0, result.stdout + result.stderr
        compiled = shapescript.compile(zoo.source)
        ours = getattr(compiled, zoo.model)()
        ours.load_state_dict(torch.load(folder / "ckpt.pt", weights_only=True))
        _IMPORTED[name] = zoo, model, compiled, ours.eval(), folder, result
    return _IMPORTED[name]


def inputs_of(zoo):
    """(our forward's inputs, transformers' keywords): two rows of 12 tokens, the second padded
    after 8, with random token types; or two images."""
    generator = torch.Generator().manual_seed(5)
    if zoo.hf_class == "ViTModel":
        pixels = torch.randn(2, 3, 32, 32, generator=generator)
        return (pixels,), {"pixel_values": pixels}
    ids = torch.randint(0, zoo.V, (2, 12), generator=generator)
    types = torch.randint(0, 2, (2, 12), generator=generator)
    mask = torch.ones(2, 12, dtype=torch.bool)
    mask[1, 8:] = False
    return (ids, types, mask), {"input_ids": ids, "token_type_ids": types, "attention_mask": mask.long()}


def test_import_weights_says_what_it_compared(imported):
    zoo, _, _, _, _, result = imported
    assert "the last hidden state agrees with transformers' to" in result.stdout, result.stdout
    assert "compared 2 rows of" in result.stdout


def test_last_hidden_state_matches_transformers(imported):
    zoo, model, compiled, ours, _, _ = imported
    given, keywords = inputs_of(zoo)
    with torch.no_grad():
        expected = model(**keywords).last_hidden_state
        got = compiled.forward(ours, *given)
    difference = relative_difference(got, expected)
    print(f"{zoo.example}: largest difference {difference:.2e} of the largest value")
    assert difference < TOLERANCE


@pytest.mark.parametrize("imported", ["bert"], indirect=True)  # ViT takes no padding mask
def test_the_padding_mask_is_read(imported):
    """A padded key changes what the row's other tokens see: the mask reaches the scores."""
    zoo, model, compiled, ours, _, _ = imported
    (ids, types, mask), _ = inputs_of(zoo)
    with torch.no_grad():
        masked = compiled.forward(ours, ids, types, mask)
        unmasked = compiled.forward(ours, ids, types, torch.ones_like(mask))
    assert relative_difference(masked[1, :8], unmasked[1, :8]) > 1e-3
    assert relative_difference(masked[0], unmasked[0]) == 0


def test_verify_passes_with_the_folder(imported):
    """`shapescript verify --weights HF_DIR`: the encoder imported once, its .pt2 and AOTInductor
    package (a minute: Inductor compiles C++), transformers' own class from the folder and (BERT)
    the folder in vLLM's pooling runner agree with the compiled forward's last hidden state; vLLM
    says why it serves no ViT; llama.cpp's bert (the GGUF file) agrees on BERT's token ids, and
    --gguf says why it has no encoder of pixels."""
    zoo, _, _, _, folder, _ = imported
    assert (VLLM_VENV / "bin" / "python").exists(), f"no vLLM venv at {VLLM_VENV}: run scripts/engines.sh"
    result = cli("verify", zoo.source, "--weights", "hf", "--artifacts", "art", cwd=folder, timeout=1500)
    print(result.stdout, result.stderr)
    assert result.returncode == 0, result.stdout + result.stderr
    rows = table(result.stdout)
    served = [".pt2 (torch.export)", "AOTInductor", "ONNX (--onnx)", "transformers (--hf)"] + (["vLLM (--hf)"] if zoo.hf_class == "BertModel" else [])
    for engine in served:
        difference, _, outcome = rows[engine]
        assert outcome.startswith("pass") and float(difference) < TOLERANCE, (engine, rows[engine])
    assert rows["transformers (--hf)"][2] == f"pass: transformers' {zoo.hf_class} of the folder"
    if zoo.hf_class == "ViTModel":
        assert rows["vLLM (--hf)"][2] == "skipped: vLLM's pooling runner takes token ids: it serves no encoder of pixels"
    if zoo.hf_class == "ViTModel":
        assert rows["llama.cpp (--gguf)"][2] == ("skipped: `Vit` isn't an architecture llama.cpp has: llama.cpp's encoders read token ids, "
                                                 "and its input `pixels` is a tensor of reals")
    else:  # llama.cpp's bert, its GELU read from a float16 table
        difference, _, outcome = rows["llama.cpp (--gguf)"]
        assert outcome == "pass: per-token embeddings of token ids alone (token types 0, nothing padded)", outcome
        assert float(difference) < GGUF_TOLERANCE["bert"]


def test_a_causal_mask_is_no_encoder_and_the_refusal_names_its_line(tmp_path):
    """examples/bert.ss with `causal[n n]` for its padding mask has no output layer and sees only
    earlier positions: import-weights says it is neither a language model nor an encoder, with the
    attention's line, before it reads the folder."""
    source = (EXAMPLES / "bert.ss").read_text().replace("attn_mask=keep", "attn_mask=causal[n n]")
    (tmp_path / "bert.ss").write_text(source)
    (tmp_path / "folder").mkdir()
    line = next(i for i, text in enumerate(source.splitlines(), 1) if "causal[n n]" in text)
    result = cli("import-weights", "bert.ss", "folder", "-o", "ckpt.pt", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert f"; nor an encoder's: bert.ss:{line}:12: an encoder's attention sees every position: `causal` or `window=` makes it a decoder's" \
        in result.stderr, result.stderr
    assert not (tmp_path / "ckpt.pt").exists()

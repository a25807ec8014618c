"""`--gguf` against llama.cpp's own converter: for each architecture of test_architectures.py (and a
plain Llama, examples/llama.ss), transformers' model saved with `save_pretrained` is converted by
llama.cpp's convert_hf_to_gguf.py (of the commit the tests' llama.cpp is built from; kept by
scripts/llama_cpp.sh), and ShapeScript writes its GGUF of the same weights. Real llama.cpp must
compute the same logits from both (and transformers' own), and the two files must agree on what
llama.cpp reads: architecture, sizes, head counts, rotary base, norm epsilon, tensor names and shapes.

The converter needs a vocabulary of the model's size: a SentencePiece model of V pieces, trained
here on the repository's docs, saved beside the weights as tokenizer.model (the converter's
`_set_vocab_sentencepiece`, which llama and qwen2 try first; a BPE tokenizer of our own would be
refused, its pre-tokenizer's hash unknown to the converter).

    $SHAPESCRIPT_VENV/bin/python -m pytest tests/python/test_convert_compare.py
"""
from __future__ import annotations

import subprocess

import numpy as np
import pytest
import torch

from conftest import ROOT, PYTHON, cli, llama_cpp_converter, llama_cpp_logits
from test_architectures import ARCHITECTURES, GGUF_ARCHITECTURE, TOLERANCE, Architecture, reference_model, shapescript_weights

# examples/llama.ss: H key/value heads as many as query heads. An architecture of the same name
# in ARCHITECTURES replaces this one. Those --gguf refuses (a sliding window) have no file to compare.
CASES = {"llama": Architecture("llama.ss", "Llama", "LlamaForCausalLM", "LlamaConfig", D=64, H=2, Hkv=2, F=192, V=512,
                               L=2, P=256, rope_theta=10000.0, eps=1e-5, qkv_bias=False),
         **{name: arch for name, arch in ARCHITECTURES.items() if GGUF_ARCHITECTURE[name]}}

# What llama.cpp reads of the model (besides the tokenizer, which only the converter's file has):
# these keys, under the architecture's name, must be in both files and equal.
HYPERPARAMETERS = ["block_count", "context_length", "embedding_length", "feed_forward_length", "attention.head_count",
                   "attention.head_count_kv", "rope.freq_base", "attention.layer_norm_rms_epsilon"]
# What llama.cpp uses for a key a file leaves out (llama-model.cpp): the converter writes no rotary
# base for Gemma, whose base is llama.cpp's default.
LLAMA_CPP_DEFAULTS = {"rope.freq_base": 10000.0}


def sentencepiece_model(folder, vocab_size: int) -> None:
    """FOLDER/tokenizer.model: a SentencePiece BPE model of VOCAB_SIZE pieces (the 256 bytes among
    them) trained on the repository's docs."""
    import io

    import sentencepiece

    text = [line for path in sorted([ROOT / "README.md", *(ROOT / "docs").glob("*.md")])
            for line in path.read_text().splitlines() if line.strip()]
    model = io.BytesIO()
    sentencepiece.SentencePieceTrainer.train(sentence_iterator=iter(text), model_writer=model, vocab_size=vocab_size,
                                             model_type="bpe", byte_fallback=True, minloglevel=2)
    (folder / "tokenizer.model").write_bytes(model.getvalue())


def shapescript_gguf(arch: Architecture, model, folder):
    """ShapeScript's GGUF of transformers' model (in FOLDER/hf): its weights mapped onto the
    example's parameters, exported with `--gguf`. (With `shapescript import-weights hf` the mapping
    is the binary's: ckpt.pt would be its output.)"""
    torch.save(shapescript_weights(arch, model), folder / "ckpt.pt")
    out = folder / "shapescript.gguf"
    result = cli("export", arch.source, "--gguf", out, "--weights", "ckpt.pt", cwd=folder)
    assert result.returncode == 0, result.stderr
    return out


# The converter run as it is, except that an architecture whose vocabulary it reads as byte-level BPE
# (Qwen2-MoE, Qwen3-MoE, BLOOM: `_set_vocab_gpt2`) reads the SentencePiece model beside the weights:
# it names a BPE pre-tokenizer by the hash of a real tokenizer's output, which no tiny one matches.
# The vocabulary is no part of the comparison; the tensors and hyperparameters are the converter's own.
RUN_CONVERTER = """
import runpy, sys
from pathlib import Path
converter = sys.argv[1]
sys.path.insert(0, str(Path(converter).parent))
sys.path.insert(1, str(Path(converter).parent / 'gguf-py'))
from conversion import base
base.TextModel._set_vocab_gpt2 = base.TextModel._set_vocab_sentencepiece
# GPT-NeoX's and Cohere 2's converters read the rotated fraction as transformers 4 saved it
# (`rotary_pct`); transformers 5 keeps it in rope_parameters.
load_hparams = base.ModelBase.load_hparams
def load_hparams_v4(dir_model, is_mistral_format):
    config = load_hparams(dir_model, is_mistral_format)
    config.setdefault("rotary_pct", (config.get("rope_parameters") or {}).get("partial_rotary_factor", 1.0))
    return config
base.ModelBase.load_hparams = staticmethod(load_hparams_v4)
# A test's vocabulary is its own: no pre-tokenizer of llama.cpp's table hashes to it (BERT's WordPiece).
base.TextModel.get_vocab_base_pre = lambda self, tokenizer: "default"
sys.argv = sys.argv[1:]
runpy.run_path(converter, run_name='__main__')
"""


def converter_gguf(folder):
    """llama.cpp's convert_hf_to_gguf.py on FOLDER/hf, in float32."""
    out = folder / "converter.gguf"
    result = subprocess.run([PYTHON, "-c", RUN_CONVERTER, str(llama_cpp_converter()), str(folder / "hf"), "--outtype", "f32",
                             "--outfile", str(out)], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-5000:]
    return out


@pytest.fixture(scope="module", params=sorted(CASES))
def case(request, tmp_path_factory):
    arch = CASES[request.param]
    folder = tmp_path_factory.mktemp(request.param)
    model = reference_model(arch, seed=11)
    model.save_pretrained(folder / "hf")
    sentencepiece_model(folder / "hf", arch.V)
    ids = torch.randint(0, arch.V, (13,), generator=torch.Generator().manual_seed(5))
    with torch.no_grad():
        expected = model(input_ids=ids[None]).logits[0]
    return arch, converter_gguf(folder), shapescript_gguf(arch, model, folder), ids, expected


def relative_difference(got, expected) -> float:
    return float(np.abs(got - expected).max() / np.abs(expected).max())


def test_same_logits_in_llama_cpp(case):
    arch, theirs, ours, ids, expected = case
    from_theirs = llama_cpp_logits(theirs, ids.tolist())
    from_ours = llama_cpp_logits(ours, ids.tolist())
    expected = expected.numpy()
    between = relative_difference(from_ours, from_theirs)
    ours_vs_hf, theirs_vs_hf = relative_difference(from_ours, expected), relative_difference(from_theirs, expected)
    print(f"{arch.example} in llama.cpp: --gguf vs convert_hf_to_gguf.py {between:.2e}, "
          f"vs transformers {ours_vs_hf:.2e} (converter's: {theirs_vs_hf:.2e}) of the largest logit")
    assert between < TOLERANCE
    assert ours_vs_hf < TOLERANCE
    assert theirs_vs_hf < TOLERANCE


def fields(path) -> dict:
    import gguf

    return {key: field.contents() for key, field in gguf.GGUFReader(str(path)).fields.items()}


def tensors(path) -> dict:
    import gguf

    return {t.name: t for t in gguf.GGUFReader(str(path)).tensors}


def test_same_hyperparameters(case):
    arch, theirs, ours, *_ = case
    theirs, ours = fields(theirs), fields(ours)
    name = ours["general.architecture"]
    assert theirs["general.architecture"] == name
    differ = {key: (ours.get(key), theirs.get(key)) for key in sorted(set(ours) | set(theirs))
              if key.startswith(name + ".") and ours.get(key) != theirs.get(key)}
    print(f"{arch.example}: `{name}`; keys that differ (--gguf, converter): {differ or 'none'}")
    for key in HYPERPARAMETERS:
        theirs_value = theirs.get(f"{name}.{key}", LLAMA_CPP_DEFAULTS.get(key))
        assert ours[f"{name}.{key}"] == pytest.approx(theirs_value, rel=1e-6), key


def test_same_tensors(case):
    arch, theirs, ours, *_ = case
    theirs, ours = tensors(theirs), tensors(ours)
    assert {n: tuple(t.shape) for n, t in ours.items()} == {n: tuple(t.shape) for n, t in theirs.items()}
    differ = {n: float(np.abs(np.asarray(ours[n].data) - np.asarray(theirs[n].data)).max()) for n in sorted(ours)
              if not np.array_equal(np.asarray(ours[n].data), np.asarray(theirs[n].data))}
    print(f"{arch.example}: {len(ours)} tensors; those that differ (largest difference): {differ or 'none'}")
    assert not differ

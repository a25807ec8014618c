"""`shapescript export FILE --gguf OUT`: which of llama.cpp's architectures a model is, and the file.

The files are checked twice: with the `gguf` package (names, shapes, metadata, weights) and with
real llama.cpp, built from the source llama-cpp-python ships on PyPI by scripts/llama_cpp.sh
(scripts/setup.sh runs it): its logits for a sequence of token ids, and llama-server answering a
completion request on loopback.

    $SHAPESCRIPT_VENV/bin/python -m pytest tests/python/test_gguf_export.py
"""
from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import urllib.request

import gguf
import numpy as np
import pytest
import torch


from conftest import (EXAMPLES, LOUD_PACKAGE, ROOT as REPO, cli, free_port, fresh_python, llama_cpp_dir, llama_cpp_logits,
                      llama_cpp_module, model_class, place, unit_scale_weights, wait_until_healthy)

sys.path.insert(0, str(REPO / "python"))
from shapescript.runtime import gguf_export  # noqa: E402  (the runtime's reference and permutation)

LLAMA = (EXAMPLES / "llama.ss").read_text()


def export(tmp_path, source, *extra, name="model"):
    path = place(tmp_path, source, f"{name}.ss")
    out = tmp_path / f"{name}.gguf"
    # The file by its name, as a user in its folder gives it: refusals say `model.ss:LINE:COL`.
    return cli("export", path.name, "--gguf", out, *extra, cwd=tmp_path), out


def refusal(result):
    """The refusal's first `error:` line (with --verbose, the export's other output comes before it)."""
    assert result.returncode == 1, result.stdout + result.stderr
    lines = result.stderr.splitlines()
    assert lines[-1].startswith("error: exporting `forward` failed: `") and lines[-1].endswith("` exited with exit status: 1")
    return next(line for line in lines if line.startswith("error: "))


def fields(path):
    reader = gguf.GGUFReader(str(path))
    return reader, {k: f.contents() for k, f in reader.fields.items() if not k.startswith("tokenizer.ggml.")}


# --- which architecture ---------------------------------------------------------------------------


def test_reasons_are_computed_from_the_model(tmp_path):
    tiny = (EXAMPLES / "tiny.ss").read_text()
    result, out = export(tmp_path, tiny)
    # The families' reasons, as the book's chapter prints them (its transcript is test_chapter's).
    assert refusal(result) == (
        "error: `Tiny` isn't an architecture llama.cpp has: not `llama`: it has 3 fields stacked along its 2 blocks "
        "and 0 other fields, but `llama` has 9 tensors in each block and 1 other tensor; not `gpt2`: llama.cpp's "
        "architecture normalizes with `layer_norm` only, but the model uses rms_norm"
    )
    assert not out.exists()
    # With --verbose, each difference with the line it comes from, and the nearest architecture.
    result, out = export(tmp_path, tiny, "--verbose")
    assert refusal(result) == (
        "error: `Tiny` isn't an architecture llama.cpp has: not `llama`: it has 3 fields stacked along its 2 blocks at "
        "model.ss:25:5 and 0 other fields, but `llama` has 9 tensors in each block and 1 other tensor; not `gpt2`: llama.cpp's "
        "architecture normalizes with `layer_norm` only, but the model uses rms_norm at model.ss:26:27; the nearest is `llama`"
    )
    assert not out.exists()
    # One more block, a final norm, and layer_norm instead of rms_norm: every count and name follows.
    changed = (
        tiny.replace("dim L  = 2", "dim L  = 3")
        .replace("    param norm:  [L D]     = ones", "    param norm:  [L D]     = ones\n    param bias:  [L D]     = zeros\n    param final: [D]       = ones")
        .replace("rms_norm(x, over=D, weight=m.norm[l])", "layer_norm(x, over=D, weight=m.norm[l], bias=m.bias[l])")
        .replace("return linear(x, m.wte)", "return linear(layer_norm(x, over=D, weight=m.final), m.wte)")
    )
    result, _ = export(tmp_path, changed, "--verbose")
    assert refusal(result) == (
        "error: `Tiny` isn't an architecture llama.cpp has: not `llama`: llama.cpp's architecture normalizes with `rms_norm` "
        "only, but the model uses layer_norm at model.ss:28:27; not `gpt2`: it has 4 fields stacked along its 3 "
        "blocks at model.ss:27:5 and 1 other field, but `gpt2` has 12 tensors in each block and 3 other tensors; the nearest is `gpt2`"
    )


def test_llama_example_is_written_as_llama(tmp_path):
    result, out = export(tmp_path, LLAMA)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"wrote {out}: llama.cpp's `llama`, 2 blocks of 2 heads, vocabulary of 512, 21 tensors, ")
    reader, meta = fields(out)
    assert meta["general.architecture"] == "llama"
    assert (meta["llama.block_count"], meta["llama.embedding_length"], meta["llama.feed_forward_length"]) == (2, 64, 192)
    assert (meta["llama.attention.head_count"], meta["llama.attention.head_count_kv"], meta["llama.rope.dimension_count"]) == (2, 2, 32)
    assert meta["llama.rope.freq_base"] == 10000.0 and meta["llama.context_length"] == 256
    assert abs(meta["llama.attention.layer_norm_rms_epsilon"] - 1e-5) < 1e-12
    names = {t.name: tuple(int(s) for s in t.shape) for t in reader.tensors}
    assert names["blk.1.ffn_gate.weight"] == (64, 192)  # ggml's order: {n_embd, n_ff}
    assert names["output.weight"] == (64, 512) and "output_norm.weight" in names and len(names) == 21
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(os.stat(out).st_mode) == 0o666 & ~umask  # a new file's permissions, not a temporary file's 0600


def test_gpt2_example_is_written_as_gpt2_with_tied_output(tmp_path):
    result, out = export(tmp_path, (EXAMPLES / "gpt2.ss").read_text())
    assert result.returncode == 0, result.stderr
    assert "llama.cpp's `gpt2`, 2 blocks of 4 heads, vocabulary of 500, 28 tensors" in result.stdout
    reader, meta = fields(out)
    assert meta["general.architecture"] == "gpt2" and meta["gpt2.context_length"] == 128
    names = {t.name for t in reader.tensors}
    assert "output.weight" not in names  # tied: llama.cpp reuses token_embd
    assert {"position_embd.weight", "blk.0.attn_qkv.bias", "output_norm.bias"} <= names


@pytest.mark.parametrize(
    "old, new, reason",
    [
        ("silu(linear(x, w_gate))", 'gelu(linear(x, w_gate), approximate="tanh")',
         'not `llama`: llama.cpp\'s architecture activates with `silu` only, but the model uses gelu(approximate="tanh")'),
        ("return linear(rms_norm(x, over=D, weight=m.norm), m.w_out)", "return linear(x, m.w_out)",
         "not `llama`: it has 9 fields stacked along its 2 blocks at model.ss:47:5 and 0 other fields, but `llama` has 9 tensors "
         "in each block and 1 other tensor"),
        ("log(10000)", "log(5000)", "not `llama`: it computes something else: of "),
        ("x = x + feed_forward(", "x = feed_forward(", "not `llama`: it computes something else: of "),
    ],
    ids=["gelu-for-silu", "no-final-norm", "another-rope-base", "no-residual"],
)
def test_a_llama_that_differs_in_one_place_is_refused_naming_it(tmp_path, old, new, reason):
    assert old in LLAMA
    source = LLAMA.replace(old, new)
    if new == "return linear(x, m.w_out)":
        source = source.replace("    param norm:      [D]     = ones\n", "")  # no final norm at all
    result, out = export(tmp_path, source, "--verbose")
    first = refusal(result)
    assert first.startswith("error: `Llama` isn't an architecture llama.cpp has: ")
    assert reason in first, first
    assert not out.exists()


GEMMA = (EXAMPLES / "gemma.ss").read_text()


@pytest.mark.parametrize(
    "old, new, reason",
    [
        ("x = embedding(ids, m.wte) |> scale(sqrt(D))", "x = embedding(ids, m.wte)",
         "not `gemma`: it computes something else: of "),
        ("return linear(rms_norm(x, over=D, weight=1 + m.norm, eps=1e-6), m.wte)",
         "return linear(rms_norm(x, over=D, weight=1 + m.norm, eps=1e-6), m.w_out)",
         "not `gemma`: llama.cpp's `gemma` reads its output layer from the token embedding, but the model's output layer `w_out` "
         "isn't its embedding `wte`"),
    ],
    ids=["unscaled-embedding", "untied-output"],
)
def test_a_gemma_that_differs_in_one_place_is_refused_naming_it(tmp_path, old, new, reason):
    assert old in GEMMA
    source = GEMMA.replace(old, new)
    if "m.w_out" in new:
        source = source.replace("    param norm:      [D]       = zeros\n", "    param norm:      [D]       = zeros\n    param w_out:     [V D]     = normal(std=0.02)\n")
    result, out = export(tmp_path, source)
    first = refusal(result)
    assert first.startswith("error: `Gemma` isn't an architecture llama.cpp has: not `llama`: "), first
    assert reason in first, first
    assert not out.exists()


QWEN2_MOE = (EXAMPLES / "qwen2_moe.ss").read_text()
RENORMALIZED = (
    "    top, chosen = topk(softmax(linear(x, router), over=E), k=K, over=E)\n"
    "    routed = experts(x, chosen, top, ",
    "    top, chosen = topk(softmax(linear(x, router), over=E), k=K, over=E)\n"
    "    weights = top / rearrange(sum(top, over=K), b n -> b n 1)\n"
    "    routed = experts(x, chosen, weights, ",
)


@pytest.mark.parametrize(
    "old, new, expected",
    [
        ("sigmoid(linear(x, shared_score))", "tanh(linear(x, shared_score))",
         "error: `Qwen2Moe` isn't an architecture llama.cpp has: not `llama`: llama.cpp's architecture activates with `silu` only, "
         "but the model uses tanh at model.ss:69:21; not `gpt2`: llama.cpp's architecture normalizes with `layer_norm` only, but "
         "the model uses rms_norm at model.ss:74:13; not `qwen2moe`: llama.cpp's architecture activates with `silu` only, but the "
         "model uses tanh at model.ss:69:21; not `gpt-oss`: llama.cpp's architecture activates with `sigmoid` only, but the model "
         "uses silu and tanh at model.ss:68:58; not `deepseek2`: llama.cpp's architecture activates with `silu` only, but the "
         "model uses tanh at model.ss:69:21; the nearest is `qwen2moe`"),
        (*RENORMALIZED,
         "error: `Qwen2Moe` isn't an architecture llama.cpp has: not `llama`: llama.cpp's architecture activates with `silu` only, "
         "but the model uses sigmoid at model.ss:70:21; not `gpt2`: llama.cpp's architecture normalizes with `layer_norm` only, "
         "but the model uses rms_norm at model.ss:75:13; not `qwen2moe`: it computes something else: of 400 readings of its "
         "fields as `qwen2moe`'s tensors, the nearest (2 heads of 32, rotary pairs (i, i + rotated / 2) on 32 of each head, base "
         "1e+06, 2 of 4 experts per token and a shared one) gives logits that differ by 0.1 of their largest value (its blocks "
         "at model.ss:74:5); not `gpt-oss`: llama.cpp's architecture activates with `sigmoid` only, but the model uses silu at "
         "model.ss:69:62; not `deepseek2`: its fields' shapes don't fit `deepseek2`'s tensors: no field of its blocks at "
         "model.ss:74:5 is left with the shape of `blk.N.ffn_norm.weight`; the nearest is `qwen2moe`"),
    ],
    ids=["tanh-shared-gate", "renormalized-experts"],
)
def test_a_refusal_names_every_architecture_tried_and_the_nearest_with_its_line(tmp_path, old, new, expected):
    """Golden refusals (with --verbose): each architecture tried with its first difference and the line it comes from
    (a built-in's call, the blocks' loop), and the nearest: the one with the model's numbers of
    tensors whose checks it passed furthest (llama.cpp's qwen2moe never renormalizes its experts' weights)."""
    assert old in QWEN2_MOE
    result, out = export(tmp_path, QWEN2_MOE.replace(old, new), "--verbose")
    assert refusal(result) == expected
    assert not out.exists()


def test_a_gemma_written_with_its_norms_as_multipliers_is_gemma(tmp_path):
    """`weight=m.norm` with the weight stored as the multiplier: the reading without the + 1."""
    source = GEMMA.replace("weight=1 + m.", "weight=m.").replace("= zeros", "= ones")
    result, out = export(tmp_path, source)
    assert result.returncode == 0, result.stderr
    assert "llama.cpp's `gemma`, 2 blocks of 4 heads" in result.stdout
    reader, _ = fields(out)
    norm = next(t for t in reader.tensors if t.name == "output_norm.weight")
    assert float(norm.data.min()) == 1.0 == float(norm.data.max())  # the initializer's ones, not ones + 1


def test_a_phi3_whose_fused_halves_are_the_other_way_round_is_refused(tmp_path):
    """llama.cpp's phi3 gates with the first half of the fused projection: a model gating with the
    second computes something else, and the refusal says how near the nearest reading came."""
    phi3 = (EXAMPLES / "phi3.ss").read_text()
    old = "return linear(silu(gate) * up, w_down)"
    assert old in phi3
    result, out = export(tmp_path, phi3.replace(old, "return linear(gate * silu(up), w_down)"))
    first = refusal(result)
    assert "; not `phi3`: it computes something else: of " in first and "the nearest (4 heads of 64" in first, first
    assert not out.exists()


def test_llama_with_pairs_rotary_form_is_written_without_permuting(tmp_path):
    # Rotating adjacent pairs (2i, 2i+1) is llama.cpp's own form, so Q and K are written as they are.
    pairs = LLAMA.replace("x1, x2 = x |> split(b H n (2 h) -> b H n h)", "x1, x2 = x |> split(b H n (h 2) -> b H n h)").replace(
        "    return concat(x1 * cos(angle) - x2 * sin(angle), x2 * cos(angle) + x1 * sin(angle), over=h)",
        "    y = concat(x1 * cos(angle) - x2 * sin(angle), x2 * cos(angle) + x1 * sin(angle), over=h)\n"
        "    return y |> rearrange(b H n (2 h) -> b H n (h 2))",
    )
    assert pairs.count("(h 2)") == 2
    torch.save(unit_checkpoint(seed=4), tmp_path / "ckpt.pt")
    result, out = export(tmp_path, pairs, "--weights", str(tmp_path / "ckpt.pt"))
    assert result.returncode == 0, result.stderr
    data = {t.name: np.array(t.data) for t in gguf.GGUFReader(str(out)).tensors}
    ckpt = torch.load(tmp_path / "ckpt.pt")
    assert np.array_equal(data["blk.0.attn_q.weight"], ckpt["wq"][0].numpy())
    assert np.array_equal(data["blk.0.attn_k.weight"], ckpt["wk"][0].numpy())


LLAMA_SHAPES = {"wte": (512, 64), "attn_norm": (2, 64), "wq": (2, 64, 64), "wk": (2, 64, 64), "wv": (2, 64, 64), "wo": (2, 64, 64),
                "ffn_norm": (2, 64), "w_gate": (2, 192, 64), "w_up": (2, 192, 64), "w_down": (2, 64, 192), "norm": (64,), "w_out": (512, 64)}


def unit_checkpoint(seed):
    generator = torch.Generator().manual_seed(seed)
    return {name: torch.randn(shape, generator=generator) for name, shape in LLAMA_SHAPES.items()}


def test_weights_land_in_the_file_with_q_k_rows_in_llamas_rotary_order(tmp_path):
    ckpt = unit_checkpoint(seed=3)
    torch.save(ckpt, tmp_path / "ckpt.pt")
    result, out = export(tmp_path, LLAMA, "--weights", str(tmp_path / "ckpt.pt"))
    assert result.returncode == 0, result.stderr
    reader = gguf.GGUFReader(str(out))
    data = {t.name: np.array(t.data) for t in reader.tensors}
    assert np.array_equal(data["blk.1.ffn_down.weight"], ckpt["w_down"][1].numpy())
    assert np.array_equal(data["blk.0.attn_v.weight"], ckpt["wv"][0].numpy())
    assert np.array_equal(data["blk.0.attn_q.weight"], gguf_export.permute_rows_for_norm_rope(ckpt["wq"][0], 2).numpy())
    assert not np.array_equal(data["blk.0.attn_q.weight"], ckpt["wq"][0].numpy())
    # Written out by hand: in each head of 32, row 2j is row j and row 2j+1 is row j+16 (pairs (i, i+16) become (2i, 2i+1)).
    rows = [h * 32 + j // 2 + (j % 2) * 16 for h in range(2) for j in range(32)]
    assert np.array_equal(data["blk.0.attn_q.weight"], ckpt["wq"][0][rows].numpy())
    assert np.array_equal(data["blk.1.attn_k.weight"], ckpt["wk"][1][rows].numpy())


def test_bad_weights_are_named_and_nothing_is_overwritten(tmp_path):
    (tmp_path / "model.gguf").write_bytes(b"keep me")
    torch.save({"wte": torch.zeros(3, 3)}, tmp_path / "bad.pt")
    result, out = export(tmp_path, LLAMA, "--weights", str(tmp_path / "bad.pt"))
    assert result.returncode == 1
    assert "`" + str(tmp_path / "bad.pt") + "`'s `wte` is [3 3], but `Llama.wte` is [512 64]" in result.stderr
    assert out.read_bytes() == b"keep me"


def test_tokenizer_is_copied_from_a_gguf_file(tmp_path):
    vocab = tmp_path / "vocab.gguf"
    writer = gguf.GGUFWriter(str(vocab), "llama")
    writer.add_tokenizer_model("llama")
    writer.add_token_list([f"tok{i}" for i in range(512)])
    writer.add_token_scores([float(-i) for i in range(512)])
    writer.add_bos_token_id(5)
    writer.write_header_to_file(); writer.write_kv_data_to_file(); writer.write_tensors_to_file(); writer.close()  # noqa: E702
    result, out = export(tmp_path, LLAMA, "--tokenizer", str(vocab))
    assert result.returncode == 0, result.stderr
    reader = gguf.GGUFReader(str(out))
    assert reader.fields["tokenizer.ggml.tokens"].contents()[7] == "tok7"
    assert reader.fields["tokenizer.ggml.bos_token_id"].contents() == 5
    small = LLAMA.replace("dim V   = 512", "dim V   = 300")
    result, small_out = export(tmp_path, small, "--tokenizer", str(vocab), name="small")
    assert "has a vocabulary of 512 tokens, but the model's embedding has 300 rows" in result.stderr
    assert result.returncode == 1 and not small_out.exists()


def test_a_function_that_is_not_a_language_model_is_refused(tmp_path):
    source = "dim D = 4\n\nmodel M:\n    param w: [D D] = normal(std=0.02)\n\nfn forward(m: M, x: [b D]) -> [b D]:\n    return linear(x, m.w)\n"
    result, _ = export(tmp_path, source)
    # An encoder by its description (the model, then a tensor), but of reals: no llama.cpp architecture reads it.
    assert refusal(result) == ("error: `M` isn't an architecture llama.cpp has: llama.cpp's encoders read token ids, and its input `x` "
                               "is a tensor of reals")


# --- real llama.cpp -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def llama_cpp():
    return llama_cpp_module()


def compiled_forward(source_path, weights, ids):
    """The ShapeScript forward, compiled by the pt2 code generator, on the same weights."""
    compiled, model_name = load_reference(source_path)
    module = getattr(compiled, model_name)()
    module.load_state_dict(weights)
    positions = torch.arange(ids.shape[1]).expand(ids.shape[0], -1)
    with torch.no_grad():
        return compiled.forward(module, ids, positions)


def load_reference(source_path):
    os.environ.setdefault("SHAPESCRIPT_BUILD", str(REPO / "build"))
    import shapescript

    compiled = shapescript.compile(source_path)
    return compiled, model_class(compiled).__name__


def random_checkpoint(source_path, seed):
    """Weights of unit scale, so that the logits depend on every part of the model."""
    reference, name = load_reference(source_path)
    stacked_norm = lambda key, value: value.dim() == 1 or (value.dim() == 2 and key.endswith(("norm", "_w", "_b", "final")))  # noqa: E731
    return unit_scale_weights(getattr(reference, name)().state_dict(), seed, is_norm=stacked_norm)


# llama.cpp computes in float32 as the compiled forward does, only in another order (measured: about
# 1e-6 of the largest logit). Its GELU reads a table of float16 values (GGML_GELU_FP16), so gpt2
# agrees only to about float16's precision (measured: about 2e-4).
TOLERANCE = {"llama.ss": 1e-5, "tiny_llama.ss": 1e-5, "gpt2.ss": 1e-3}


@pytest.mark.parametrize("example", ["llama.ss", "gpt2.ss", "tiny_llama.ss"])
def test_llama_cpp_logits_match_the_shapescript_forward(tmp_path, llama_cpp, example):
    source = EXAMPLES / example
    ckpt = random_checkpoint(source, seed=7)
    torch.save(ckpt, tmp_path / "ckpt.pt")
    out = tmp_path / (source.stem + ".gguf")
    result = cli("export", source, "--gguf", out, "--weights", tmp_path / "ckpt.pt")
    assert result.returncode == 0, result.stderr
    generator = torch.Generator().manual_seed(11)
    vocab = ckpt["wte"].shape[0]
    ids = torch.randint(3, vocab, (1, 24), generator=generator)
    expected = compiled_forward(source, ckpt, ids)[0].numpy()
    got = llama_cpp_logits(out, ids[0].tolist())
    relative = np.abs(got - expected).max() / np.abs(expected).max()
    print(f"{example}: largest difference {relative:.2e} of the largest logit")
    assert relative < TOLERANCE[example]


def test_exercise_4_llama_server_answers_a_completion(tmp_path):
    path = llama_cpp_dir()
    source = EXAMPLES / "tiny_llama.ss"
    ckpt = random_checkpoint(source, seed=5)
    torch.save(ckpt, tmp_path / "ckpt.pt")
    out = tmp_path / "tiny.gguf"
    result = cli("export", source, "--gguf", out, "--weights", tmp_path / "ckpt.pt")
    assert result.returncode == 0, result.stderr
    port = free_port()
    log = open(tmp_path / "server.log", "w")
    server = subprocess.Popen([str(path / "bin" / "llama-server"), "-m", str(out), "--host", "127.0.0.1", "--port", str(port),
                               "-c", "256", "-t", "2", "-np", "1", "--no-webui"], stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_until_healthy(f"http://127.0.0.1:{port}/health", server, tmp_path / "server.log", 60, "llama-server")
        prompt = [17, 42, 99, 7]
        body = json.dumps({"prompt": prompt, "n_predict": 6, "temperature": 0, "top_k": 1, "return_tokens": True,
                           "ignore_eos": True, "cache_prompt": False}).encode()
        request = urllib.request.Request(f"http://127.0.0.1:{port}/completion", data=body, headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=60) as r:
            answer = json.loads(r.read())
    finally:
        server.terminate()
        server.wait(timeout=30)
    # Greedy decoding with the ShapeScript forward gives the same tokens.
    ids = list(prompt)
    for _ in range(6):
        logits = compiled_forward(source, ckpt, torch.tensor([ids]))[0, -1]
        ids.append(int(logits.argmax()))
    assert answer["tokens"] == ids[len(prompt):], answer
    assert answer["content"] == "".join(f" {t}" for t in ids[len(prompt):])


def test_a_program_that_prints_exports_as_one_that_does_not(tmp_path):
    python = fresh_python(tmp_path, lend_packages=True, modules=LOUD_PACKAGE)
    quiet, _ = export(tmp_path, LLAMA, name="quiet")
    result, out = export(tmp_path, "import python loud\n\n" + LLAMA, "--python", python)
    assert result.returncode == 0, result.stderr
    assert quiet.returncode == 0, quiet.stderr
    assert result.stdout == quiet.stdout.replace("quiet.gguf", "model.gguf")
    assert out.exists()


def test_gemma2s_window_is_read_by_computing(tmp_path):
    """llama.cpp's gemma2 slides a window over its even blocks: the search reads its width from what
    the model computes (the source's `l % 2 == 0` says nothing it reads), and a model whose window is on
    the odd blocks computes something llama.cpp's gemma2 can't."""
    gemma2 = (EXAMPLES / "gemma2.ss").read_text()
    assert "dim W   = 8\n" in gemma2 and "if l % 2 == 0:" in gemma2
    result, out = export(tmp_path, gemma2.replace("dim W   = 8\n", "dim W   = 5\n"), name="five")
    assert result.returncode == 0, result.stderr
    assert "llama.cpp's `gemma2`" in result.stdout
    _, meta = fields(out)
    assert meta["gemma2.attention.sliding_window"] == 5
    assert (meta["gemma2.attn_logit_softcapping"], meta["gemma2.final_logit_softcapping"]) == (50.0, 30.0)
    result, out = export(tmp_path, gemma2.replace("if l % 2 == 0:", "if l % 2 == 1:"), name="odd")
    assert "not `gemma2`: it computes something else: of " in refusal(result)
    assert not out.exists()


def test_gemma3s_blocks_and_bases_are_the_models(tmp_path, llama_cpp):
    """llama.cpp's gemma3 slides the blocks the file's `sliding_window_pattern` says and rotates them
    with `rope.freq_base_swa`: both come from the model (here the odd block slides, with base 500000),
    not from llama.cpp's defaults (five blocks in six, 10000), and llama.cpp computes its logits."""
    gemma3 = (EXAMPLES / "gemma3.ss").read_text()
    assert "if l % 2 == 0:" in gemma3 and gemma3.count("pos, 10000)") == 2
    source = place(tmp_path, gemma3.replace("if l % 2 == 0:", "if l % 2 == 1:").replace("pos, 10000)", "pos, 500000)"), "odd.ss")
    ckpt = random_checkpoint(source, seed=7)
    torch.save(ckpt, tmp_path / "ckpt.pt")
    result, out = export(tmp_path, source.read_text(), "--weights", tmp_path / "ckpt.pt", name="odd")
    assert result.returncode == 0, result.stderr
    assert "llama.cpp's `gemma3`" in result.stdout
    _, meta = fields(out)
    assert meta["gemma3.attention.sliding_window_pattern"] == [False, True]
    assert (meta["gemma3.attention.sliding_window"], meta["gemma3.rope.freq_base_swa"], meta["gemma3.rope.freq_base"]) == (8, 500000.0, 1e6)
    ids = torch.randint(3, ckpt["wte"].shape[0], (1, 24), generator=torch.Generator().manual_seed(11))
    expected = compiled_forward(source, ckpt, ids)[0].numpy()
    relative = np.abs(llama_cpp_logits(out, ids[0].tolist()) - expected).max() / np.abs(expected).max()
    print(f"gemma3.ss, odd block sliding: largest difference {relative:.2e} of the largest logit")
    assert relative < 2e-3  # llama.cpp's GELU reads a float16 table


def test_deepseek2s_routing_and_rotary_layout_are_found_by_computing(tmp_path, llama_cpp):
    """examples/deepseek_v3.ss's weights stacked over a run of blocks (a dense first block, sparse ones
    after it) become each block's tensors; the routing the weights don't show is read from what the model
    computes: here DeepSeek-V2's softmax scores, weights not renormalized and scaled by 1.75 (fitted, not
    listed anywhere), and rotary on pairs (i, i + Dr/2), so the rotary rows are laid out as llama.cpp's
    pairs (2i, 2i + 1). llama.cpp computes the model's logits."""
    deepseek = (EXAMPLES / "deepseek_v3.ss").read_text()
    changes = [("scores = sigmoid(linear(x, router))", "scores = softmax(linear(x, router), over=E)"),
               ("weights = top / (rearrange(sum(top, over=K), b n -> b n 1) + 1e-20) * 2.5", "weights = top * 1.75"),
               ("x |> split(b g n (h 2) -> b g n h)", "x |> split(b g n (2 h) -> b g n h)")]
    for old, new in changes:
        assert old in deepseek, old
        deepseek = deepseek.replace(old, new)
    source = place(tmp_path, deepseek, "v2.ss")
    ckpt = random_checkpoint(source, seed=5)
    torch.save(ckpt, tmp_path / "ckpt.pt")
    result, out = export(tmp_path, deepseek, "--weights", tmp_path / "ckpt.pt", name="v2")
    assert result.returncode == 0, result.stderr
    assert "llama.cpp's `deepseek2`" in result.stdout
    reader, meta = fields(out)
    assert meta["deepseek2.expert_weights_scale"] == pytest.approx(1.75)
    assert meta["deepseek2.expert_gating_func"] == int(gguf.ExpertGatingFuncType.SOFTMAX)
    assert "deepseek2.expert_weights_norm" not in meta
    assert meta["deepseek2.leading_dense_block_count"] == 1
    names = {t.name for t in reader.tensors}
    assert {"blk.0.ffn_gate.weight", "blk.1.ffn_gate_exps.weight", "blk.1.exp_probs_b.bias"} <= names
    assert not {"blk.1.ffn_gate.weight", "blk.0.ffn_gate_exps.weight"} & names
    ids = torch.randint(3, ckpt["wte"].shape[0], (1, 24), generator=torch.Generator().manual_seed(11))
    expected = compiled_forward(source, ckpt, ids)[0].numpy()
    relative = np.abs(llama_cpp_logits(out, ids[0].tolist()) - expected).max() / np.abs(expected).max()
    print(f"deepseek_v3.ss as DeepSeek-V2's routing: largest difference {relative:.2e} of the largest logit")
    assert relative < 1e-4


def test_bert_is_written_as_llama_cpps_bert_and_gives_transformers_embeddings(tmp_path):
    """examples/bert.ss with BertModel's weights (a tiny random config, saved with save_pretrained,
    read by import-weights): `--gguf` finds llama.cpp's `bert` by computing, and real llama.cpp's
    per-token embeddings (pooling none; token type 0, as llama.cpp gives every token), from the bindings
    and from llama-server, are transformers' last hidden state within verify's tolerance for llama.cpp's
    GELU table; llama.cpp's own converter writes the same tensors and keys from the folder, with the
    same embeddings."""
    from shapescript.runtime.verify import GGUF_TOLERANCE
    from test_encoders import ENCODERS
    from test_model_zoo import reference_model, relative_difference

    zoo = ENCODERS["bert"]
    model = reference_model(zoo, seed=23)
    model.save_pretrained(tmp_path / "hf", safe_serialization=True)
    imported = cli("import-weights", zoo.source, "hf", "-o", "ckpt.pt", cwd=tmp_path)
    assert imported.returncode == 0, imported.stdout + imported.stderr
    result = cli("export", zoo.source, "--gguf", "bert.gguf", "--weights", "ckpt.pt", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "llama.cpp's `bert`, 2 blocks of 2 heads" in result.stdout, result.stdout
    meta = {k: f.contents() for k, f in gguf.GGUFReader(str(tmp_path / "bert.gguf")).fields.items()}
    assert (meta["bert.attention.causal"], meta["bert.pooling_type"], meta["tokenizer.ggml.token_type_count"]) == (False, 0, 2)
    ids = torch.randint(3, zoo.V, (12,), generator=torch.Generator().manual_seed(5))
    with torch.no_grad():
        expected = model(input_ids=ids[None], token_type_ids=torch.zeros(1, 12, dtype=torch.long)).last_hidden_state[0]
    bindings = llama_cpp_module()

    def embeddings(path):
        llm = bindings.Llama(model_path=str(path), embedding=True, pooling_type=bindings.LLAMA_POOLING_TYPE_NONE,
                             n_ctx=64, n_batch=64, n_ubatch=64, verbose=False, n_threads=2)
        llm.tokenize = lambda *args, **kwargs: ids.tolist()  # the ids as they are: the vocabulary is one token per id
        return torch.tensor(llm.embed("ids", normalize=False))

    got = embeddings(tmp_path / "bert.gguf")
    difference = relative_difference(got, expected)
    print(f"bert.ss as llama.cpp's bert: largest difference {difference:.2e} of the largest value")
    assert difference < GGUF_TOLERANCE["bert"]

    # llama-server serves the same file's per-token embeddings (`--embedding --pooling none`, /embedding).
    port = free_port()
    with open(tmp_path / "server.log", "w") as log:
        server = subprocess.Popen([str(llama_cpp_dir() / "bin" / "llama-server"), "-m", str(tmp_path / "bert.gguf"), "--embedding",
                                   "--pooling", "none", "--host", "127.0.0.1", "--port", str(port), "-c", "64", "-b", "64", "-ub", "64",
                                   "-t", "2", "-np", "1", "--no-webui"], stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_until_healthy(f"http://127.0.0.1:{port}/health", server, tmp_path / "server.log", 60, "llama-server")
        request = urllib.request.Request(f"http://127.0.0.1:{port}/embedding", data=json.dumps({"content": ids.tolist()}).encode(),
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=60) as r:
            served = torch.tensor(json.loads(r.read())[0]["embedding"])
    finally:
        server.terminate()
        server.wait(timeout=30)
    assert served.shape == expected.shape
    assert relative_difference(served, expected) < GGUF_TOLERANCE["bert"]

    # llama.cpp's own converter on the same folder (with a WordPiece vocabulary of the model's size):
    # the same tensors and values, every key it writes, and the same embeddings in llama.cpp.
    from test_convert_compare import converter_gguf, fields, tensors
    import transformers

    (tmp_path / "vocab.txt").write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + [f"t{i}" for i in range(zoo.V - 5)]) + "\n")
    transformers.BertTokenizerFast(vocab_file=str(tmp_path / "vocab.txt")).save_pretrained(tmp_path / "hf")
    theirs = converter_gguf(tmp_path)
    ours_tensors, theirs_tensors = tensors(tmp_path / "bert.gguf"), tensors(theirs)
    assert {n: tuple(t.shape) for n, t in ours_tensors.items()} == {n: tuple(t.shape) for n, t in theirs_tensors.items()}
    for n, t in ours_tensors.items():
        assert np.allclose(np.asarray(t.data), np.asarray(theirs_tensors[n].data), atol=1e-6), n
    ours_fields, theirs_fields = fields(tmp_path / "bert.gguf"), fields(theirs)
    for key in (k for k in theirs_fields if k.startswith("bert.")):
        assert ours_fields[key] == pytest.approx(theirs_fields[key], rel=1e-6), key
    assert relative_difference(got, embeddings(theirs)) < GGUF_TOLERANCE["bert"]


def test_an_encoder_of_pixels_is_refused(tmp_path):
    result = cli("export", EXAMPLES / "vit.ss", "--gguf", tmp_path / "vit.gguf", cwd=tmp_path)
    assert refusal(result) == ("error: `Vit` isn't an architecture llama.cpp has: llama.cpp's encoders read token ids, and its input "
                               "`pixels` is a tensor of reals")
    assert not (tmp_path / "vit.gguf").exists()

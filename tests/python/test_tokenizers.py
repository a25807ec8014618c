"""Tokenizers carried by `export --hf` and `--gguf` (issue 22): from a Hugging Face folder (`--weights
HF_DIR`, `--tokenizer DIR`) or a tokenizer.json (`--tokenizer FILE`).

No hub is reachable, so the tokenizers are trained here: a byte-level BPE with `tokenizers` (GPT-2's
pre-tokenizer, and Qwen2's regular expression), and a SentencePiece BPE with `sentencepiece` read by
transformers' LlamaTokenizer; each saved with save_pretrained beside a Llama of examples/llama_gqa.ss's
dims. The exported folder's tokenizer must tokenize a probe set as the source folder's does in
transformers, and the GGUF file's as `tokenizers` does in real llama.cpp (llama-cpp-python,
vocab_only). Refusals and broken folders write nothing.

    $SHAPESCRIPT_VENV/bin/python -m pytest tests/python/test_tokenizers.py
"""
from __future__ import annotations

import json
import shutil
import subprocess

import pytest
import tokenizers
import torch
import transformers
from tokenizers import decoders, models, pre_tokenizers, trainers

from conftest import EXAMPLES, cli, llama_cpp_module
from test_architectures import ARCHITECTURES, reference_model

SOURCE = EXAMPLES / "llama_gqa.ss"
V = ARCHITECTURES["llama_gqa"].V  # 512

TEXTS = [
    "The quick brown fox jumps over the lazy dog. ",
    "Numbers: 12345 67890 3.14159, 2026-12-05, 1,000,000.",
    "Café, naïve, über, façade, résumé; señor Ñandú.",
    "中文测试，你好世界。日本語のテキスト。",
    "Emoji 😀🎉🚀 and tabs\tand\nnewlines\n\n",
    "def f(x):\n    return x * 2  # code!",
    "Hello, world! How's it going? I'm fine; you'll see.",
    "   leading spaces and  double  spaces",
]
CHAT_TEMPLATE = ("{% for message in messages %}<|im_start|>{{ message['role'] }}\n{{ message['content'] }}<|im_end|>\n{% endfor %}"
                 "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")
# ASCII, leading spaces, digits, punctuation, accented Latin, CJK, emoji, tabs and newlines; special tokens added per tokenizer.
PROBES = [
    "Hello world", " leading space", "   three leading spaces", "trailing space ", "digits 12345 and 3.14159 and 007",
    "punctuation!?;:,.()[]{}\"'-_/\\@#$%^&*", "Café naïve façade résumé Ñandú", "中文测试你好世界", "日本語のテキスト",
    "emoji 😀🎉🚀 done", "tabs\tand\nnewlines\n\n end\r\n", "I'm sure you'll see, can't you?", "", " ", "\n",
    "mixed: x=1.5e-3; print(f'{x}')  # ok",
]


def byte_level_bpe(pre_tokenizer):
    tokenizer = tokenizers.Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizer
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=V, special_tokens=["<|endoftext|>", "<|im_start|>", "<|im_end|>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tokenizer.train_from_iterator(TEXTS * 20, trainer)
    return tokenizer


LLAMA3_REGEX = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
QWEN2_REGEX = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"


def save_with_model(folder, tokenizer):
    """A Llama of llama_gqa.ss's dims and `tokenizer` (transformers') saved together, as a user's checkpoint is."""
    arch = ARCHITECTURES["llama_gqa"]
    model = reference_model(arch, seed=3)
    model.generation_config.bos_token_id = tokenizer.bos_token_id
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def bpe_folder(tmp_path_factory):
    trained = byte_level_bpe(pre_tokenizers.ByteLevel(add_prefix_space=False))
    tokenizer = transformers.PreTrainedTokenizerFast(tokenizer_object=trained, bos_token="<|endoftext|>", eos_token="<|im_end|>",
                                                     chat_template=CHAT_TEMPLATE)
    return save_with_model(tmp_path_factory.mktemp("bpe") / "hf", tokenizer)


@pytest.fixture(scope="module")
def sentencepiece_model(tmp_path_factory):
    """A SentencePiece BPE as Llama's: byte fallback, no normalization; its pieces, and merges ranked as
    transformers' converter ranks them (by the merged piece's id)."""
    import sentencepiece

    work = tmp_path_factory.mktemp("sp")
    (work / "corpus.txt").write_text("\n".join(TEXTS * 20))
    sentencepiece.SentencePieceTrainer.train(input=str(work / "corpus.txt"), model_prefix=str(work / "sp"), vocab_size=V, model_type="bpe",
                                             byte_fallback=True, character_coverage=0.9995, normalization_rule_name="identity",
                                             remove_extra_whitespaces=False, minloglevel=2)
    processor = sentencepiece.SentencePieceProcessor(model_file=str(work / "sp.model"))
    vocab = {processor.id_to_piece(i): i for i in range(processor.get_piece_size())}
    ranked = sorted((vocab[p], vocab[p[:i]], vocab[p[i:]], p[:i], p[i:]) for p in vocab for i in range(1, len(p))
                    if p[:i] in vocab and p[i:] in vocab)
    return work, processor, vocab, [(a, b) for *_, a, b in ranked]


@pytest.fixture(scope="module")
def sp_folder(sentencepiece_model):
    """Llama 2's tokenizer.json: ▁ put before the text and for every space by its normalizer, <s> first."""
    from tokenizers import normalizers, processors

    work, _, vocab, merges = sentencepiece_model
    tokenizer = tokenizers.Tokenizer(models.BPE(vocab, merges, unk_token="<unk>", fuse_unk=True, byte_fallback=True))
    tokenizer.add_special_tokens(["<unk>", "<s>", "</s>"])
    tokenizer.normalizer = normalizers.Sequence([normalizers.Prepend("\u2581"), normalizers.Replace(" ", "\u2581")])
    tokenizer.post_processor = processors.TemplateProcessing(single="<s> $A", special_tokens=[("<s>", 1)])
    tokenizer.decoder = decoders.Sequence([decoders.Replace("\u2581", " "), decoders.ByteFallback(), decoders.Fuse(), decoders.Strip(" ", 1, 0)])
    wrapped = transformers.PreTrainedTokenizerFast(tokenizer_object=tokenizer, bos_token="<s>", eos_token="</s>", unk_token="<unk>")
    return save_with_model(work / "llama2", wrapped)


@pytest.fixture(scope="module")
def sp_transformers_folder(sentencepiece_model):
    """The same pieces as transformers 5's LlamaTokenizer writes them: a Metaspace pre-tokenizer."""
    work, _, vocab, merges = sentencepiece_model
    return save_with_model(work / "transformers", transformers.LlamaTokenizer(vocab=vocab, merges=merges, add_bos_token=True))


@pytest.fixture(scope="module")
def qwen2_json(tmp_path_factory):
    pre = pre_tokenizers.Sequence([pre_tokenizers.Split(tokenizers.Regex(QWEN2_REGEX), "isolated"),
                                   pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    path = tmp_path_factory.mktemp("qwen2") / "tokenizer.json"
    byte_level_bpe(pre).save(str(path))
    return path


@pytest.fixture(scope="module")
def llama3_json(tmp_path_factory):
    pre = pre_tokenizers.Sequence([pre_tokenizers.Split(tokenizers.Regex(LLAMA3_REGEX), "isolated"),
                                   pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    path = tmp_path_factory.mktemp("llama3") / "tokenizer.json"
    data = json.loads(byte_level_bpe(pre).to_str())
    data["model"]["ignore_merges"] = True  # as Llama 3's
    path.write_text(json.dumps(data))
    return path


def probes(special):
    return PROBES + [f"{special[0]}Hello{special[1]}", f"say {special[1]} then {special[0]} again", f"{special[0]}{special[0]}"]


# --- the --hf folder ---------------------------------------------------------------------------------


def test_hf_folder_from_weights_folder_tokenizes_as_its_source(bpe_folder, tmp_path):
    result = cli("export", SOURCE, "--hf", tmp_path / "out", "--weights", bpe_folder, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    out = tmp_path / "out"
    source = transformers.AutoTokenizer.from_pretrained(str(bpe_folder))
    exported = transformers.AutoTokenizer.from_pretrained(str(out), trust_remote_code=True)
    for text in probes(["<|im_start|>", "<|im_end|>"]):
        assert exported(text)["input_ids"] == source(text)["input_ids"], repr(text)
    config = json.loads((out / "tokenizer_config.json").read_text())
    assert config["chat_template"] == CHAT_TEMPLATE == (out / "chat_template.jinja").read_text()
    generation = json.loads((out / "generation_config.json").read_text())
    ids = tokenizers.Tokenizer.from_file(str(out / "tokenizer.json"))
    assert (generation["bos_token_id"], generation["eos_token_id"]) == (ids.token_to_id("<|endoftext|>"), ids.token_to_id("<|im_end|>"))
    model_config = json.loads((out / "config.json").read_text())
    assert model_config["eos_token_id"] == generation["eos_token_id"]
    messages = [{"role": "user", "content": "hi"}]
    assert exported.apply_chat_template(messages, tokenize=False, add_generation_prompt=True) == \
        "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"


def test_hf_folder_with_a_sentencepiece_tokenizer_tokenizes_as_its_source(sp_transformers_folder, tmp_path):
    result = cli("export", SOURCE, "--hf", tmp_path / "out", "--tokenizer", sp_transformers_folder, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    source = transformers.AutoTokenizer.from_pretrained(str(sp_transformers_folder))
    exported = transformers.AutoTokenizer.from_pretrained(str(tmp_path / "out"), trust_remote_code=True)
    for text in probes(["<s>", "</s>"]):
        assert exported(text)["input_ids"] == source(text)["input_ids"], repr(text)
    generation = json.loads((tmp_path / "out" / "generation_config.json").read_text())
    assert (generation["bos_token_id"], generation["eos_token_id"]) == (1, 2)


# --- the GGUF file in llama.cpp ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def llama_cpp():
    return llama_cpp_module()


def llama_cpp_tokens(llama_cpp, gguf_path):
    llm = llama_cpp.Llama(model_path=str(gguf_path), vocab_only=True, verbose=False)
    return lambda text, add_bos=False: llm.tokenize(text.encode("utf-8"), add_bos=add_bos, special=True)


def gguf_export(tmp_path, tokenizer):
    out = tmp_path / "model.gguf"
    result = cli("export", SOURCE, "--gguf", out, "--tokenizer", tokenizer, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    return out


@pytest.mark.parametrize("which", ["bpe", "qwen2", "llama3", "sentencepiece"])
def test_gguf_tokenizes_the_probes_as_tokenizers_does(which, request, llama_cpp, tmp_path):
    import gguf

    fixture, special, model, pre = {"bpe": ("bpe_folder", ["<|im_start|>", "<|im_end|>"], "gpt2", "gpt-2"),
                                    "qwen2": ("qwen2_json", ["<|im_start|>", "<|im_end|>"], "gpt2", "qwen2"),
                                    "llama3": ("llama3_json", ["<|im_start|>", "<|im_end|>"], "gpt2", "llama-bpe"),
                                    "sentencepiece": ("sp_folder", ["<s>", "</s>"], "llama", None)}[which]
    path = request.getfixturevalue(fixture)
    out = gguf_export(tmp_path, path)
    fields = gguf.GGUFReader(str(out)).fields
    assert fields["tokenizer.ggml.model"].contents() == model
    assert (fields["tokenizer.ggml.pre"].contents() if pre else None) == pre
    assert len(fields["tokenizer.ggml.tokens"].contents()) == V
    reference = tokenizers.Tokenizer.from_file(str(path / "tokenizer.json" if path.is_dir() else path))
    tokenize = llama_cpp_tokens(llama_cpp, out)
    for text in probes(special):
        assert tokenize(text) == reference.encode(text, add_special_tokens=False).ids, repr(text)
    if which == "sentencepiece":
        # bos first, as the tokenizer's template puts it; and the pieces are SentencePiece's own
        assert tokenize("Hello", add_bos=True) == reference.encode("Hello").ids == [1] + reference.encode("Hello", add_special_tokens=False).ids
        _, processor, _, _ = request.getfixturevalue("sentencepiece_model")
        for text in PROBES:
            assert tokenize(text) == processor.encode(text), repr(text)
    if which == "bpe":
        assert fields["tokenizer.chat_template"].contents() == CHAT_TEMPLATE
        assert fields["tokenizer.ggml.eos_token_id"].contents() == reference.token_to_id("<|im_end|>")
        assert tokenize("Hello", add_bos=True) == reference.encode("Hello").ids  # no bos: its template puts none


# --- refusals and broken folders: nothing written ------------------------------------------------------------


def refused(tmp_path, tokenizer, *, fmt="--gguf"):
    out = tmp_path / ("model.gguf" if fmt == "--gguf" else "out")
    result = cli("export", SOURCE, fmt, out, "--tokenizer", tokenizer, cwd=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert not out.exists()
    return [line for line in result.stderr.splitlines() if line.startswith("error: ") and " failed: `" not in line][0]


def test_a_pre_tokenizer_llama_cpp_lacks_is_refused_naming_it(tmp_path):
    path = tmp_path / "tokenizer.json"
    pre = pre_tokenizers.Sequence([pre_tokenizers.Split(tokenizers.Regex(r"\w+|\s+|[^\w\s]+"), "isolated"),
                                   pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    byte_level_bpe(pre).save(str(path))
    assert refused(tmp_path, path) == (
        f"error: `{path}`'s pre-tokenizer splits with `\\w+|\\s+|[^\\w\\s]+`, a regular expression none of llama.cpp's "
        "pre-tokenizers (gpt-2, llama-bpe, qwen2) uses")
    # The same tokenizer goes into a --hf folder: transformers runs any pre-tokenizer.
    result = cli("export", SOURCE, "--hf", tmp_path / "out", "--tokenizer", path, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    exported = transformers.AutoTokenizer.from_pretrained(str(tmp_path / "out"))
    reference = tokenizers.Tokenizer.from_file(str(path))
    for text in PROBES:
        assert exported(text)["input_ids"] == reference.encode(text).ids, repr(text)


def test_tokenizer_needs_hf_or_gguf_and_a_gguf_vocabulary_is_for_gguf_only(tmp_path):
    result = cli("export", SOURCE, "--tokenizer", "tokenizer.json", cwd=tmp_path)
    assert (result.returncode, result.stderr.splitlines()[0]) == (2, "--tokenizer requires --hf or --gguf")
    (tmp_path / "vocab.gguf").write_bytes(b"GGUF\x03\x00\x00\x00")
    assert refused(tmp_path, tmp_path / "vocab.gguf", fmt="--hf") == (
        f"error: the tokenizer `{tmp_path / 'vocab.gguf'}` is a GGUF file, whose vocabulary only --gguf embeds; give --hf a "
        "tokenizer.json or a Hugging Face folder")


def test_a_metaspace_that_llama_cpp_would_read_otherwise_is_refused(sp_transformers_folder, tmp_path):
    """transformers 5 writes SentencePiece's pieces with a Metaspace pre-tokenizer, which puts no ▁ before a
    text that starts with a space: llama.cpp, as SentencePiece, does. The --hf folder takes it as it is."""
    message = refused(tmp_path, sp_transformers_folder)
    assert message.startswith(f"error: `{sp_transformers_folder / 'tokenizer.json'}`'s pre-tokenizer `Metaspace(")
    assert message.endswith("but llama.cpp's `llama` tokenizer puts one before every text and after every special token, as "
                            "SentencePiece does (and a tokenizer.json that normalizes with Prepend(\"▁\") then Replace(\" \", \"▁\"), "
                            "as Llama 2's does)")


def test_a_wordpiece_tokenizer_is_refused(tmp_path):
    tokenizer = tokenizers.Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.train_from_iterator(TEXTS, trainers.WordPieceTrainer(vocab_size=200, special_tokens=["[UNK]"], show_progress=False))
    tokenizer.save(str(tmp_path / "tokenizer.json"))
    assert refused(tmp_path, tmp_path / "tokenizer.json") == (
        f"error: `{tmp_path / 'tokenizer.json'}` is a WordPiece model (BERT's), but llama.cpp's `gpt2` (byte-level BPE) and "
        "`llama` (SentencePiece BPE) tokenizers are BPE")


def test_an_added_token_that_strips_spaces_is_refused(qwen2_json, tmp_path):
    data = json.loads(qwen2_json.read_text())
    next(t for t in data["added_tokens"] if t["content"] == "<|im_end|>")["lstrip"] = True
    (tmp_path / "tokenizer.json").write_text(json.dumps(data))
    assert refused(tmp_path, tmp_path / "tokenizer.json") == (
        f"error: `{tmp_path / 'tokenizer.json'}`'s added token \"<|im_end|>\" has `lstrip`, which llama.cpp gives only tokens it knows by name")


def test_a_byte_level_bpe_without_every_byte_is_refused(tmp_path):
    tokenizer = tokenizers.Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.train_from_iterator(["abc abd"], trainers.BpeTrainer(vocab_size=40, show_progress=False))  # no initial alphabet
    tokenizer.save(str(tmp_path / "tokenizer.json"))
    message = refused(tmp_path, tmp_path / "tokenizer.json")
    assert "has no token for " in message and "of the 256 bytes" in message and "llama.cpp's `gpt2` tokenizer needs one for each byte" in message


@pytest.mark.parametrize("fmt", ["--gguf", "--hf"])
def test_broken_and_missing_tokenizer_files_are_said_and_nothing_is_written(bpe_folder, tmp_path, fmt):
    folder = tmp_path / "broken"
    shutil.copytree(bpe_folder, folder)
    (folder / "tokenizer.json").write_text('{"model": {"type": "BPE", ')
    assert refused(tmp_path, folder, fmt=fmt).startswith(f"error: can't read the tokenizer: `{folder / 'tokenizer.json'}` isn't valid JSON: ")
    (folder / "tokenizer.json").unlink()
    assert refused(tmp_path, folder, fmt=fmt).startswith(f"error: `{folder}` has tokenizer_config.json but no tokenizer.json: ")
    empty = tmp_path / "empty"
    empty.mkdir()
    assert refused(tmp_path, empty, fmt=fmt) == f"error: `{empty}` has no tokenizer: no tokenizer.json (nor tokenizer_config.json)"
    shutil.copy(bpe_folder / "tokenizer.json", folder / "tokenizer.json")
    (folder / "tokenizer_config.json").write_text('{"tokenizer_class": "__import__(\'os\')"}')
    assert refused(tmp_path, folder, fmt=fmt).startswith(f"error: can't read the tokenizer: `{folder / 'tokenizer_config.json'}`'s "
                                                        "`tokenizer_class` isn't what it can be: ")


def test_a_tokenizer_larger_than_the_vocabulary_is_refused(bpe_folder, tmp_path):
    small = tmp_path / "small.ss"
    small.write_text(SOURCE.read_text().replace("dim V   = 512", "dim V   = 300"))
    result = cli("export", small, "--hf", tmp_path / "out", "--tokenizer", bpe_folder, cwd=tmp_path)
    assert result.returncode == 1 and not (tmp_path / "out").exists()
    assert f"the tokenizer `{bpe_folder / 'tokenizer.json'}` has ids up to " in result.stderr
    assert "but the model's embedding has 300 rows" in result.stderr


def test_only_known_keys_are_carried_and_nothing_is_run(bpe_folder, tmp_path):
    """auto_map would make transformers import the folder's code: it is left out, as is every key not known."""
    folder = tmp_path / "hostile"
    shutil.copytree(bpe_folder, folder)
    config = json.loads((folder / "tokenizer_config.json").read_text())
    config.update(auto_map={"AutoTokenizer": ["evil.EvilTokenizer", None]}, something_else={"x": 1})
    (folder / "tokenizer_config.json").write_text(json.dumps(config))
    (folder / "evil.py").write_text("raise SystemExit('ran')\n")
    (folder / "chat_template.jinja").write_text("{{ cycler.__init__.__globals__.os.system('touch " + str(tmp_path / "pwned") + "') }}")
    result = cli("export", SOURCE, "--hf", tmp_path / "out", "--tokenizer", folder, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    written = json.loads((tmp_path / "out" / "tokenizer_config.json").read_text())
    assert "auto_map" not in written and "something_else" not in written
    assert not (tmp_path / "out" / "evil.py").exists() and not (tmp_path / "pwned").exists()
    assert written["chat_template"].startswith("{{ cycler")  # a string, carried, never rendered


# --- llama-server answers a text prompt ------------------------------------------------------------------


def test_llama_server_answers_a_text_prompt(bpe_folder, tmp_path):
    """The GGUF with the byte-level BPE: llama-server takes the prompt as text, tokenizes it as `tokenizers`
    does, and decodes greedily to the tokens the ShapeScript forward picks, which it returns as text."""
    import urllib.request

    from conftest import free_port, llama_cpp_dir, wait_until_healthy
    from test_gguf_export import compiled_forward, random_checkpoint

    ckpt = random_checkpoint(SOURCE, seed=5)
    torch.save(ckpt, tmp_path / "ckpt.pt")
    out = tmp_path / "model.gguf"
    result = cli("export", SOURCE, "--gguf", out, "--weights", tmp_path / "ckpt.pt", "--tokenizer", bpe_folder, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.rstrip().endswith(", tokenizer `gpt2` with the `gpt-2` pre-tokenizer and a chat template"), result.stdout
    reference = tokenizers.Tokenizer.from_file(str(bpe_folder / "tokenizer.json"))
    prompt = "Hello, world! Café 中文 12345"
    port = free_port()
    log = open(tmp_path / "server.log", "w")
    server = subprocess.Popen([str(llama_cpp_dir() / "bin" / "llama-server"), "-m", str(out), "--host", "127.0.0.1", "--port", str(port),
                               "-c", "256", "-t", "2", "-np", "1", "--no-webui"], stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_until_healthy(f"http://127.0.0.1:{port}/health", server, tmp_path / "server.log", 60, "llama-server")
        body = json.dumps({"prompt": prompt, "n_predict": 6, "temperature": 0, "top_k": 1, "return_tokens": True,
                           "ignore_eos": True, "cache_prompt": False}).encode()
        request = urllib.request.Request(f"http://127.0.0.1:{port}/completion", data=body, headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=60) as r:
            answer = json.loads(r.read())
    finally:
        server.terminate()
        server.wait(timeout=30)
    ids = reference.encode(prompt, add_special_tokens=False).ids
    assert answer["tokens_evaluated"] == len(ids), answer
    for _ in range(6):
        ids.append(int(compiled_forward(SOURCE, ckpt, torch.tensor([ids]))[0, -1].argmax()))
    generated = ids[-6:]
    assert answer["tokens"] == generated, answer
    assert answer["content"] == reference.decode(generated), answer

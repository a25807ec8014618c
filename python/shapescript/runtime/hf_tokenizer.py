"""The tokenizer an export carries (`--hf DIR`, `--gguf FILE`): read from a Hugging Face folder
(`--weights HF_DIR` or `--tokenizer DIR`) or a `tokenizer.json` (`--tokenizer FILE`), written into the
folder as the files transformers and vLLM read, or into the GGUF file as llama.cpp's `tokenizer.ggml.*`
keys, computed here from the tokenizer itself (never from llama.cpp's converter's table of hashes).

The files are untrusted input: only the files named below are read, each parsed as JSON (a chat
template as text) and checked key by key; only known keys are written back, rewritten, never copied
as bytes; nothing in them is run (a chat template is a string that is never rendered here, and
`auto_map`, which would make transformers import code, is dropped). Needs the `tokenizers` package.
"""

from __future__ import annotations

import json
import os
import re

TOKENIZER_JSON = "tokenizer.json"
TOKENIZER_CONFIG = "tokenizer_config.json"
CHAT_TEMPLATE = "chat_template.jinja"
CHAT_TEMPLATE_JSON = "chat_template.json"
GENERATION_CONFIG = "generation_config.json"
SPECIAL_TOKENS_MAP = "special_tokens_map.json"
# What says a folder has a tokenizer: any of these (tokenizer.json then must be there and whole).
TOKENIZER_FILES = (TOKENIZER_JSON, TOKENIZER_CONFIG, SPECIAL_TOKENS_MAP, "tokenizer.model", "vocab.json", "merges.txt")
MAX_BYTES = 256 << 20  # a tokenizer.json of the largest vocabularies is tens of MB
MAX_TEMPLATE_BYTES = 1 << 20


class TokenizerError(Exception):
    pass


class Tokenizer:
    """A tokenizer read and checked: `data` is tokenizer.json's object, `config` tokenizer_config.json's
    known keys, `chat_template` a string or None, `generation` generation_config.json's known keys."""

    def __init__(self, name, data, config, chat_template, generation, special_map, size):
        self.name = name
        self.data = data
        self.config = config
        self.chat_template = chat_template
        self.generation = generation
        self.special_map = special_map
        self.size = size  # the largest id + 1

    # ids of the tokens tokenizer_config.json names, by their text
    def token_id(self, key):
        value = self.config.get(key)
        if isinstance(value, dict):
            value = value.get("content")
        if not isinstance(value, str):
            return None
        return self.ids_by_text().get(value)

    def ids_by_text(self):
        ids = dict(self.data["model"].get("vocab") or {}) if isinstance(self.data["model"].get("vocab"), dict) else {}
        for token in self.data.get("added_tokens") or []:
            ids[token["content"]] = token["id"]
        return ids

    def special_ids(self):
        """bos, eos, pad, unk ids: generation_config.json's, else tokenizer_config.json's tokens."""
        ids = {}
        for key in ("bos", "eos", "pad", "unk"):
            value = self.generation.get(f"{key}_token_id") if key != "unk" else None
            if isinstance(value, list):
                value = value[0] if value else None
            if value is None:
                value = self.token_id(f"{key}_token")
            if value is not None:
                ids[key] = value
        return ids


# ---------------------------------------------------------------------------------------------
# Reading


def _read(path, what, limit=MAX_BYTES):
    try:
        if os.path.getsize(path) > limit:
            raise TokenizerError(f"can't read the tokenizer: `{what}` is larger than {limit >> 20} MB")
        with open(path, "rb") as f:
            raw = f.read(limit + 1)
    except OSError as e:
        raise TokenizerError(f"can't read the tokenizer: `{what}`: {e.strerror or e}")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise TokenizerError(f"can't read the tokenizer: `{what}` isn't UTF-8 text ({e.reason} at byte {e.start})")


def _reject_constant(name):
    raise ValueError(f"{name} is not JSON")


def _json(path, what):
    text = _read(path, what)
    try:
        value = json.loads(text, parse_constant=_reject_constant)
    except (ValueError, RecursionError) as e:
        raise TokenizerError(f"can't read the tokenizer: `{what}` isn't valid JSON: {e}")
    if not isinstance(value, dict):
        raise TokenizerError(f"can't read the tokenizer: `{what}` isn't a JSON object")
    return value


def _is_token(value):
    """A special token as tokenizer_config.json writes it: its text, or an AddedToken's fields."""
    if isinstance(value, str):
        return True
    return (isinstance(value, dict) and isinstance(value.get("content"), str)
            and all(isinstance(v, bool) for k, v in value.items() if k not in ("content", "__type")))


_CLASS_NAME = re.compile(r"[A-Z][A-Za-z0-9]*(Tokenizer|TokenizerFast)|TokenizersBackend")
# tokenizer_config.json's keys that are written back, each with what its value must be; the rest
# (auto_map above all: it would make transformers import the folder's code) is left out.
_CONFIG_KEYS = {
    **{key: lambda v: v is None or _is_token(v) for key in
       ("bos_token", "eos_token", "unk_token", "pad_token", "sep_token", "cls_token", "mask_token")},
    **{key: lambda v: isinstance(v, bool) for key in
       ("add_bos_token", "add_eos_token", "clean_up_tokenization_spaces", "legacy", "use_default_system_prompt",
        "split_special_tokens", "spaces_between_special_tokens", "do_lower_case")},
    "add_prefix_space": lambda v: v is None or isinstance(v, bool),
    "model_max_length": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "padding_side": lambda v: v in ("left", "right"),
    "truncation_side": lambda v: v in ("left", "right"),
    "errors": lambda v: v in ("replace", "strict", "ignore"),
    "backend": lambda v: v == "tokenizers",
    "tokenizer_class": lambda v: isinstance(v, str) and _CLASS_NAME.fullmatch(v) is not None,
    "model_input_names": lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v),
    "additional_special_tokens": lambda v: isinstance(v, list) and all(_is_token(x) for x in v),
    "extra_special_tokens": lambda v: (isinstance(v, list) and all(_is_token(x) for x in v))
    or (isinstance(v, dict) and all(isinstance(k, str) and _is_token(x) for k, x in v.items())),
    "added_tokens_decoder": lambda v: isinstance(v, dict)
    and all(k.isdigit() and _is_token(x) and isinstance(x, dict) for k, x in v.items()),
}
_GENERATION_KEYS = {
    "bos_token_id": lambda v: v is None or _is_id(v),
    "eos_token_id": lambda v: v is None or _is_id(v) or (isinstance(v, list) and all(_is_id(x) for x in v)),
    "pad_token_id": lambda v: v is None or _is_id(v),
    "do_sample": lambda v: isinstance(v, bool),
    **{key: lambda v: isinstance(v, (int, float)) and not isinstance(v, bool)
       for key in ("temperature", "top_p", "top_k", "min_p", "repetition_penalty", "max_new_tokens")},
}


def _is_id(value):
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _known(values, keys, what):
    """The keys of `values` that are known, each checked; a known key with a value it can't have is an error."""
    kept = {}
    for key, value in values.items():
        check = keys.get(key)
        if check is None:
            continue
        if not check(value):
            raise TokenizerError(f"can't read the tokenizer: `{what}`'s `{key}` isn't what it can be: {json.dumps(value)[:80]}")
        kept[key] = value
    return kept


def _template(value, what):
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(t, dict) and isinstance(t.get("name"), str) and isinstance(t.get("template"), str)
                                       for t in value):
        for t in value:  # several named templates: the default one is the chat template
            if t["name"] == "default":
                return t["template"]
        return None
    raise TokenizerError(f"can't read the tokenizer: `{what}`'s chat template is neither a string nor a list of named templates")


def read(path, name, required=True, vocab=None):
    """The tokenizer at `path` (a folder or a tokenizer.json), or None when `path` is a folder with
    no tokenizer files and `required` is false. `name` is the path as the user wrote it."""
    if os.path.isdir(path):
        present = [f for f in TOKENIZER_FILES if os.path.isfile(os.path.join(path, f))]
        if not present:
            if not required:
                return None
            raise TokenizerError(f"`{name}` has no tokenizer: no {TOKENIZER_JSON} (nor {TOKENIZER_CONFIG})")
        folder = path
        json_path = os.path.join(path, TOKENIZER_JSON)
        shown = os.path.join(name, TOKENIZER_JSON)
        if not os.path.isfile(json_path):
            raise TokenizerError(f"`{name}` has {', '.join(present)} but no {TOKENIZER_JSON}: ShapeScript reads a tokenizer from "
                                 f"its {TOKENIZER_JSON} (transformers writes one when a fast tokenizer is saved with save_pretrained)")
    elif os.path.isfile(path):
        folder, json_path, shown = None, path, name
        with open(path, "rb") as f:
            if f.read(4) == b"GGUF":
                raise TokenizerError(f"the tokenizer `{name}` is a GGUF file, whose vocabulary only --gguf embeds; give --hf a "
                                     f"tokenizer.json or a Hugging Face folder")
    else:
        raise TokenizerError(f"can't read the tokenizer `{name}`: no such file or folder")
    text = _read(json_path, shown)
    try:
        data = json.loads(text, parse_constant=_reject_constant)
    except (ValueError, RecursionError) as e:
        raise TokenizerError(f"can't read the tokenizer: `{shown}` isn't valid JSON: {e}")
    if not isinstance(data, dict) or not isinstance(data.get("model"), dict):
        raise TokenizerError(f"can't read the tokenizer: `{shown}` isn't a tokenizer (no `model` object)")
    try:
        import tokenizers
    except ImportError as e:
        raise TokenizerError(f"reading a tokenizer needs the `tokenizers` package in this Python; install it with `pip install tokenizers` ({e})")
    try:
        loaded = tokenizers.Tokenizer.from_str(json.dumps(data))
    except Exception as e:  # noqa: BLE001 - the library's own reason, in one line
        reason = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise TokenizerError(f"can't read the tokenizer: `tokenizers` refuses `{shown}`: {reason}")
    ids = list(loaded.get_vocab(with_added_tokens=True).values())
    size = max(ids) + 1 if ids else 0
    if vocab is not None and size > vocab:
        raise TokenizerError(f"the tokenizer `{shown}` has ids up to {size - 1}, but the model's embedding has {vocab} rows")

    config, generation, special_map, template = {}, {}, None, None
    if folder is not None:
        raw_config = {}
        if os.path.isfile(os.path.join(folder, TOKENIZER_CONFIG)):
            raw_config = _json(os.path.join(folder, TOKENIZER_CONFIG), os.path.join(name, TOKENIZER_CONFIG))
            config = _known(raw_config, _CONFIG_KEYS, os.path.join(name, TOKENIZER_CONFIG))
        if os.path.isfile(os.path.join(folder, GENERATION_CONFIG)):
            what = os.path.join(name, GENERATION_CONFIG)
            generation = _known(_json(os.path.join(folder, GENERATION_CONFIG), what), _GENERATION_KEYS, what)
            for key in ("bos_token_id", "eos_token_id", "pad_token_id"):
                values = generation.get(key)
                for value in values if isinstance(values, list) else [values]:
                    if value is not None and value >= max(size, vocab or 0):
                        raise TokenizerError(f"`{what}`'s `{key}` is {value}, which no token has")
        if os.path.isfile(os.path.join(folder, SPECIAL_TOKENS_MAP)):
            what = os.path.join(name, SPECIAL_TOKENS_MAP)
            special_map = _known(_json(os.path.join(folder, SPECIAL_TOKENS_MAP), what), _CONFIG_KEYS, what)
        # The chat template: chat_template.jinja (transformers 5), else tokenizer_config.json's, else chat_template.json.
        if os.path.isfile(os.path.join(folder, CHAT_TEMPLATE)):
            template = _read(os.path.join(folder, CHAT_TEMPLATE), os.path.join(name, CHAT_TEMPLATE), MAX_TEMPLATE_BYTES)
        elif "chat_template" in raw_config:
            template = _template(raw_config["chat_template"], os.path.join(name, TOKENIZER_CONFIG))
        elif os.path.isfile(os.path.join(folder, CHAT_TEMPLATE_JSON)):
            what = os.path.join(name, CHAT_TEMPLATE_JSON)
            template = _template(_json(os.path.join(folder, CHAT_TEMPLATE_JSON), what).get("chat_template"), what)
    return Tokenizer(name, data, config, template, generation, special_map, size)


def beside_checkpoint(checkpoint):
    """Where `shapescript run`'s save_checkpoint keeps the tokenizer its dataset read: `tiny.pt` ->
    `tiny.tokenizer.json`."""
    return os.path.splitext(checkpoint)[0] + ".tokenizer.json"


def for_export(spec, vocab):
    """The tokenizer an export carries: `--tokenizer`'s, else the `--weights` folder's, else the one
    a training run saved beside the `--weights` checkpoint; None when there is none."""
    if spec.get("tokenizer"):
        return read(spec["tokenizer"], spec.get("tokenizer_name") or spec["tokenizer"], vocab=vocab)
    weights = spec.get("weights")
    if weights and os.path.isdir(weights):
        return read(weights, spec.get("weights_name") or weights, required=False, vocab=vocab)
    if weights and os.path.isfile(beside_checkpoint(weights)):
        return read(beside_checkpoint(weights), beside_checkpoint(spec.get("weights_name") or weights), vocab=vocab)
    return None


# ---------------------------------------------------------------------------------------------
# A Hugging Face folder


def _write_json(path, value):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(value, f, indent=2, ensure_ascii=False)
        f.write("\n")


def write_folder(tokenizer, folder):
    """tokenizer.json, tokenizer_config.json (chat template inline, for transformers 4), chat_template.jinja
    (transformers 5), generation_config.json with bos/eos, special_tokens_map.json when the source had one.
    Returns the ids written into generation_config.json ({bos_token_id, eos_token_id, pad_token_id})."""
    with open(os.path.join(folder, TOKENIZER_JSON), "w", encoding="utf-8") as f:
        json.dump(tokenizer.data, f, ensure_ascii=False)
    config = dict(tokenizer.config)
    config.setdefault("tokenizer_class", "PreTrainedTokenizerFast")
    if tokenizer.chat_template is not None:
        config["chat_template"] = tokenizer.chat_template
        with open(os.path.join(folder, CHAT_TEMPLATE), "w", encoding="utf-8") as f:
            f.write(tokenizer.chat_template)
    _write_json(os.path.join(folder, TOKENIZER_CONFIG), config)
    if tokenizer.special_map is not None:
        _write_json(os.path.join(folder, SPECIAL_TOKENS_MAP), tokenizer.special_map)
    ids = tokenizer.special_ids()
    generation = dict(tokenizer.generation)
    for key in ("bos", "eos", "pad"):
        if f"{key}_token_id" not in generation and key in ids:
            generation[f"{key}_token_id"] = ids[key]
    if generation:
        _write_json(os.path.join(folder, GENERATION_CONFIG), generation)
    return {key: generation[key] for key in ("bos_token_id", "eos_token_id", "pad_token_id") if key in generation}


# ---------------------------------------------------------------------------------------------
# A GGUF file: llama.cpp's `gpt2` (byte-level BPE) or `llama` (SentencePiece) tokenizer

# The pre-tokenizers' regular expressions as tokenizer.json writes them, by the name llama.cpp gives
# its pre-tokenizer of the same expressions (llama-vocab.cpp: llm_tokenizer_bpe, and the names its
# loader reads), in the order applied; and whether llama.cpp takes a whole word that is a token as it
# is (`ignore_merges`, which llama.cpp sets for `llama-bpe` only), which the BPE must do too.
GPT2_REGEX = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"
PRE_TOKENIZERS = {
    "gpt-2": ([GPT2_REGEX], False),
    "llama-bpe": ([r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"], True),
    "qwen2": ([r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"], False),
}
SPM_SPACE = "\u2581"
LLAMA_CPP_TOKENIZERS = "llama.cpp's `gpt2` (byte-level BPE) and `llama` (SentencePiece BPE) tokenizers"


class Refusal(TokenizerError):
    pass


def _steps(node):
    if node is None:
        return []
    if node.get("type") == "Sequence":
        inner = node.get("pretokenizers", node.get("normalizers"))
        return [step for child in inner or [] for step in _steps(child)]
    return [node]


def _describe(node):
    fields = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in node.items() if k != "type")
    return f"{node.get('type')}({fields})"


def _pre_regexes(tokenizer, shown):
    """The regular expressions a byte-level BPE's pre-tokenizer splits with, in order."""
    regexes = []
    steps = _steps(tokenizer.data.get("pre_tokenizer"))
    for i, step in enumerate(steps):
        kind = step.get("type")
        last = i == len(steps) - 1
        if kind == "ByteLevel" and last:
            if step.get("add_prefix_space"):
                raise Refusal(f"`{shown}`'s byte-level pre-tokenizer adds a space before the text (`add_prefix_space`), "
                              f"which llama.cpp's `gpt2` tokenizer never does")
            if step.get("use_regex", True):
                regexes.append(GPT2_REGEX)
        elif kind == "Split" and isinstance(step.get("pattern"), dict) and "Regex" in step["pattern"] \
                and step.get("behavior") == "Isolated" and not step.get("invert"):
            regexes.append(step["pattern"]["Regex"])
        elif kind == "Digits" and step.get("individual_digits"):
            regexes.append(r"\p{N}")
        else:
            raise Refusal(f"`{shown}`'s pre-tokenizer `{_describe(step)}` splits text in a way llama.cpp's pre-tokenizers "
                          f"don't (they split with regular expressions, then read bytes as GPT-2 does)")
    return regexes


def _merges(model, shown):
    merges = []
    for merge in model.get("merges") or []:
        pair = merge.split(" ") if isinstance(merge, str) else merge
        if len(pair) != 2 or any(" " in piece for piece in pair):
            raise Refusal(f"`{shown}` merges tokens that contain a space ({json.dumps(merge, ensure_ascii=False)}), which llama.cpp's "
                          f"merges, written `a b`, can't hold")
        merges.append(pair)
    return merges


def _model_kind(tokenizer, shown):
    """`gpt2` or `llama`, with the pre-tokenizer's name or whether a space starts the text."""
    data = tokenizer.data
    model = data["model"]
    kind = model.get("type")
    if kind != "BPE":
        other = {"WordPiece": "a WordPiece model (BERT's)", "WordLevel": "a word-level model", "Unigram": "a Unigram model"}
        raise Refusal(f"`{shown}` is {other.get(kind, f'a `{kind}` model')}, but {LLAMA_CPP_TOKENIZERS} are BPE")
    for key in ("continuing_subword_prefix", "end_of_word_suffix", "dropout"):
        if model.get(key):
            raise Refusal(f"`{shown}`'s BPE has `{key}` {json.dumps(model[key])}, which {LLAMA_CPP_TOKENIZERS} lack")
    pre = _steps(data.get("pre_tokenizer"))
    normalizers = _steps(data.get("normalizer"))
    if any(step.get("type") == "ByteLevel" for step in pre):
        if normalizers:
            raise Refusal(f"`{shown}` normalizes text with `{_describe(normalizers[0])}` before its byte-level BPE, which "
                          f"llama.cpp's `gpt2` tokenizer doesn't: it reads the text as it is")
        if model.get("byte_fallback"):
            raise Refusal(f"`{shown}`'s byte-level BPE also falls back to byte tokens, which llama.cpp's `gpt2` tokenizer doesn't")
        regexes = _pre_regexes(tokenizer, shown)
        for name, (expected, ignore_merges) in PRE_TOKENIZERS.items():
            if regexes == expected:
                if bool(model.get("ignore_merges")) != ignore_merges:
                    mine, theirs = ("doesn't", "does") if ignore_merges else ("does", "doesn't")
                    raise Refusal(f"`{shown}`'s pre-tokenizer is llama.cpp's `{name}`, but its BPE {mine} take a word that is a "
                                  f"token as it is (`ignore_merges`), which llama.cpp's `{name}` {theirs}")
                return "gpt2", name
        said = " then ".join(f"`{r}`" for r in regexes) or "nothing"
        raise Refusal(f"`{shown}`'s pre-tokenizer splits with {said}, a regular expression none of llama.cpp's pre-tokenizers "
                      f"({', '.join(PRE_TOKENIZERS)}) uses")
    # SentencePiece's BPE, as transformers writes it: spaces become ▁, one is put before the text (or not).
    space_prefix, spaces_replaced = None, False
    for step in normalizers:
        if step.get("type") == "Prepend" and step.get("prepend") == SPM_SPACE and space_prefix is None:
            space_prefix = True
        elif step.get("type") == "Replace" and step.get("pattern") == {"String": " "} and step.get("content") == SPM_SPACE:
            spaces_replaced = True
        else:
            raise Refusal(f"`{shown}` normalizes text with `{_describe(step)}`, which llama.cpp's `llama` tokenizer doesn't")
    for step in pre:
        if step.get("type") == "Metaspace" and step.get("replacement") == SPM_SPACE and space_prefix is None:
            scheme = step.get("prepend_scheme", "always" if step.get("add_prefix_space", True) else "never")
            if scheme != "never":
                # tokenizers' Metaspace puts no ▁ before a text that starts with a space (nor, for "first", after a
                # special token); llama.cpp, like SentencePiece, puts one before every text and after every special token.
                raise Refusal(f"`{shown}`'s pre-tokenizer `{_describe(step)}` puts `▁` before a text only when it doesn't start with "
                              f"a space{'' if scheme == 'always' else ' and not after a special token'}, but llama.cpp's `llama` "
                              f"tokenizer puts one before every text and after every special token, as SentencePiece does (and "
                              f"a tokenizer.json that normalizes with Prepend(\"▁\") then Replace(\" \", \"▁\"), as Llama 2's does)")
            space_prefix, spaces_replaced = False, True
        else:
            raise Refusal(f"`{shown}`'s pre-tokenizer `{_describe(step)}` splits text in a way llama.cpp's `llama` tokenizer doesn't")
    if not model.get("byte_fallback"):
        raise Refusal(f"`{shown}` is a BPE that neither reads bytes as GPT-2 does (a `ByteLevel` pre-tokenizer) nor falls back "
                      f"to byte tokens as SentencePiece does (`byte_fallback`): {LLAMA_CPP_TOKENIZERS} do one or the other")
    if not spaces_replaced:
        raise Refusal(f"`{shown}` keeps spaces as they are, but llama.cpp's `llama` tokenizer reads each as `▁`, as SentencePiece "
                      f"does (a normalizer Replace(\" \", \"▁\") or a Metaspace pre-tokenizer says so)")
    return "llama", bool(space_prefix)


def _byte_level_alphabet():
    """GPT-2's printable stand-ins for the 256 bytes (llama.cpp's unicode_byte_to_utf8)."""
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAC + 1)) + list(range(0xAE, 0xFF + 1))
    chars, n = {}, 0
    for b in range(256):
        if b in printable:
            chars[b] = chr(b)
        else:
            chars[b] = chr(256 + n)
            n += 1
    return chars


def gguf_vocabulary(tokenizer, vocab):
    """The `tokenizer.ggml.*` keys for `vocab` rows: [(key, value, kind)] with kind one of
    string, bool, uint32, string_array, int32_array, float32_array; raises Refusal for what llama.cpp
    can't express, naming the file and what llama.cpp lacks."""
    shown = tokenizer.name if tokenizer.name.endswith(".json") else os.path.join(tokenizer.name, TOKENIZER_JSON)
    kind, how = _model_kind(tokenizer, shown)
    model = tokenizer.data["model"]
    ids = tokenizer.ids_by_text()
    by_id = {i: text for text, i in ids.items()}
    added = {t["id"]: t for t in tokenizer.data.get("added_tokens") or []}
    special = tokenizer.special_ids()
    unk_text = by_id.get(special.get("unk")) if "unk" in special else model.get("unk_token")
    missing_ids = [i for i in range(tokenizer.size) if i not in by_id]
    if missing_ids:
        raise Refusal(f"`{shown}` has no token for id {missing_ids[0]}, but llama.cpp's vocabulary is a list of every id's token")

    for token in added.values():
        for key in ("lstrip", "rstrip", "single_word"):
            if token.get(key):
                raise Refusal(f"`{shown}`'s added token {json.dumps(token['content'], ensure_ascii=False)} has `{key}`, which llama.cpp "
                              f"gives only tokens it knows by name")
    merges = _merges(model, shown)
    if kind == "gpt2":
        alphabet = _byte_level_alphabet()
        absent = [b for b in range(256) if alphabet[b] not in ids]
        if absent:
            raise Refusal(f"`{shown}` has no token for {len(absent)} of the 256 bytes (the first: byte {absent[0]:#04x}, "
                          f"`{alphabet[absent[0]]}`), but llama.cpp's `gpt2` tokenizer needs one for each byte")
    else:
        absent = [b for b in range(256) if f"<0x{b:02X}>" not in ids]
        if absent:
            raise Refusal(f"`{shown}` has no byte token for {len(absent)} of the 256 bytes (the first: `<0x{absent[0]:02X}>`), but "
                          f"llama.cpp's `llama` tokenizer falls back to one for each byte")

    # SentencePiece's scores: a token made by a merge ranks by that merge (the earlier, the higher), as
    # transformers' merges were ranked from them; llama.cpp merges the highest-scoring pair first.
    first_merge = {}
    for rank, (a, b) in enumerate(merges):
        first_merge.setdefault(a + b, rank)
    tokens, types, scores = [], [], []
    for i in range(vocab):
        text = by_id.get(i)
        if text is None:  # rows past the tokenizer's ids: tokens no text becomes
            tokens.append(f"[PAD{i}]")
            types.append(5)  # UNUSED
            scores.append(-1e9)
            continue
        if i in added and text == unk_text:
            token_type = 2  # UNKNOWN
        elif i in added:
            token_type = 3 if added[i].get("special") else 4  # CONTROL, USER_DEFINED
        elif kind == "llama" and re.fullmatch(r"<0x[0-9A-F]{2}>", text):
            token_type = 6  # BYTE
        else:
            token_type = 1  # NORMAL
        tokens.append(text)
        types.append(token_type)
        scores.append(-float(first_merge[text]) if text in first_merge else (0.0 if len(text) == 1 else -1e9 - i))
    fields = [("tokenizer.ggml.model", kind, "string")]
    if kind == "gpt2":
        fields.append(("tokenizer.ggml.pre", how, "string"))
    else:
        fields.append(("tokenizer.ggml.add_space_prefix", how, "bool"))
    fields += [("tokenizer.ggml.tokens", tokens, "string_array"), ("tokenizer.ggml.token_type", types, "int32_array")]
    if kind == "llama":
        fields.append(("tokenizer.ggml.scores", scores, "float32_array"))
    if merges:
        fields.append(("tokenizer.ggml.merges", [f"{a} {b}" for a, b in merges], "string_array"))
    for key, gguf_key in (("bos", "bos_token_id"), ("eos", "eos_token_id"), ("unk", "unknown_token_id"), ("pad", "padding_token_id")):
        if key in special:
            fields.append((f"tokenizer.ggml.{gguf_key}", special[key], "uint32"))
    fields.append(("tokenizer.ggml.add_bos_token", _adds_bos(tokenizer, special), "bool"))
    fields.append(("tokenizer.ggml.add_eos_token", bool(tokenizer.config.get("add_eos_token", False)), "bool"))
    if tokenizer.chat_template is not None:
        fields.append(("tokenizer.chat_template", tokenizer.chat_template, "string"))
    return fields


def _adds_bos(tokenizer, special):
    """Whether encoding puts bos first: tokenizer_config.json's `add_bos_token`, else the post-processor's template."""
    if "add_bos_token" in tokenizer.config:
        return bool(tokenizer.config["add_bos_token"]) and "bos" in special
    processor = tokenizer.data.get("post_processor") or {}
    single = processor.get("single") if processor.get("type") == "TemplateProcessing" else None
    if single and "SpecialToken" in single[0]:
        first = single[0]["SpecialToken"]["id"]
        return "bos" in special and tokenizer.ids_by_text().get(first) == special["bos"]
    return False


def add_to_gguf(writer, fields):
    import gguf

    for key, value, kind in fields:
        if kind == "string":
            writer.add_string(key, value)
        elif kind == "bool":
            writer.add_bool(key, value)
        elif kind == "uint32":
            writer.add_uint32(key, value)
        elif kind == "string_array":
            writer.add_array(key, value)
        elif kind == "int32_array":
            writer.add_key_value(key, value, gguf.GGUFValueType.ARRAY, sub_type=gguf.GGUFValueType.INT32)
        elif kind == "float32_array":
            writer.add_key_value(key, value, gguf.GGUFValueType.ARRAY, sub_type=gguf.GGUFValueType.FLOAT32)

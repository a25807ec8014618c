"""Imports a Hugging Face folder's weights onto a ShapeScript model's parameters
(`shapescript import-weights FILE.ss HF_DIR -o ckpt.pt`, and `--weights HF_DIR` on export).

The mapping is computed, not read off a table of names: the folder's tensors (config.json and its
*.safetensors, sharded or not) are read in every way a checkpoint of another convention may hold a
parameter -- as they are, stacked over the layers (`...layers.N.x` for every N) or over the layers
and the experts (`...layers.N.experts.M.x`: [L E ...]), transposed (GPT-2's
Conv1D stores [in out]), with q/k rows permuted between rotary pairings ((i, i+hd/2) and (2i, 2i+1)),
split (a fused qkv onto separate wq/wk/wv) or concatenated (separate q, k, v onto a fused one), and
the embedding reused for a tied output layer. Shapes prune the readings; names (their slot numbers
too: `w1_e3` and `experts.3.w1`) and the order of use rank them; the numbers decide: transformers'
model built from the folder (float32, eager attention) is the reference, the compiled forward runs
with the candidate weights on 2 rows of fixed token ids, long enough to see every sliding window
(tokens_to_compare), and the first mapping whose logits agree (1e-4 of the largest logit) is the
one used; the runner-up, the nearest other mapping, is reported with it. A mapping that fails
is repaired greedily -- one parameter's reading changed, two swapped, a pair's rows permuted -- while
the difference falls, within a budget of forwards. When none agrees the error names the parameters
no reading explains, or the nearest difference.

The CLI runs it with a spec (JSON), import-weights' keys:
  folder, folder_name    the Hugging Face folder (absolute, and as the user wrote it)
  output, output_name    the checkpoint to write (absolute, and as written)
  reference, model, function, parameters, takes_positions   as gguf_export.py's
  max_positions, sliding_window   the positions the model has and its attention's window (0: none),
                         which bound and widen the tokens compared
  reply                  where to write the answer (absolute)
The answer: tensors, files, params, readings, difference, tried and forwards (the forwards run),
tokens ([rows, n] compared), runner_up ({mapping, difference} or null), mapping, unused.
load_weights (weights.py) calls import_folder for `--weights HF_DIR` with its own spec.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import re
import tempfile
import sys

if __package__:  # shapescript.runtime, in a user's process (shapescript.export): sys.path untouched
    from . import mapping, rotary, script
else:  # a file the CLI runs with `python -I`, whose folder holds the runtime's modules
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import mapping  # noqa: E402
    import rotary  # noqa: E402
    import script  # noqa: E402

TOLERANCE = 1e-4  # of the largest logit, float32
BUDGET = 200  # forwards the search may run


class ImportWeightsError(Exception):
    pass


def progress(message):
    print(message, file=sys.stderr, flush=True)


def _shape(shape):
    return "[" + " ".join(str(s) for s in shape) + "]"


# ---------------------------------------------------------------------------------------------
# The folder: config.json and its safetensors.


def read_folder(folder, name):
    import torch

    if not os.path.exists(folder):
        raise ImportWeightsError(f"can't read `{name}`: no such folder")
    if not os.path.isdir(folder):
        raise ImportWeightsError(f"`{name}` isn't a folder: a Hugging Face model is a folder with config.json and *.safetensors")
    config_path = os.path.join(folder, "config.json")
    if not os.path.isfile(config_path):
        raise ImportWeightsError(f"`{name}` has no config.json: it isn't a Hugging Face model folder (save one with `save_pretrained`)")
    with open(config_path, encoding="utf-8") as f:
        config = json.load(f)
    index_path = os.path.join(folder, "model.safetensors.index.json")
    if os.path.isfile(index_path):
        with open(index_path, encoding="utf-8") as f:
            files = sorted(set(json.load(f)["weight_map"].values()))
    else:
        files = sorted(f for f in os.listdir(folder) if f.endswith(".safetensors"))
    if not files:
        bins = [f for f in os.listdir(folder) if f.endswith(".bin")]
        also = f" (its {', '.join(bins)} isn't read: save with safe_serialization=True)" if bins else ""
        raise ImportWeightsError(f"`{name}` has no .safetensors files{also}")
    try:
        from safetensors.torch import load_file
    except ImportError as e:
        raise ImportWeightsError(f"importing weights needs the `safetensors` package in this Python ({sys.executable}): {e}")
    tensors = {}
    for file in files:
        path = os.path.join(folder, file)
        if not os.path.isfile(path):
            raise ImportWeightsError(f"`{name}`'s index names `{file}`, which isn't there")
        for key, value in load_file(path).items():
            tensors[key] = value.to(torch.float32) if value.is_floating_point() else value
    progress(f"read {len(tensors)} tensors from {len(files)} safetensors file{'s' if len(files) != 1 else ''} of {name}")
    return config, tensors, len(files)


# ---------------------------------------------------------------------------------------------
# Names: what a name says a tensor is, for ranking only.

CONCEPTS = {
    "embed": "embed", "embed_tokens": "embed", "wte": "embed", "tok_embeddings": "embed", "word_embeddings": "embed",
    "te": "embed", "tok": "embed", "token_embd": "embed", "emb": "embed",
    "wpe": "pos", "pe": "pos", "embed_positions": "pos", "position_embeddings": "pos", "pos": "pos",
    "q": "q", "q_proj": "q", "query": "q", "wq": "q",
    "k": "k", "k_proj": "k", "key": "k", "wk": "k",
    "v": "v", "v_proj": "v", "value": "v", "wv": "v",
    "o": "o", "o_proj": "o", "out_proj": "o", "dense": "o", "wo": "o",
    "qkv": "qkv", "c_attn": "qkv", "qkv_proj": "qkv", "query_key_value": "qkv", "wqkv": "qkv",
    "gate": "gate", "gate_proj": "gate", "w1": "gate", "gate_up_proj": "gate_up",
    "up": "up", "up_proj": "up", "c_fc": "up", "fc1": "up", "fc_in": "up", "w3": "up", "dense_h_to_4h": "up",
    "down": "down", "down_proj": "down", "fc2": "down", "fc_out": "down", "w2": "down", "dense_4h_to_h": "down",
    "c_proj": "proj", "proj": "proj",
    "attn_norm": "norm1", "input_layernorm": "norm1", "ln_1": "norm1", "ln1": "norm1", "attention_norm": "norm1",
    "ffn_norm": "norm2", "post_attention_layernorm": "norm2", "ln_2": "norm2", "ln2": "norm2",
    "norm": "norm", "layernorm": "norm", "ln_f": "normf", "lnf": "normf", "final_layernorm": "normf", "final_norm": "normf",
    "lm_head": "head", "w_out": "head", "output": "head", "out": "head", "head": "head",
    "weight": "weight", "w": "weight", "bias": "bias", "b": "bias",
    # DeepSeek's and Qwen2-MoE's shared expert beside the routed ones.
    "shared_experts": "shared", "shared_expert": "shared", "shared": "shared", "experts": "experts", "expert": "experts",
    "attn": "attn", "self_attn": "attn", "attention": "attn", "mlp": "mlp", "ffn": "mlp", "feed_forward": "mlp",
}
ALIASES = {"normf": {"norm"}, "proj": {"o", "down"}, "head": {"out"}}


PLACEHOLDER = re.compile(r"\{\d+\.\.\d+\}")  # a stacked source's `{0..L-1}`


def _words(name):
    return [w for w in re.split(r"[._]", PLACEHOLDER.sub("*", name.lower())) if w and w != "*"]


def _concept_of(piece):
    if piece in CONCEPTS:
        return {CONCEPTS[piece]}
    if len(piece) > 1 and piece[0] in "wb" and piece[1:] in CONCEPTS:  # wq, bq, wte
        return {CONCEPTS[piece[1:]], "weight" if piece[0] == "w" else "bias"}
    return set()


def concepts(name):
    words = [w for w in re.split(r"[.]", PLACEHOLDER.sub("*", name.lower())) if w and not w.isdigit() and w != "*"]
    found = set()
    for word in words:
        # A word that says a role whole is not taken apart: q_proj is q, not also c_proj's proj.
        whole = _concept_of(word) or _concept_of(word.rstrip("0123456789"))  # wq0: wq of slot 0
        for piece in [word] if whole else word.split("_"):
            found |= _concept_of(piece) or _concept_of(piece.rstrip("0123456789"))
    for concept in list(found):
        found |= ALIASES.get(concept, set())
    if "bias" not in found:
        found.add("weight")
    return found


def numbers(name):
    """The slot numbers a name holds, in order: `experts.1` and `layers.0`, `e1`, `wq0`, `l0_`; not
    the digits of a name that says a role (`w1`, `fc2`, `ln_1`), nor a stacked source's `{0..L-1}`."""
    found = []
    for piece in _words(name):
        if piece.isdigit():
            found.append(int(piece))
        elif not _concept_of(piece) and re.fullmatch(r"[a-z]+\d+", piece):
            found.append(int(re.search(r"\d+$", piece).group()))
    return found


def number_score(ours, theirs):
    """+1 for each of our slot numbers that is theirs at the same place from the right (an expert's
    number is the last of `layers.0.experts.1`), -1 for each that differs."""
    a, b = numbers(ours), numbers(theirs)
    return sum(1 if x == y else -1 for x, y in zip(reversed(a), reversed(b)))


def name_score(ours, theirs):
    a, b = concepts(ours), concepts(theirs)
    score = len(a & b)
    if ("bias" in a) != ("bias" in b):
        score -= 3
    return score + 3 * number_score(ours, theirs)


# ---------------------------------------------------------------------------------------------
# The folder's tensors, and every reading of them.

class Source:
    """One tensor of the folder, or tensors stacked over one numbered level of their names (the
    layers: `layers.N.x` for every N, stacked = 1) or two (layers and experts, stacked = 2)."""

    def __init__(self, name, tensor, keys, rank, stacked):
        self.name, self.tensor, self.keys, self.rank, self.stacked = name, tensor, keys, rank, stacked


def sources_of(tensors, module_order):
    """Every tensor as it is, and stacked over its first numbered level and over its first two
    where every index of the grid is there with one shape."""
    import torch

    rank = {key: i for i, key in enumerate(module_order)}
    sources = [Source(key, tensors[key], [key], rank.get(key, len(rank)), 0) for key in tensors]
    for levels in (1, 2):
        groups = {}
        for key in tensors:
            words = key.split(".")
            numbered = [i for i, w in enumerate(words) if w.isdigit()][:levels]
            if len(numbered) == levels:
                pattern = tuple("*" if i in numbered else w for i, w in enumerate(words))
                groups.setdefault(pattern, {})[tuple(int(words[i]) for i in numbered)] = key
        for pattern, by_index in groups.items():
            # A run of indices, not always from 0: DeepSeek's sparse layers start after its dense ones.
            lows = [min(index[level] for index in by_index) for level in range(levels)]
            highs = [max(index[level] for index in by_index) for level in range(levels)]
            sizes = [high - low + 1 for low, high in zip(lows, highs)]
            grid = list(itertools.product(*(range(low, high + 1) for low, high in zip(lows, highs))))
            if len(grid) != len(by_index) or any(index not in by_index for index in grid):
                continue
            keys = [by_index[index] for index in grid]
            if len({tuple(tensors[k].shape) for k in keys}) != 1:
                continue
            placeholders = iter(f"{{{low}..{high}}}" for low, high in zip(lows, highs))
            name = ".".join(next(placeholders) if w == "*" else w for w in pattern)
            tensor = torch.stack([tensors[k] for k in keys]).reshape(*sizes, *tensors[keys[0]].shape)
            sources.append(Source(name, tensor, keys, min(rank.get(k, len(rank)) for k in keys), levels))
    sources.sort(key=lambda s: (s.rank, s.stacked, s.name))
    # A source's rank: the place among the tensors as a message lists them (a layer's tensor, or a
    # layer and expert's, has its stack's) of its first tensor, so that it is comparable to the
    # place of a param among the model's.
    place = {key: i for i, shown in enumerate(shown_sources(sources)) for key in shown.keys}
    for source in sources:
        source.rank = min(place[key] for key in source.keys)
    return sources


def shown_sources(sources):
    """The folder's tensors as a message lists them: stacked per layer where they are, else one by one."""
    layered = {k for s in sources if s.stacked == 1 for k in s.keys}
    return [s for s in sources if s.stacked == 1 or (not s.stacked and s.keys[0] not in layered)]


class Reading:
    def __init__(self, tensor, sources, how, text, family, part=None, partition=None):
        self.tensor, self.sources, self.how, self.text, self.family = tensor, sources, how, text, family
        self.part = part  # (i, parts) for piece i of a split
        self.partition = partition  # and the split's row counts: its other pieces may go to other params


# What a tensor does in a block, as names say it; a fused one's pieces and a joined one's whole.
ROLES = {"q", "k", "v", "o", "qkv", "gate", "up", "gate_up", "down", "embed", "pos", "head", "norm1", "norm2", "normf"}
PIECES = {"qkv": ("q", "k", "v"), "gate_up": ("gate", "up")}


def roles_of(reading):
    if "concatenated" in reading.how:
        joined = set().union(*(concepts(s.name) & ROLES for s in reading.sources))
        return {whole for whole, pieces in PIECES.items() if joined == set(pieces)} or joined
    roles = concepts(reading.sources[0].name) & ROLES
    if reading.part:
        i, parts = reading.part
        return {pieces[i] for whole, pieces in PIECES.items() if whole in roles and len(pieces) == parts}
    return roles


def role_agreement(param, reading):
    """+1 when the param's name and the reading say the same role, -1 when they say different ones."""
    mine, theirs = concepts(param) & ROLES, roles_of(reading)
    if not mine or not theirs:
        return 0
    return 1 if mine & theirs else -1


def split_sizes(rows, head_dim, heads):
    """How a fused tensor's rows may divide: into 2 or 3 equal parts, or, with fewer key/value
    heads than query heads (heads = (H, Hkv)), as q, k, v of H, Hkv and Hkv heads (Phi-3-medium's qkv)."""
    sizes = [[rows // parts] * parts for parts in (2, 3) if rows % parts == 0]
    if head_dim and heads and heads[1] and heads[0] != heads[1] and (heads[0] + 2 * heads[1]) * head_dim == rows:
        sizes.append([heads[0] * head_dim, heads[1] * head_dim, heads[1] * head_dim])
    return sizes


def readings_of(sources, head_dim, stacked_layers, heads=None):
    """Every reading of the folder's tensors, by the source it comes from."""
    out = []
    for s in sources:
        t = s.tensor
        per = t.shape[s.stacked:]
        # A matrix, or experts' matrices stacked in one tensor ([E rows cols]: transformers 5's
        # fused `experts.gate_up_proj`), whose rows are split and whose last two axes may be swapped.
        matrix = len(per) in (2, 3)
        base = [(t, set(), "")]
        if matrix:
            base.append((t.transpose(-1, -2).contiguous(), {"transposed"}, "transposed"))
        for tensor, how, text in base:
            stack = {"stacked"} if s.stacked else set()
            out.append(Reading(tensor, [s], how | stack, _join(s.name, text), s.name))
            rows = tensor.shape[-2] if matrix else tensor.shape[-1]
            if head_dim and head_dim % 2 == 0 and rows % head_dim == 0 and len(per) in (1, 2):
                for direction, label in ((True, "rows permuted (i, i+hd/2) -> (2i, 2i+1)"), (False, "rows permuted (2i, 2i+1) -> (i, i+hd/2)")):
                    out.append(Reading(rotary.permute_rows(tensor, head_dim, direction, len(per) == 2), [s], how | stack | {"permuted"},
                                       _join(s.name, text, label), s.name))
            for sizes in split_sizes(rows, head_dim, heads) if len(per) in (1, 2, 3) else ():
                parts, dim = len(sizes), -2 if matrix else -1
                for i, piece in enumerate(tensor.split(sizes, dim=dim)):
                    rows_said = "" if len(set(sizes)) == 1 else f", rows {sum(sizes[:i])} to {sum(sizes[:i + 1])}"
                    out.append(Reading(piece.contiguous(), [s], how | stack | {"split"},
                                       _join(s.name, text, f"part {i + 1} of {parts}{rows_said}"), s.name, part=(i, parts),
                                       partition=(text, tuple(sizes))))
        # A convolution's kernel [out C p q] is a linear map of its patches: flattened over (C p q)
        # as stored, or over (p q C) for patches cut channels last; a tensor with leading axes of 1
        # (a class token [1 1 D], position embeddings [1 N D]) without them.
        if not s.stacked and t.dim() >= 3:
            out.append(Reading(t.reshape(t.shape[0], -1), [s], {"flattened"}, _join(s.name, "flattened"), s.name))
            if t.dim() >= 4:
                last = t.permute(0, *range(2, t.dim()), 1).reshape(t.shape[0], -1)
                out.append(Reading(last.contiguous(), [s], {"flattened"}, _join(s.name, "flattened channels last"), s.name))
        if not s.stacked and t.dim() >= 2 and t.shape[0] == 1:
            squeezed = t
            while squeezed.dim() > 1 and squeezed.shape[0] == 1:
                squeezed = squeezed[0]
            out.append(Reading(squeezed, [s], {"squeezed"}, _join(s.name, "without its axes of 1"), s.name))
    # Separate tensors of one module (q, k, v; gate, up) concatenated along their rows.
    by_parent = {}
    for s in sources:
        parts = s.name.rsplit(".", 2)
        if len(parts) == 3:
            by_parent.setdefault((parts[0], parts[2], s.stacked), []).append(s)
    priority = {"q": 0, "k": 1, "v": 2, "gate": 3, "up": 4}
    for (_, _, stacked), members in by_parent.items():
        members = [m for m in members if priority.keys() & concepts(m.name)]
        members.sort(key=lambda m: min(priority[c] for c in priority.keys() & concepts(m.name)))
        for group in (members[:3], members[:2], members[1:3]):
            # Joined along the rows, which may differ (a grouped-query k and v have fewer than q).
            if len(group) < 2 or len({m.tensor.shape[stacked + 1:] for m in group}) != 1:
                continue
            dim = stacked
            import torch

            tensor = torch.cat([m.tensor for m in group], dim=dim)
            how = {"concatenated"} | ({"stacked"} if stacked else set())
            out.append(Reading(tensor, group, how, " + ".join(m.name for m in group) + " (concatenated)", "+".join(m.name for m in group)))
    return out


def _join(name, *notes):
    notes = [n for n in notes if n]
    return name + (f" ({', '.join(notes)})" if notes else "")


# ---------------------------------------------------------------------------------------------
# The search.


class Search:
    """The model's params (slots) and the folder's readings (candidates) ranked by names, places and
    roles, searched by mapping.py: a greedy first mapping, then local moves, each run by the forward."""

    def __init__(self, params, order, readings, sources, run, expected, tied):
        self.params = params  # name -> shape, the model's
        self.order = order  # the params in the order the forward reads them
        self.run, self.expected, self.tied = run, expected, tied
        n_sources = max(1, len(shown_sources(sources)))
        self.candidates, self.scores = {}, {}
        # Which way square matrices lean: the non-square ones whose only fitting reading is transposed.
        lean = 0
        matrices = [r for r in readings if r.sources[0].stacked == 1 and r.sources[0].tensor.dim() == 3 and not r.how & {"permuted", "split", "concatenated"}]
        for name, shape in params.items():
            fits = {("transposed" in r.how) for r in matrices if tuple(r.tensor.shape) == shape}
            lean += 1 if fits == {True} else -1 if fits == {False} else 0
        self.lean_transposed = lean > 0
        for i, (name, shape) in enumerate(order_items(params, order)):
            ranked = []
            for r in readings:
                if tuple(r.tensor.shape) != shape:
                    continue
                score = name_score(name, r.sources[0].name if len(r.sources) == 1 else r.family)
                score -= 2 * abs(i / max(1, len(params)) - r.sources[0].rank / n_sources)
                if "transposed" in r.how:
                    score += 0.5 if self.lean_transposed else -0.5
                score -= 1.5 * len(r.how & {"permuted", "split", "concatenated"})
                score += 2 * role_agreement(name, r)
                ranked.append((score, r))
            ranked.sort(key=lambda x: -x[0])
            self.candidates[name] = [r for _, r in ranked]
            self.scores[name] = [s for s, _ in ranked]
        self.verifier = mapping.Verifier(self.compare, TOLERANCE, BUDGET, nearness=self.nearness)

    @staticmethod
    def nearness(trial):
        """Nearest: agreeing, else agreeing on the longest run of first positions (right weights, a
        position-dependent difference), else the smallest difference."""
        return trial.difference >= TOLERANCE, -trial.detail[0], trial.difference

    @property
    def tried(self):
        return self.verifier.tried

    @property
    def best(self):
        nearest = self.verifier.nearest
        return (nearest.difference, nearest.mapping) if nearest else (math.inf, None)

    @property
    def best_logits(self):
        return self.verifier.nearest.detail[1] if self.verifier.nearest else None

    def unexplained(self):
        return [n for n, c in self.candidates.items() if not c]

    def compare(self, assignment):
        """The mapping's largest difference from transformers' logits, and (how many first positions
        agree, the logits) for the nearest's bookkeeping."""
        got = self.run({name: r.tensor for name, r in assignment.items()})
        d, agreeing = math.inf, 0
        if got.shape == self.expected.shape:
            per_position = (got - self.expected).abs().amax(dim=(0, 2)) / self.expected.abs().max()
            d = per_position.max().item()
            agreeing = int((per_position < TOLERANCE).long().cumprod(0).sum())
        return d, (agreeing, got)

    def difference(self, assignment):
        return self.verifier.verify(dict(assignment)).difference

    def score_of(self, name, reading):
        return next((s for r, s in zip(self.candidates[name], self.scores[name]) if r is reading), -math.inf)

    def cost(self, assignment):
        """How far names and places rank a move from the mapping."""
        return lambda move: sum(self.score_of(n, assignment[n]) - self.score_of(n, r) for n, r in move.items())

    def runner_up(self, assignment):
        """The nearest mapping run other than `assignment`; when it was the only one, the alternative
        names rank closest to it (one param's reading changed, or two swapped) is run to say the margin."""
        def closest():
            move = min(itertools.islice(self.moves(assignment), 1000), key=self.cost(assignment), default=None)
            if move:
                yield {**assignment, **move}

        other = self.verifier.runner_up(assignment, alternatives=closest())
        if other is None:
            return None
        changed = [f"{n} <- {other.mapping[n].text} instead of {r.text}" for n, r in assignment.items() if other.mapping.get(n) is not r]
        return {"mapping": "; ".join(changed[:3]) + (f"; and {len(changed) - 3} more" if len(changed) > 3 else ""),
                "difference": other.difference}

    def holders(self, assignment):
        """The readings that use each of the folder's tensors (by key: a layer's tensor is in its own
        source and in the stacked ones)."""
        used = {}
        for name, r in assignment.items():
            for s in r.sources:
                for key in s.keys:
                    used.setdefault(key, []).append(r)
        return used

    def free(self, reading, assignment):
        """Whether the reading's sources are left by the (partial) mapping: unused, a tied embedding
        used once, or a fused tensor whose other pieces of the same split are all that is used of it."""
        used = self.holders(assignment)

        def other_pieces(r):
            return reading.partition and r.partition == reading.partition and r.part != reading.part

        return all(key not in used or (self.tied(s) and len(used[key]) < 2) or all(other_pieces(r) for r in used[key])
                   for s in reading.sources for key in s.keys)

    def admits(self, name, reading, partial):
        return self.free(reading, partial)

    def moves(self, assignment):
        """One param's reading changed, two swapped (mapping.local_moves), or two params' rows
        permuted together (q and k of an interleaved rotary)."""
        yield from mapping.local_moves(assignment, self.candidates, self.admits,
                                       lambda theirs, wanted: any(s in theirs.sources for s in wanted.sources))
        names = list(self.candidates)
        permutable = {}
        for name in names:
            mine = assignment[name]
            for r in self.candidates[name]:
                if "permuted" in r.how and r.sources == mine.sources and r.how - {"permuted"} == mine.how - {"permuted"}:
                    permutable.setdefault(name, []).append(r)
        keys = list(permutable)
        for i, a in enumerate(keys):
            for b in keys[i + 1:]:
                for ra in permutable[a]:
                    for rb in permutable[b]:
                        if ra.text.endswith(rb.text[-20:]):  # the same direction
                            yield {a: ra, b: rb}

    def ranked_moves(self, assignment, first=32):
        """The moves: the `first` that names and places rank closest to the mapping (a swap of two
        biases of one shape that the ranking nearly tied costs one forward, not one per param before
        it), then the rest in their own order (a swap the names rank far, Gemma 2's pre- and
        post-feed-forward norms, is still reached within the budget)."""
        return mapping.closest_first(self.moves(assignment), self.cost(assignment), first)

    def search(self):
        assignment = mapping.greedy(self.candidates, self.scores, self.admits)
        current = self.difference(assignment)
        progress(f"first mapping: largest difference {current:.2e} of the largest logit")
        # Logits that agree on the first two positions or more and then differ come from the right
        # weights (a wrong reading shows from position 0, a wrong rotary pairing from 1): what
        # differs depends on the position (a sliding window, the rotary base), which no reading repairs.
        return mapping.repair(
            assignment, current, self.ranked_moves, self.verifier, going=lambda: self.verifier.trials[-1].detail[0] < 2,
            on_move=lambda move, d: progress(f"  {', '.join(f'{n} <- {r.text}' for n, r in move.items())}: largest difference {d:.2e}"))


def order_items(params, order):
    return [(name, params[name]) for name in order if name in params] + [(n, s) for n, s in params.items() if n not in order]


# ---------------------------------------------------------------------------------------------
# Putting it together.


def tokens_to_compare(spec, config):
    """How many tokens each row compares, and the sliding windows seen: past the widest window the
    program or the folder's config has (a window shows only from position W on), within the
    positions both have; 16 where there is none."""
    windows = [w for w in (spec.get("sliding_window"), getattr(config, "sliding_window", None)) if isinstance(w, int) and w > 0]
    limits = [getattr(config, "max_position_embeddings", None)]
    if spec.get("takes_positions", True):
        limits.append(spec.get("max_positions"))
    limits = [p for p in limits if isinstance(p, int) and p > 0]
    want = 2 * max(windows) if windows else 16
    return max(1, min([max(16, want)] + limits)), windows


def where_it_differs(search, expected, windows, spec, config):
    """`, from position P on`, when the nearest mapping's logits agree before it: with a window of P
    on one side, the sliding window is what differs."""
    got = search.best_logits
    if got is None or got.shape != expected.shape:
        return ""
    per_position = ((got - expected).abs().amax(dim=(0, 2)) / expected.abs().max())
    bad = (per_position >= TOLERANCE).nonzero()
    if not len(bad) or bad[0].item() == 0:
        return ""
    first = bad[0].item()
    said = f", from position {first} on (the first {first} agree)"
    ours, theirs = spec.get("sliding_window") or 0, getattr(config, "sliding_window", None) or 0
    if first in windows and ours != theirs:
        said += (f": the folder's config has {f'a sliding window of {theirs}' if theirs else 'no sliding window'} (`sliding_window`), "
                 f"the program's attention {f'a window of {ours}' if ours else 'none'}")
    return said


# An encoder's inputs as transformers' model takes them, by role (the description's `inputs`).
HF_INPUT = {"ids": "input_ids", "token_types": "token_type_ids", "mask": "attention_mask", "pixels": "pixel_values"}


def encoder_inputs(spec, vocab, n, generator):
    """The encoder's inputs, in the forward's order, for 2 rows of n tokens (or 2 images), and the
    same as transformers' keywords: ids and token types drawn at random, a padding mask that keeps
    every token of the first row and the first three quarters of the second."""
    import torch

    ours, theirs = [], {}
    for given in spec["inputs"]:
        role, bound = given["role"], given.get("bound")
        if role == "ids":
            value = torch.randint(0, min(vocab, bound or vocab), (2, n), generator=generator)
        elif role == "token_types":
            value = torch.randint(0, bound or 1, (2, n), generator=generator)
        elif role == "mask":
            value = torch.ones(2, n, dtype=torch.bool)
            value[1, n - n // 4:] = False
        else:  # pixels: every axis but the batch has a fixed size
            sizes = given["shape"][1:]
            if any(size is None for size in sizes):
                raise ImportWeightsError(f"`{given['name']}` ({given['where']}) has a generic axis besides the batch: "
                                         "the images compared need a fixed size, as the folder's config has")
            value = torch.randn(2, *sizes, generator=generator)
        ours.append(value)
        theirs[HF_INPUT[role]] = value.long() if role == "mask" else value
    return ours, theirs


def import_folder(spec, reference, folder=None, folder_name=None):
    """The model's parameters (name -> float32 tensor) read from a Hugging Face folder, and a
    summary of how. Raises ImportWeightsError."""
    try:
        import torch
        import transformers
    except ImportError as e:
        raise ImportWeightsError(f"importing a Hugging Face folder needs torch and transformers in this Python ({sys.executable}): {e}")
    transformers.utils.logging.disable_progress_bar()
    folder = folder or spec["folder"]
    name = folder_name or spec.get("folder_name") or folder
    params = {p["name"]: tuple(p["shape"]) for p in spec["parameters"]}
    model_name = spec["model"]
    if not params:
        raise ImportWeightsError(f"`{spec['function']}` takes no model with parameters: there is nothing to import")
    config, tensors, files = read_folder(folder, name)

    # The reference: transformers' own model of the folder, whose logits (a language model's) or
    # last hidden state (an encoder's: BertModel, ViTModel) the compiled forward must give.
    encoder = spec.get("kind") == "encoder"
    progress(f"loading transformers' model of {name} ({config.get('architectures', ['?'])[0]})")
    try:
        auto = transformers.AutoModel if encoder else transformers.AutoModelForCausalLM
        hf_model = auto.from_pretrained(folder, dtype=torch.float32, attn_implementation="eager").eval()
    except Exception as e:  # noqa: BLE001 - transformers' own reason
        raise ImportWeightsError(f"transformers can't load `{name}` as {'an encoder' if encoder else 'a causal language model'}: {type(e).__name__}: {e}")
    module_order = [k for k, _ in hf_model.named_parameters(remove_duplicate=False)]
    module_order = [k for k in module_order if k in tensors] + [k for k in tensors if k not in module_order]

    compiled = getattr(reference, model_name)()
    function = getattr(reference, spec["function"])
    vocab_size = getattr(hf_model.config, "vocab_size", 0) or 0
    vocab = min(vocab_size, spec.get("vocab") or vocab_size)
    n, windows = tokens_to_compare(spec, hf_model.config)
    generator = torch.Generator().manual_seed(3)
    if encoder:
        inputs, hf_inputs = encoder_inputs(spec, vocab, n, generator)
        ids = inputs[0]
        progress(f"comparing the last hidden state on 2 rows of {n} tokens" if "input_ids" in hf_inputs else "comparing the last hidden state on 2 images")
    else:
        ids = torch.randint(0, vocab, (2, n), generator=generator)
        if n > 1 and torch.equal(ids[0], ids[1]):  # rows of different content: a batch mix-up shows
            ids[1] = ids[1].roll(1)
        inputs = [ids] + ([torch.arange(n).expand(2, -1)] if spec.get("takes_positions", True) else [])
        hf_inputs = {"input_ids": ids}
        progress(f"comparing logits on {ids.shape[0]} rows of {n} tokens" + (f" (sliding window {max(windows)})" if windows else ""))
    with torch.no_grad():
        answer = hf_model(**hf_inputs)
        expected = (answer.last_hidden_state if encoder else answer.logits).float()

    order = []

    def run(values, record=False):
        compiled.load_state_dict(values)
        try:
            return script.run_model(function, compiled, inputs, order if record else None).float()
        except Exception:  # noqa: BLE001 - a reading the forward can't run is a reading that doesn't agree
            return torch.full((1,), math.inf)

    with torch.no_grad():
        run({k: v.detach() for k, v in compiled.state_dict().items()}, record=True)  # the order the forward reads params in

    head_dim = getattr(hf_model.config, "head_dim", None)
    if not head_dim and getattr(hf_model.config, "num_attention_heads", None):
        head_dim = hf_model.config.hidden_size // hf_model.config.num_attention_heads
    every_source = sources_of(tensors, module_order)
    tie = bool(getattr(hf_model.config, "tie_word_embeddings", False)) and not encoder

    def tied(source):
        return tie and not source.stacked and source.tensor.dim() == 2 and source.tensor.shape[0] == vocab_size

    config_heads = getattr(hf_model.config, "num_attention_heads", None)
    heads = (config_heads, getattr(hf_model.config, "num_key_value_heads", None) or config_heads) if config_heads else None
    # First the tensors as a message lists them (stacked per layer where they are), so that the
    # copies the readings make are those; a layer's tensor on its own, or stacked over layers and
    # experts, is read only when some param finds no reading without them.
    for sources in (shown_sources(every_source), every_source):
        readings = readings_of(sources, head_dim, None, heads)
        search = Search(params, order, readings, sources, run, expected, tied)
        if not search.unexplained():
            break
    missing = search.unexplained()
    if missing:
        declared = {p["name"]: p.get("where") for p in spec["parameters"]}
        lines = [f"`{p}` {_shape(params[p])}" + (f" ({declared[p]})" if declared.get(p) else "") for p in missing]
        left = sorted(s.name + " " + _shape(s.tensor.shape) for s in shown_sources(sources))
        raise ImportWeightsError(
            f"no tensor of `{name}` fits {', '.join(lines)} of `{model_name}` in any reading (as stored, stacked per layer, "
            f"transposed, permuted, split or concatenated); the folder has: {', '.join(left)}")
    progress(f"searching: {len(params)} params, {len(readings)} readings of {len(shown_sources(sources))} tensors (stacked per layer)")
    assignment, difference = search.search()
    if difference >= TOLERANCE:
        best_difference, best = search.best
        said = "; ".join(f"{p} <- {r.text}" for p, r in (best or assignment).items())
        raise ImportWeightsError(
            f"no reading of `{name}` gives transformers' logits in `{spec['function']}`"
            f"{' (' + spec['function_where'] + ')' if spec.get('function_where') else ''}: every param of `{model_name}` has tensors "
            f"that fit its shape, but the nearest of {search.tried} {'mapping' if search.tried == 1 else 'mappings'} tried differs by {best_difference:.2e} of the largest "
            f"logit{where_it_differs(search, expected, windows, spec, hf_model.config)} (nearest: {said}); the model may compute something other "
            f"than the folder's config ({config.get('model_type', '?')}) says: its norms' eps, its rotary base, its activation"
            f"{', its sliding window' if windows else ''}")
    runner_up = search.runner_up(assignment)
    used = {key for r in assignment.values() for s in r.sources for key in s.keys}
    unused = [s.name for s in shown_sources(sources) if not used & set(s.keys)]
    readings_needed = {}
    for r in assignment.values():
        for how in r.how:
            readings_needed[how] = readings_needed.get(how, 0) + 1
    # Tied: one tensor read whole by two params (the pieces of one split are "split", not tied).
    shared = [s.name for s in sources if sum(1 for r in assignment.values() if s in r.sources and not r.part) > 1]
    if shared:
        readings_needed["tied"] = len(shared)
    values = {p: assignment[p].tensor.detach().to(torch.float32).contiguous().clone() for p in params}
    summary = {
        "tensors": len(used),
        "files": files,
        "params": len(params),
        "readings": readings_needed,
        "difference": difference,
        "tried": search.tried,
        "forwards": search.tried,
        "tokens": list(expected.shape[:2]) if encoder else list(ids.shape),
        "runner_up": runner_up,
        "mapping": {p: r.text for p, r in assignment.items()},
        "unused": unused,
    }
    progress(f"agrees with transformers: largest difference {difference:.2e} of the largest logit ({search.tried} {'mapping' if search.tried == 1 else 'mappings'} tried)")
    if runner_up:
        progress(f"runner-up: {runner_up['mapping']}: largest difference {runner_up['difference']:.2e}")
    return values, summary


def import_weights(spec):
    try:
        import torch
        import transformers  # noqa: F401
        import safetensors  # noqa: F401
    except ImportError as e:
        raise ImportWeightsError(f"import-weights needs torch, transformers and safetensors in this Python ({sys.executable}): {e}")
    reference = script.reference_module(spec)
    output = spec["output"]
    output_name = spec.get("output_name") or output
    if not os.path.isdir(os.path.dirname(output) or "."):
        raise ImportWeightsError(f"can't write `{output_name}`: the folder `{os.path.dirname(output)}` does not exist")
    values, summary = import_folder(spec, reference)
    # A name of its own beside the target: two writers never share a partial file.
    fd, partial = tempfile.mkstemp(prefix="." + os.path.basename(output)[:64] + ".", suffix=".partial", dir=os.path.dirname(output) or ".")
    os.close(fd)
    try:
        torch.save(values, partial)
        os.replace(partial, output)  # whole or not at all: a failed import leaves what was there
    except BaseException as e:
        if os.path.exists(partial):
            os.remove(partial)
        if isinstance(e, OSError):
            raise ImportWeightsError(f"can't write `{output_name}`: {e}")
        raise
    script.reply(spec, summary)
    return 0


def main(argv):
    return script.run(argv, import_weights, (ImportWeightsError,))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""Writes a GGUF file for `shapescript export --gguf FILE`.

llama.cpp runs its own implementation of each architecture it knows, so nothing is compiled here.
This script finds the architecture that computes what the model does: it reads the model's
parameters as each candidate's tensors (in the order the forward uses them, then every other
order their shapes allow), runs the compiled forward and a reference of llama.cpp's computation on
the same random weights, and writes the first that agrees with the `gguf` package.

The CLI runs it with a spec (JSON):
  source                 the .ss file (the file's `general.name` when the forward takes no model)
  output                 the file to write (absolute)
  reference              the pt2 code generator's module: its model class and forward
  model, function        the ShapeScript model and the forward's name
  parameters             [{name, shape, stacked}]: stacked along the blocks axis or not
  layers                 the number of blocks
  embedding, output_layer  the parameters `embedding(ids, m.E)` and `linear(h, m.W)` read
  embedding_tables       the parameters any `embedding` of the forward reads rows of (tokens, positions)
  takes_positions, max_positions, vocab
  sliding_window         the blocks' attention's `window=`, or 0: every earlier position
  layer_windows          each block's `window=` (0: none), as the description decides it per block (gemma3, cohere2)
  builtins               [{name, keywords, where}]: the built-ins the forward reaches, keywords as written, and their `file:line:col`
  kind, inputs           `encoder` for a forward that returns its last hidden state (llama.cpp's `bert`), with its
                         inputs by role (SPEC.md); else `causal_lm`
  description            the model description (SPEC.md): its output head's bias and operations are refused here
  weights, weights_name  a checkpoint for the file's weights, or null: the initializers
  tokenizer, tokenizer_name  the tokenizer to embed, or null: a GGUF file (its `tokenizer.*` keys as they are),
                         a tokenizer.json or a Hugging Face folder (hf_tokenizer.py computes llama.cpp's keys);
                         without one, a folder `weights` names gives its tokenizer when it has one
  reply                  where to write the answer (absolute)

The export target `gguf` (targets.py): run_export.py calls write(spec, verbose), which returns the
answer; EXPECTED are the refusals said as they are.
"""

from __future__ import annotations

import itertools
import math
import os
import sys
import tempfile

if __package__:  # shapescript.runtime, imported in a Python process: sys.path untouched
    from . import script, weights
    from . import hf_tokenizer, mapping, rotary
else:  # a file the CLI runs with `python -I`, whose folder holds the runtime's modules
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import script  # noqa: E402
    import hf_tokenizer  # noqa: E402
    import mapping  # noqa: E402
    import rotary  # noqa: E402
    import weights  # noqa: E402


class GgufError(Exception):
    pass


# ---------------------------------------------------------------------------------------------
# What the model is: its parameters, in the order its forward uses them, and what it computes with.


class Model:
    def __init__(self, spec, reference):
        self.spec = spec
        self.reference = reference
        self.shapes = {p["name"]: tuple(p["shape"]) for p in spec["parameters"]}
        self.embedding = spec["embedding"]
        self.output_layer = spec["output_layer"]
        self.embedding_tables = spec["embedding_tables"]
        self.layers = spec["layers"]
        # Which slice of each field each block reads (`m.w[l]`, or `m.w_router[l - Ld]` in the blocks after
        # Ld dense ones): a field some blocks read and others don't is stacked over a run of the blocks.
        blocks = (spec.get("description") or {}).get("blocks") or {}
        stacked = [p["name"] for p in spec["parameters"] if p["stacked"]]  # read as `m.w[l]`, in the blocks' order of use
        self.slices = blocks.get("slices") or [{name: i for name in stacked} for i in range(self.layers)]
        readers = {}
        for i, read in enumerate(self.slices):
            for name in read:
                readers.setdefault(name, []).append(i)
        self.sliced = set(readers)
        # The fields every block reads, and those of each narrower run of blocks, first blocks first.
        every = [name for name, blocks_reading in readers.items() if len(blocks_reading) == self.layers]
        self.stacked = [name for name in stacked if name in every] + [name for name in every if name not in stacked]
        runs = {}
        for name, blocks_reading in readers.items():
            if name not in every:
                runs.setdefault(tuple(blocks_reading), []).append(name)
        self.runs = sorted(runs.items())
        self.others = [
            p["name"] for p in spec["parameters"] if p["name"] not in self.sliced and p["name"] not in (self.embedding, self.output_layer)
        ]
        self.vocab, self.width = self.shapes[self.embedding]
        self.takes_positions = spec["takes_positions"]
        self.max_positions = spec["max_positions"]
        self.calls = spec["builtins"]
        self.encoder = spec.get("kind") == "encoder"  # its last hidden state, not logits (llama.cpp's bert: embeddings)
        self.inputs = spec.get("inputs") or []

    def run(self, params, ids):
        """The compiled forward on `params` (name -> tensor) for ids (b, n), positions 0..n-1: its
        logits, and the parameters in the order it first reads them."""
        import torch

        order = []
        module = getattr(self.reference, self.spec["model"])()
        module.load_state_dict(params)
        function = getattr(self.reference, self.spec["function"])
        if self.encoder:  # llama.cpp's bert: token type 0 everywhere, every position attended to
            by_role = {"ids": ids, "token_types": torch.zeros_like(ids), "mask": torch.ones(ids.shape, dtype=torch.bool)}
            logits = script.run_model(function, module, [by_role[given["role"]] for given in self.inputs], order)
        else:
            logits = script.run_forward(function, module, ids, self.takes_positions, order)
        return logits, order + [name for name in params if name not in order]

    def uses(self, kinds):
        """The built-ins of `kinds` (name -> how to say it) the forward reaches, said as written."""
        found = []
        for call in self.calls:
            said = kinds.get(_call_kind(call))
            if said and said not in found:
                found.append(said)
        return found

    def epsilons(self, norm):
        return sorted({float(call["keywords"].get("eps", "1e-5")) for call in self.calls if call["name"] == norm})

    def where(self, kinds):
        """Where the forward first reaches a built-in of `kinds` (as _call_kind names them): ` at FILE:LINE:COL`."""
        if not DETAILED:
            return ""
        return next((f" at {call['where']}" for call in self.calls if _call_kind(call) in kinds and call.get("where")), "")

    def where_epsilon(self, norm, eps):
        """Where the forward first normalizes with `norm` and an epsilon other than `eps`."""
        if not DETAILED:
            return ""
        return next((f" at {call['where']}" for call in self.calls if call["name"] == norm and call.get("where")
                     and float(call["keywords"].get("eps", "1e-5")) != eps), "")

    def where_blocks(self):
        if not DETAILED:
            return ""
        blocks = (self.spec.get("description") or {}).get("blocks") or {}
        return f" at {blocks['where']}" if blocks.get("where") else ""


def _call_kind(call):
    if call["name"] == "gelu":
        approximate = call["keywords"].get("approximate", '"none"').strip('"')
        return "gelu_tanh" if approximate == "tanh" else "gelu"
    return call["name"]


NORMS = {"rms_norm": "rms_norm", "layer_norm": "layer_norm"}
ACTIVATIONS = {
    "silu": "silu",
    "gelu": "gelu",
    "gelu_tanh": 'gelu(approximate="tanh")',
    "relu": "relu",
    "sigmoid": "sigmoid",
    "tanh": "tanh",
}


def random_params(model, seed=0):
    """Weights that make every part of the model matter: unit-scale activations, norms and biases
    away from 1 and 0, so a misplaced tensor or a different formula changes the logits."""
    import torch

    generator = torch.Generator().manual_seed(seed)
    params = {}
    for name, shape in model.shapes.items():
        vector_shape = shape[1:] if name in model.sliced else shape
        if name in model.embedding_tables:
            value = torch.randn(shape, generator=generator, dtype=torch.float64)  # rows looked up, not multiplied
        elif len(vector_shape) >= 2:
            value = torch.randn(shape, generator=generator, dtype=torch.float64) / math.sqrt(vector_shape[-1])
        else:
            value = 1 + 0.3 * torch.randn(shape, generator=generator, dtype=torch.float64)
        params[name] = value
    return params


# ---------------------------------------------------------------------------------------------
# llama.cpp's architectures: their tensors (in PyTorch's order, the reverse of ggml's) and their math.


class Arch:
    name = ""
    # A variant of another architecture (qwen2: a llama with biases) is tried, and named in a refusal,
    # only for a model with its number of tensors: otherwise its base's reason says all there is to say.
    variant_of = None
    norm = ""
    activation = ""
    block = []  # (tensor, shape) per block, in llama.cpp's order of use
    other = []  # tensors besides token_embd and output
    tied_output = False  # llama.cpp reads the output layer from token_embd: the model must tie them
    # (tensors of the first blocks, tensors of the rest), besides `block`: deepseek2's leading dense
    # blocks (`leading_dense_block_count`) and sparse ones; () where every block has the same tensors.
    runs = ()

    def plans(self, model):
        """How the model's fields may be this architecture's tensors: [(the tensors every block has,
        [(a run's tensors, the fields that may be them, its blocks)], how many first blocks are the first
        run's or None)], empty where the numbers of fields don't fit."""
        if len(model.others) != len(self.other):
            return []
        every = len(model.stacked)
        if not self.runs:
            return [(self.block, [], None)] if not model.runs and every == len(self.block) else []
        first, rest = self.runs
        if not model.runs:  # every block alike: all of them the first run's kind, or all the rest's
            return [(self.block + tensors, [], count) for tensors, count in ((first, model.layers), (rest, 0))
                    if every == len(self.block) + len(tensors)]
        if len(model.runs) != 2:
            return []
        (lead, lead_fields), (trail, trail_fields) = model.runs
        if lead != tuple(range(len(lead))) or trail != tuple(range(len(lead), model.layers)):
            return []
        if (every, len(lead_fields), len(trail_fields)) != (len(self.block), len(first), len(rest)):
            return []
        return [(self.block, [(first, lead_fields, lead), (rest, trail_fields, trail)], len(lead))]

    def fits(self, model):
        return bool(self.plans(model))

    def variants(self, env):
        """Readings of the hyperparameters the weights don't show: heads, rotary layout, base."""
        raise NotImplementedError

    def reference(self, tensors, hp, ids):
        raise NotImplementedError

    def describe(self, hp):
        return f"{hp['heads']} heads of {hp['head_dim']}"

    def fit(self, tensors, hp, ids, logits):
        """hp with the real numbers the weights don't show fitted to the logits (deepseek2's expert scale)."""
        return hp


def _rms_norm(x, weight, eps):
    return x / (x.pow(2).mean(-1, keepdim=True) + eps).sqrt() * weight


def _layer_norm(x, weight, bias, eps):
    mean = x.mean(-1, keepdim=True)
    var = (x - mean).pow(2).mean(-1, keepdim=True)
    return (x - mean) / (var + eps).sqrt() * weight + bias


def _attention(q, k, v, heads, kv_heads):
    """Causal attention, q (b, n, H, hd) etc.; query head h reads kv head h // (H / Hkv)."""
    import torch

    hd = q.shape[-1]
    q, k, v = (t.transpose(1, 2) for t in (q, k, v))
    if kv_heads != heads:
        k = k.repeat_interleave(heads // kv_heads, dim=1)
        v = v.repeat_interleave(heads // kv_heads, dim=1)
    scores = q @ k.transpose(-1, -2) / math.sqrt(hd)
    n = q.shape[2]
    mask = torch.ones(n, n, dtype=torch.bool).tril()
    scores = scores.masked_fill(~mask, float("-inf"))
    out = scores.softmax(-1) @ v
    return out.transpose(1, 2).reshape(q.shape[0], n, heads * hd)


def _rope_norm(x, positions, base, factors=None):
    """llama.cpp's NORM rotary form: pairs (2i, 2i+1) rotated by pos * base^(-2i/hd), over
    `rope_freqs` where the file has it."""
    import torch

    hd = x.shape[-1]
    inv = base ** (-torch.arange(0, hd, 2, dtype=x.dtype) / hd)
    inv = inv if factors is None else inv / factors
    angle = positions[:, :, None, None].to(x.dtype) * inv
    x0, x1 = x[..., 0::2], x[..., 1::2]
    cos, sin = angle.cos(), angle.sin()
    out = torch.empty_like(x)
    out[..., 0::2] = x0 * cos - x1 * sin
    out[..., 1::2] = x0 * sin + x1 * cos
    return out


def permute_rows_for_norm_rope(w, heads):
    """Rows of a projection (or its bias) reordered for llama.cpp's NORM rotary form, which pairs
    (2i, 2i+1) where Hugging Face pairs (i, i + hd/2): llama.cpp's own converter does the same."""
    return rotary.permute_rows(w, w.shape[0] // heads, to_interleaved=True, matrix=w.dim() == 2)


# A sparse mixture of experts as llama.cpp's build_moe_ffn computes it with softmax gating: the
# router's softmax over the E experts, the `expert_used` highest kept and renormalized to sum to 1
# (Mixtral's and Qwen3-MoE's graphs), each a gated feed-forward layer stacked over experts.
_EXPERTS = [("ffn_gate_inp.weight", ("E", "d")), ("ffn_gate_exps.weight", ("E", "F", "d")), ("ffn_up_exps.weight", ("E", "F", "d")),
            ("ffn_down_exps.weight", ("E", "d", "F"))]


def _expert_counts(env):
    """How many experts each token may use (not in the weights): 2 first, as Mixtral and most MoEs."""
    return sorted(range(1, env["E"] + 1), key=lambda k: (k != 2, k))


def _sparse_experts(layer, f, used, activate, normalize=True):
    top, chosen = (f @ layer["ffn_gate_inp.weight"].T).softmax(-1).topk(used, dim=-1)
    if normalize:  # llama.cpp's build_moe_ffn's norm_w: Mixtral's and Qwen3-MoE's graphs, not Qwen2-MoE's
        top = top / top.sum(-1, keepdim=True)
    inner = activate(_every_expert(f, layer, "ffn_gate_exps")) * _every_expert(f, layer, "ffn_up_exps")
    return _chosen_experts(_every_expert(inner, layer, "ffn_down_exps"), chosen, top)


def _every_expert(x, layer, name):
    """x (b, n, in), or each expert's own (b, n, E, in), through each expert's `name` projection (and
    bias, where the file has one): (b, n, E, out). Every expert on every row: the references run at
    tiny sizes."""
    import torch

    weight = layer[f"{name}.weight"]
    y = torch.einsum("bnd,efd->bnef" if x.dim() == 3 else "bned,efd->bnef", x, weight)
    return y + layer[f"{name}.bias"] if f"{name}.bias" in layer else y


def _chosen_experts(out, chosen, weights):
    """The chosen experts' rows of out (b, n, E, d), weighted and summed."""
    return (out.gather(2, chosen[..., None].expand(*chosen.shape, out.shape[-1])) * weights[..., None]).sum(2)


def _add_experts(writer, hp):
    writer.add_expert_count(hp["E"])
    writer.add_expert_used_count(hp["expert_used"])


# Llama 3's rope scaling, (factor, low_freq_factor, high_freq_factor, original context), tried
# after none: the frequencies aren't in the weights, and llama.cpp reads them as `rope_freqs`.
LLAMA3_SCALINGS = [None] + [(factor, 1.0, 4.0, context) for factor in (8.0, 32.0, 16.0)
                            for context in (8192, 4096, 2048, 1024, 512, 256, 128, 64, 32)]


def llama3_rope_factors(hd, base, factor, low_freq_factor, high_freq_factor, context):
    """What each rotary frequency is divided by, as llama.cpp's converter computes it (conversion/llama.py)."""
    import torch

    factors = []
    for freq in 1.0 / (base ** (torch.arange(0, hd, 2, dtype=torch.float64) / hd)):
        wavelength = 2 * math.pi / freq.item()
        if wavelength < context / high_freq_factor:
            factors.append(1.0)
        elif wavelength > context / low_freq_factor:
            factors.append(factor)
        else:
            smooth = (context / wavelength - low_freq_factor) / (high_freq_factor - low_freq_factor)
            factors.append(1 / ((1 - smooth) / factor + smooth))
    return torch.tensor(factors, dtype=torch.float64)


class Llama(Arch):
    name = "llama"
    norm = "rms_norm"
    activation = "silu"
    block = [
        ("attn_norm.weight", ("d",)),
        ("attn_q.weight", ("d", "d")),
        ("attn_k.weight", ("kv", "d")),
        ("attn_v.weight", ("kv", "d")),
        ("attn_output.weight", ("d", "d")),
        ("ffn_norm.weight", ("d",)),
        ("ffn_gate.weight", ("F", "d")),
        ("ffn_up.weight", ("F", "d")),
        ("ffn_down.weight", ("d", "F")),
    ]
    other = [("output_norm.weight", ("d",))]
    bases = (10000.0, 500000.0, 1000000.0)

    def variants(self, env):
        d, kv = env["d"], env["kv"]
        # Every plain reading before any scaled one: a plain Llama's is found within the first few.
        for scalings in (LLAMA3_SCALINGS[:1], LLAMA3_SCALINGS[1:]):
            for hd in _head_sizes(d):
                if hd % 2 or kv % hd:
                    continue
                for layout in ("pairs", "halves"):
                    for base in self.bases:
                        for scaling in scalings:
                            yield {"heads": d // hd, "kv_heads": kv // hd, "head_dim": hd, "rope": layout, "base": base,
                                   "rope_scaling": scaling}

    def describe(self, hp):
        pairs = "(i, i + head size / 2)" if hp["rope"] == "halves" else "(2i, 2i + 1)"
        scaling = hp.get("rope_scaling")
        scaled = f", Llama 3 rope scaling (factor {scaling[0]:g}, original context {scaling[3]})" if scaling else ""
        return f"{hp['heads']} heads of {hp['head_dim']}, rotary pairs {pairs}, base {hp['base']:g}{scaled}"

    def prepare(self, tensors, hp):
        """The tensors as the file holds them: Q and K rows in llama.cpp's rotary order, and Llama 3's
        scaled frequencies as `rope_freqs` (each rotary frequency divided by its factor)."""
        out = dict(tensors)
        if hp.get("rope_scaling"):
            out["rope_freqs.weight"] = llama3_rope_factors(hp["head_dim"], hp["base"], *hp["rope_scaling"])
        if hp["rope"] != "halves":
            return out
        for name, value in tensors.items():
            if name.endswith("attn_q.weight"):
                out[name] = permute_rows_for_norm_rope(value, hp["heads"])
            elif name.endswith("attn_k.weight"):
                out[name] = permute_rows_for_norm_rope(value, hp["kv_heads"])
        return out

    rope_form = "norm"  # llama.cpp's rotary form: NORM pairs (2i, 2i+1), NEOX (i, i + head size/2)

    def embed(self, t, hp, ids):
        return t["token_embd.weight"][ids]

    def project_qkv(self, layer, a, hp):
        """q, k and v, each [b n width], from the normed hidden states; with biases where the file has them."""
        def project(name):
            y = a @ layer[f"attn_{name}.weight"].T
            return y + layer[f"attn_{name}.bias"] if f"attn_{name}.bias" in layer else y
        return project("q"), project("k"), project("v")

    def activate(self, gate):
        import torch

        return torch.nn.functional.silu(gate)

    def feed_forward(self, layer, f, hp):
        return (self.activate(f @ layer["ffn_gate.weight"].T) * (f @ layer["ffn_up.weight"].T)) @ layer["ffn_down.weight"].T

    def reference(self, t, hp, ids):
        """llama.cpp's block (norm, attention, norm, feed-forward, both residual) in float64; the
        variants differ only in the hooks above."""
        import torch

        b, n = ids.shape
        positions = torch.arange(n).expand(b, n)
        H, Hkv, hd, eps = hp["heads"], hp["kv_heads"], hp["head_dim"], hp["eps"]
        rope = _rope_norm if self.rope_form == "norm" else _rope_neox
        x = self.embed(t, hp, ids)
        for i in range(hp["blocks"]):
            prefix = f"blk.{i}."
            layer = {name[len(prefix):]: value for name, value in t.items() if name.startswith(prefix)}
            q, k, v = self.project_qkv(layer, _rms_norm(x, layer["attn_norm.weight"], eps), hp)
            factors = t.get("rope_freqs.weight")
            q, k = rope(q.reshape(b, n, H, hd), positions, hp["base"], factors), rope(k.reshape(b, n, Hkv, hd), positions, hp["base"], factors)
            h = x + _attention(q, k, v.reshape(b, n, Hkv, hd), H, Hkv) @ layer["attn_output.weight"].T
            x = h + self.feed_forward(layer, _rms_norm(h, layer["ffn_norm.weight"], eps), hp)
        out = _rms_norm(x, t["output_norm.weight"], eps)
        return out @ t.get("output.weight", t["token_embd.weight"]).T

    def metadata(self, writer, hp, model):
        writer.add_context_length(model.max_positions if model.takes_positions else 2048)
        writer.add_embedding_length(hp["d"])
        writer.add_block_count(hp["blocks"])
        writer.add_feed_forward_length(hp["F"])
        writer.add_head_count(hp["heads"])
        writer.add_head_count_kv(hp["kv_heads"])
        writer.add_layer_norm_rms_eps(hp["eps"])
        writer.add_rope_dimension_count(hp["head_dim"])
        writer.add_rope_freq_base(hp["base"])


def _rope_neox(x, positions, base, factors=None):
    """llama.cpp's NEOX rotary form: pairs (i, i + hd/2) rotated by pos * base^(-2i/hd), as Hugging Face's rotate_half."""
    import torch

    hd = x.shape[-1]
    inv = base ** (-torch.arange(0, hd, 2, dtype=x.dtype) / hd)
    inv = inv if factors is None else inv / factors
    angle = positions[:, :, None, None].to(x.dtype) * inv
    x1, x2 = x[..., : hd // 2], x[..., hd // 2:]
    cos, sin = angle.cos(), angle.sin()
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)


class LlamaExperts(Llama):
    """llama.cpp's `llama` with experts (Mixtral): each block's feed-forward layer a sparse mixture
    of SwiGLU experts, `ffn_*_exps` stacked over experts, and the router `ffn_gate_inp`."""

    variant_of = "llama"
    block = [*Llama.block[:6], *_EXPERTS]

    def variants(self, env):
        for hp in super().variants(env):
            for used in _expert_counts(env):
                yield {**hp, "expert_used": used}

    def describe(self, hp):
        return f"{super().describe(hp)}, {hp['expert_used']} of {hp['E']} experts per token"

    def feed_forward(self, layer, f, hp):
        return _sparse_experts(layer, f, hp["expert_used"], self.activate)

    def metadata(self, writer, hp, model):
        super().metadata(writer, hp, model)
        _add_experts(writer, hp)


class Qwen2(Llama):
    """llama.cpp's `qwen2`: a Llama whose q, k and v projections have biases, with the NEOX rotary
    form, so the file holds the projections' rows as Hugging Face has them (no permutation)."""

    name = "qwen2"
    variant_of = "llama"
    rope_form = "neox"
    block = [
        ("attn_norm.weight", ("d",)),
        ("attn_q.weight", ("d", "d")),
        ("attn_q.bias", ("d",)),
        ("attn_k.weight", ("kv", "d")),
        ("attn_k.bias", ("kv",)),
        ("attn_v.weight", ("kv", "d")),
        ("attn_v.bias", ("kv",)),
        ("attn_output.weight", ("d", "d")),
        ("ffn_norm.weight", ("d",)),
        ("ffn_gate.weight", ("F", "d")),
        ("ffn_up.weight", ("F", "d")),
        ("ffn_down.weight", ("d", "F")),
    ]

    def variants(self, env):
        d, kv = env["d"], env["kv"]
        for hd in _head_sizes(d):
            if hd % 2 or kv % hd:
                continue
            for base in self.bases:
                yield {"heads": d // hd, "kv_heads": kv // hd, "head_dim": hd, "rope": "halves", "base": base}

    def describe(self, hp):
        return f"{hp['heads']} heads of {hp['head_dim']}, rotary pairs (i, i + head size / 2), base {hp['base']:g}"

    def prepare(self, tensors, hp):
        return tensors


class Gemma(Llama):
    """llama.cpp's `gemma`: a Llama whose embedding is scaled by sqrt(d) on the way in and is also its
    output layer, with GELU (tanh form) gating the feed-forward layer and the NEOX rotary form. Its
    norms multiply by the file's weight: llama.cpp's converter writes Gemma's (1 + w) as w + 1, so
    each reading tries the norm weights as they are and offset by 1."""

    name = "gemma"
    variant_of = "llama"
    rope_form = "neox"
    activation = "gelu_tanh"
    tied_output = True
    norm_offsets = (1.0, 0.0)

    def variants(self, env):
        d, kv = env["d"], env["kv"]
        for hd in _head_sizes(d):
            if hd % 2 or kv % hd:
                continue
            for base in self.bases:
                for offset in self.norm_offsets:
                    yield {"heads": d // hd, "kv_heads": kv // hd, "head_dim": hd, "rope": "halves", "base": base, "norm_offset": offset}

    def describe(self, hp):
        return (f"{hp['heads']} heads of {hp['head_dim']}, rotary pairs (i, i + head size / 2), base {hp['base']:g}, "
                f"norm weights {'+ 1' if hp['norm_offset'] else 'as they are'}")

    def prepare(self, tensors, hp):
        """The norms' weights as llama.cpp multiplies by them."""
        return {name: value + hp["norm_offset"] if name.endswith("norm.weight") else value for name, value in tensors.items()}

    def embed(self, t, hp, ids):
        return t["token_embd.weight"][ids] * math.sqrt(hp["d"])

    def activate(self, gate):
        import torch

        return torch.nn.functional.gelu(gate, approximate="tanh")

    def metadata(self, writer, hp, model):
        super().metadata(writer, hp, model)
        writer.add_key_length(hp["head_dim"])
        writer.add_value_length(hp["head_dim"])


class Phi3(Llama):
    """llama.cpp's `phi3`: a Llama with one fused projection to queries, keys and values (in that
    order along its rows) and one to the feed-forward layer's gate and up halves (SwiGLU: silu of the
    first half times the second), with the NEOX rotary form, so the file holds Hugging Face's rows."""

    name = "phi3"
    variant_of = "llama"
    rope_form = "neox"
    block = [
        ("attn_norm.weight", ("d",)),
        ("attn_qkv.weight", ("qkv", "d")),
        ("attn_output.weight", ("d", "d")),
        ("ffn_norm.weight", ("d",)),
        ("ffn_up.weight", ("2F", "d")),
        ("ffn_down.weight", ("d", "F")),
    ]
    def variants(self, env):
        d, kv2 = env["d"], env["qkv"] - env["d"]
        for hd in _head_sizes(d):
            if hd % 2 or kv2 <= 0 or kv2 % (2 * hd):
                continue
            for base in self.bases:
                yield {"heads": d // hd, "kv_heads": kv2 // 2 // hd, "head_dim": hd, "kv": kv2 // 2, "rope": "halves", "base": base}

    def describe(self, hp):
        return f"{hp['heads']} heads of {hp['head_dim']}, rotary pairs (i, i + head size / 2), base {hp['base']:g}"

    def prepare(self, tensors, hp):
        return tensors

    def project_qkv(self, layer, a, hp):
        qkv = a @ layer["attn_qkv.weight"].T
        d, kv = hp["d"], hp["kv"]
        return qkv[..., :d], qkv[..., d:d + kv], qkv[..., d + kv:]

    def feed_forward(self, layer, f, hp):
        up = f @ layer["ffn_up.weight"].T
        return (self.activate(up[..., :hp["F"]]) * up[..., hp["F"]:]) @ layer["ffn_down.weight"].T



class Gpt2(Arch):
    name = "gpt2"
    norm = "layer_norm"
    activation = "gelu_tanh"
    block = [
        ("attn_norm.weight", ("d",)),
        ("attn_norm.bias", ("d",)),
        ("attn_qkv.weight", ("3d", "d")),
        ("attn_qkv.bias", ("3d",)),
        ("attn_output.weight", ("d", "d")),
        ("attn_output.bias", ("d",)),
        ("ffn_norm.weight", ("d",)),
        ("ffn_norm.bias", ("d",)),
        ("ffn_up.weight", ("F", "d")),
        ("ffn_up.bias", ("F",)),
        ("ffn_down.weight", ("d", "F")),
        ("ffn_down.bias", ("d",)),
    ]
    other = [("position_embd.weight", ("P", "d")), ("output_norm.weight", ("d",)), ("output_norm.bias", ("d",))]

    def variants(self, env):
        for hd in _head_sizes(env["d"]):
            yield {"heads": env["d"] // hd, "kv_heads": env["d"] // hd, "head_dim": hd}

    def prepare(self, tensors, hp):
        return tensors

    def reference(self, t, hp, ids):
        import torch

        b, n = ids.shape
        d, H, hd, eps = hp["d"], hp["heads"], hp["head_dim"], hp["eps"]
        x = t["token_embd.weight"][ids] + t["position_embd.weight"][torch.arange(n)]
        for i in range(hp["blocks"]):
            p = lambda name: t[f"blk.{i}.{name}"]  # noqa: E731
            a = _layer_norm(x, p("attn_norm.weight"), p("attn_norm.bias"), eps)
            qkv = a @ p("attn_qkv.weight").T + p("attn_qkv.bias")
            q, k, v = (qkv[..., j * d:(j + 1) * d].reshape(b, n, H, hd) for j in range(3))
            h = x + _attention(q, k, v, H, H) @ p("attn_output.weight").T + p("attn_output.bias")
            f = _layer_norm(h, p("ffn_norm.weight"), p("ffn_norm.bias"), eps)
            up = f @ p("ffn_up.weight").T + p("ffn_up.bias")
            x = h + torch.nn.functional.gelu(up, approximate="tanh") @ p("ffn_down.weight").T + p("ffn_down.bias")
        out = _layer_norm(x, t["output_norm.weight"], t["output_norm.bias"], eps)
        return out @ t.get("output.weight", t["token_embd.weight"]).T

    def metadata(self, writer, hp, model):
        writer.add_context_length(hp["P"])
        writer.add_embedding_length(hp["d"])
        writer.add_block_count(hp["blocks"])
        writer.add_feed_forward_length(hp["F"])
        writer.add_head_count(hp["heads"])
        writer.add_layer_norm_eps(hp["eps"])


# ---------------------------------------------------------------------------------------------
# llama.cpp's other decoders, each its graph (src/models/<arch>.cpp of the llama.cpp that
# llama-cpp-python 0.3.36 vendors) as flags of one reference: where the norms sit, what feeds the
# feed-forward layer, q/k norms, partial rotary, softcaps, windows, and an output bias or scale.


class Decoder(Arch):
    """One llama.cpp decoder block with the choices its architectures make; every subclass names
    its tensors (llama.cpp's names and PyTorch's shapes) and the flags its graph reads."""

    norm = "rms_norm"
    activation = "silu"
    also_computes = ()  # built-ins besides `activation` its graph computes (Gemma 2's softcaps: tanh)
    rope_form = "neox"  # "norm": pairs (2i, 2i+1); "neox": pairs (i, i + rotated / 2)
    # "pre": norm, attention, residual, norm, feed-forward, residual (llama); "parallel": one norm
    # feeds both, one residual (phi2, command-r); "parallel_two": a norm each, one residual
    # (gptneox); "post": no norm before, one after each (olmo2); "sandwich": both (gemma2).
    residual = "pre"
    qk_norm = None  # "head": q and k normed over each head (qwen3); "width": over their whole width (olmo2)
    gated = True  # the feed-forward layer: act(gate) * up, or act(up)
    embed_scale = False  # the embedding times sqrt(d) (gemma2)
    embed_norm = False  # a norm of the embedding before the blocks, `token_embd_norm` (bloom)
    alibi = False  # a bias of slope(head) * the key's position on the scores, no rotary embedding (bloom)
    norm_offsets = (0.0,)  # added to the norms' weights as the file holds them (gemma2's 1 + w: 1)
    rotary_fractions = (1.0,)  # of each head rotated (gptneox, phi2: rope.dimension_count)
    bases = (10000.0, 500000.0, 1000000.0)
    attention_softcaps = (None,)
    windowed = False  # alternating sliding window on the even blocks (llama.cpp's set_swa_pattern(2))
    window_said = "on its even blocks"
    output_bias = False
    output_ops = ()  # after the output layer: "scale" (command-r's logit_scale), "softcap" (gemma2)
    ffn_norm = "ffn_norm"  # the norm before the feed-forward layer in a "pre" block (gpt-oss: post_attention_norm)
    fused_orders = ("blocks",)  # a fused qkv's rows: q|k|v ("blocks"), or per head (H 3 hd): "heads"
    parallel_choices = (None,)  # gptneox: use_parallel_residual as a hyperparameter

    def head_sizes(self, env):
        if "hd" in env:  # a per-head norm says it
            return [env["hd"]]
        return _head_sizes(env["d"])

    def widths(self, env, hd):
        """(query width, key/value width) for heads of hd, or None."""
        if "qkv" in env:  # fused: q|k|v, the key/value width what's left
            kv2 = env["qkv"] - env["d"]
            return (env["d"], kv2 // 2) if kv2 > 0 and kv2 % 2 == 0 else None
        return env.get("q", env["d"]), env.get("kv", env["d"])

    def variants(self, env):
        after = {op["op"]: op.get("value") for op in env.get("after", [])}
        for hd in self.head_sizes(env):
            widths = self.widths(env, hd)
            if widths is None or widths[0] % hd or widths[1] % hd or hd % 2:
                continue
            q, kv = widths
            for fraction, base, offset, cap, window, order, parallel in itertools.product(
                    self.rotary_fractions, self.bases, self.norm_offsets, self.attention_softcaps, self.windows(env),
                    self.fused_orders, self.parallel_choices):
                rot = int(hd * fraction)
                if rot % 2 or (order == "heads" and q != kv):
                    continue
                yield {"heads": q // hd, "kv_heads": kv // hd, "head_dim": hd, "q": q, "kv": kv, "rot": rot, "base": base,
                       "norm_offset": offset, "attention_softcap": cap, "window": window, "qkv_order": order,
                       "parallel": parallel, "logit_scale": after.get("scale"), "final_softcap": after.get("softcap")}

    def feed_forward_length(self, hp):
        return hp["F"]

    def windows(self, env):
        # Read by computation: every width the search's positions can tell apart, then none (0).
        return list(range(1, env["n"])) + [0] if self.windowed else [0]

    def describe(self, hp):
        pairs = "(2i, 2i + 1)" if self.rope_form == "norm" else "(i, i + rotated / 2)"
        said = [f"{hp['heads']} heads of {hp['head_dim']}", f"rotary pairs {pairs} on {hp['rot']} of each head", f"base {hp['base']:g}"]
        if len(self.norm_offsets) > 1:
            said.append(f"norm weights {'+ 1' if hp['norm_offset'] else 'as they are'}")
        if self.windowed:
            said.append(f"a window of {hp['window']} on the even blocks" if hp["window"] else "no window")
        if hp["attention_softcap"]:
            said.append(f"attention scores capped at {hp['attention_softcap']:g}")
        if hp["qkv_order"] == "heads":
            said.append("q, k, v grouped per head")
        if hp["parallel"] is not None:
            said.append("parallel residual" if hp["parallel"] else "sequential residual")
        return ", ".join(said)

    def prepare(self, tensors, hp):
        """The tensors as the file holds them: norms offset, a per-head fused qkv reordered to q|k|v."""
        out = {}
        for name, value in tensors.items():
            if name.endswith("norm.weight"):
                value = value + hp["norm_offset"]
            elif hp["qkv_order"] == "heads" and "attn_qkv." in name:
                H, hd = hp["heads"], hp["head_dim"]
                value = value.reshape(H, 3, hd, *value.shape[1:]).transpose(0, 1).reshape(value.shape)
            out[name] = value
        return out

    def _norm(self, x, tensors, name, hp):
        weight = tensors[f"{name}.weight"]
        if self.norm == "rms_norm":
            return _rms_norm(x, weight, hp["eps"])
        return _layer_norm(x, weight, tensors.get(f"{name}.bias", 0), hp["eps"])

    def _activate(self, x, hp):
        import torch

        if self.activation == "silu":
            return torch.nn.functional.silu(x)
        # llama.cpp's GELU: the tanh form, read from a float16 table (as near the exact form as to the
        # tanh form's own values): the reference computes the form the model writes.
        exact = self.activation == "gelu" and "gelu" in hp["computes"]
        return torch.nn.functional.gelu(x, approximate="none" if exact else "tanh")

    def _linear(self, x, layer, name):
        y = x @ layer[f"{name}.weight"].T
        return y + layer[f"{name}.bias"] if f"{name}.bias" in layer else y

    def block_attention(self, hp, i):
        """Block i's (window, rotary base): 0 for no window; with `windowed`, the even blocks slide."""
        return (hp["window"] if self.windowed and i % 2 == 0 else 0), hp["base"]

    def _attend(self, layer, a, hp, window, base):
        import torch

        b, n, _ = a.shape
        H, Hkv, hd, rot = hp["heads"], hp["kv_heads"], hp["head_dim"], hp["rot"]
        if "attn_qkv.weight" in layer:
            qkv = self._linear(a, layer, "attn_qkv")
            q, k, v = qkv[..., :hp["q"]], qkv[..., hp["q"]:hp["q"] + hp["kv"]], qkv[..., hp["q"] + hp["kv"]:]
        else:
            q, k, v = (self._linear(a, layer, f"attn_{p}") for p in "qkv")
        if self.qk_norm == "width":
            q, k = self._norm(q, layer, "attn_q_norm", hp), self._norm(k, layer, "attn_k_norm", hp)
        q, k, v = q.reshape(b, n, H, hd), k.reshape(b, n, Hkv, hd), v.reshape(b, n, Hkv, hd)
        if self.qk_norm == "head":
            q, k = self._norm(q, layer, "attn_q_norm", hp), self._norm(k, layer, "attn_k_norm", hp)
        positions = torch.arange(n).expand(b, n)
        rope = _rope_norm if self.rope_form == "norm" else _rope_neox
        if rot and base is not None:  # None: a block with no rotary embedding (cohere2's full attention)
            q = torch.cat([rope(q[..., :rot], positions, base), q[..., rot:]], dim=-1)
            k = torch.cat([rope(k[..., :rot], positions, base), k[..., rot:]], dim=-1)
        q, k, v = (t.transpose(1, 2) for t in (q, k, v))
        k, v = k.repeat_interleave(H // Hkv, dim=1), v.repeat_interleave(H // Hkv, dim=1)
        scores = q @ k.transpose(-1, -2) / math.sqrt(hd)
        if self.alibi:
            scores = scores + _alibi_slopes(H, 8.0)[:, None, None] * torch.arange(n, dtype=scores.dtype)
        if hp["attention_softcap"]:
            scores = torch.tanh(scores / hp["attention_softcap"]) * hp["attention_softcap"]
        distance = torch.arange(n)[:, None] - torch.arange(n)[None, :]
        masked = (distance < 0) | ((distance >= window) if window else False)
        scores = scores.masked_fill(masked, float("-inf"))
        if "attn_sinks.weight" in layer:  # gpt-oss: a logit per head joins each softmax's denominator, then is dropped
            sink = layer["attn_sinks.weight"].to(scores.dtype)[None, :, None, None].expand(b, H, n, 1)
            out = torch.cat([scores, sink], dim=-1).softmax(-1)[..., :-1] @ v
        else:
            out = scores.softmax(-1) @ v
        return self._linear(out.transpose(1, 2).reshape(b, n, H * hd), layer, "attn_output")

    def _feed_forward(self, layer, f, hp):
        if self.gated:
            inner = self._activate(self._linear(f, layer, "ffn_gate"), hp) * self._linear(f, layer, "ffn_up")
        else:
            inner = self._activate(self._linear(f, layer, "ffn_up"), hp)
        return self._linear(inner, layer, "ffn_down")

    def reference(self, t, hp, ids):
        import torch

        x = t["token_embd.weight"][ids]
        if self.embed_scale:
            x = x * math.sqrt(hp["d"])
        if self.embed_norm:
            x = self._norm(x, t, "token_embd_norm", hp)
        residual = self.residual
        if hp["parallel"] is not None:
            residual = "parallel_two" if hp["parallel"] else "pre"
        for i in range(hp["blocks"]):
            prefix = f"blk.{i}."
            layer = {name[len(prefix):]: value for name, value in t.items() if name.startswith(prefix)}
            norm = lambda v, name: self._norm(v, layer, name, hp)  # noqa: E731
            window, base = self.block_attention(hp, i)
            if residual == "post":
                h = x + norm(self._attend(layer, x, hp, window, base), "post_attention_norm")
                x = h + norm(self._feed_forward(layer, h, hp), "post_ffw_norm")
            elif residual == "sandwich":
                h = x + norm(self._attend(layer, norm(x, "attn_norm"), hp, window, base), "post_attention_norm")
                x = h + norm(self._feed_forward(layer, norm(h, "ffn_norm"), hp), "post_ffw_norm")
            elif residual == "parallel":
                a = norm(x, "attn_norm")
                x = x + self._attend(layer, a, hp, window, base) + self._feed_forward(layer, a, hp)
            elif residual == "parallel_two":
                x = x + self._attend(layer, norm(x, "attn_norm"), hp, window, base) + self._feed_forward(layer, norm(x, "ffn_norm"), hp)
            else:
                h = x + self._attend(layer, norm(x, "attn_norm"), hp, window, base)
                x = h + self._feed_forward(layer, norm(h, self.ffn_norm), hp)
        logits = self._norm(x, t, "output_norm", hp) @ t.get("output.weight", t["token_embd.weight"]).T
        if "output.bias" in t:
            logits = logits + t["output.bias"]
        if hp["final_softcap"] and "softcap" in self.output_ops:
            logits = torch.tanh(logits / hp["final_softcap"]) * hp["final_softcap"]
        if hp["logit_scale"] and "scale" in self.output_ops:
            logits = logits * hp["logit_scale"]
        return logits

    def metadata(self, writer, hp, model):
        writer.add_context_length(model.max_positions if model.takes_positions else 2048)
        writer.add_embedding_length(hp["d"])
        writer.add_block_count(hp["blocks"])
        writer.add_feed_forward_length(self.feed_forward_length(hp))
        writer.add_head_count(hp["heads"])
        writer.add_head_count_kv(hp["kv_heads"])
        if self.norm == "rms_norm":
            writer.add_layer_norm_rms_eps(hp["eps"])
        else:
            writer.add_layer_norm_eps(hp["eps"])
        writer.add_key_length(hp["head_dim"])
        writer.add_value_length(hp["head_dim"])
        writer.add_rope_dimension_count(hp["rot"])
        writer.add_rope_freq_base(hp["base"])


def _alibi_slopes(heads, max_bias):
    """ALiBi's slope per head as llama.cpp computes it (ggml_soft_max_ext's max_bias): m0^(h+1) for
    the first power of two of heads, then m1^(2(h - that) + 1) (BLOOM's own for any number of heads)."""
    import torch

    power = 2 ** math.floor(math.log2(heads))
    m0, m1 = 2 ** (-max_bias / power), 2 ** (-max_bias / 2 / power)
    return torch.tensor([m0 ** (h + 1) if h < power else m1 ** (2 * (h - power) + 1) for h in range(heads)], dtype=torch.float64)


_ATTENTION = [("attn_q.weight", ("q", "d")), ("attn_k.weight", ("kv", "d")), ("attn_v.weight", ("kv", "d"))]
_GATED = [("ffn_gate.weight", ("F", "d")), ("ffn_up.weight", ("F", "d")), ("ffn_down.weight", ("d", "F"))]


class Qwen3(Decoder):
    """llama.cpp's `qwen3`: a Llama (no q/k/v biases, NEOX rotary) whose queries and keys are
    RMS-normed over each head before the rotary embedding (`attn_q_norm`, `attn_k_norm` of a head's size)."""

    name = "qwen3"
    variant_of = "llama"
    qk_norm = "head"
    block = [("attn_norm.weight", ("d",)), *_ATTENTION, ("attn_q_norm.weight", ("hd",)), ("attn_k_norm.weight", ("hd",)),
             ("attn_output.weight", ("d", "q")), ("ffn_norm.weight", ("d",)), *_GATED]
    other = [("output_norm.weight", ("d",))]


class Qwen3Moe(Qwen3):
    """llama.cpp's `qwen3moe`: a `qwen3` whose feed-forward layer in every block is a sparse
    mixture of SwiGLU experts (the router's top `expert_used`, renormalized)."""

    name = "qwen3moe"
    variant_of = "qwen3"
    block = [*Qwen3.block[:8], *_EXPERTS]

    def variants(self, env):
        for hp in super().variants(env):
            for used in _expert_counts(env):
                yield {**hp, "expert_used": used}

    def describe(self, hp):
        return f"{super().describe(hp)}, {hp['expert_used']} of {hp['E']} experts per token"

    def _feed_forward(self, layer, f, hp):
        return _sparse_experts(layer, f, hp["expert_used"], lambda x: self._activate(x, hp))

    def metadata(self, writer, hp, model):
        super().metadata(writer, hp, model)
        _add_experts(writer, hp)
        writer.add_expert_feed_forward_length(hp["F"])


class Qwen2Moe(Decoder):
    """llama.cpp's `qwen2moe` (src/models/qwen2moe.cpp): `qwen2`'s attention (q, k and v biases, NEOX
    rotary), and in every block a sparse mixture of SwiGLU experts weighted by the router's softmax
    as it is (build_moe_ffn's norm_w is false), plus a shared SwiGLU expert scaled by the sigmoid of
    its own score (`ffn_gate_inp_shexp`, one row). Its sizes: `expert_feed_forward_length` and
    `expert_shared_feed_forward_length`."""

    name = "qwen2moe"
    variant_of = "llama"
    also_computes = ("sigmoid",)
    block = [("attn_norm.weight", ("d",)), ("attn_q.weight", ("d", "d")), ("attn_q.bias", ("d",)), ("attn_k.weight", ("kv", "d")),
             ("attn_k.bias", ("kv",)), ("attn_v.weight", ("kv", "d")), ("attn_v.bias", ("kv",)), ("attn_output.weight", ("d", "d")),
             ("ffn_norm.weight", ("d",)), *_EXPERTS, ("ffn_gate_inp_shexp.weight", ("=1", "d")), ("ffn_gate_shexp.weight", ("S", "d")),
             ("ffn_up_shexp.weight", ("S", "d")), ("ffn_down_shexp.weight", ("d", "S"))]
    other = [("output_norm.weight", ("d",))]

    def variants(self, env):
        for hp in super().variants(env):
            for used in _expert_counts(env):
                yield {**hp, "expert_used": used}

    def describe(self, hp):
        return f"{super().describe(hp)}, {hp['expert_used']} of {hp['E']} experts per token and a shared one"

    def _feed_forward(self, layer, f, hp):
        import torch

        routed = _sparse_experts(layer, f, hp["expert_used"], lambda x: self._activate(x, hp), normalize=False)
        shared = (self._activate(f @ layer["ffn_gate_shexp.weight"].T, hp) * (f @ layer["ffn_up_shexp.weight"].T)) @ layer["ffn_down_shexp.weight"].T
        return routed + torch.sigmoid(f @ layer["ffn_gate_inp_shexp.weight"].T) * shared

    def metadata(self, writer, hp, model):
        super().metadata(writer, hp, model)
        _add_experts(writer, hp)
        writer.add_expert_feed_forward_length(hp["F"])
        writer.add_expert_shared_feed_forward_length(hp["S"])

    def feed_forward_length(self, hp):
        return hp["S"]  # what Qwen's configs give as intermediate_size, and llama.cpp's fallback for the shared expert's


class Phi2(Decoder):
    """llama.cpp's `phi2`: layer_norm with biases, one norm feeding attention and the feed-forward
    layer (GELU, no gate) in parallel, NEOX rotary on part of each head, and an output bias."""

    name = "phi2"
    variant_of = "gpt2"
    norm = "layer_norm"
    activation = "gelu_tanh"
    residual = "parallel"
    gated = False
    rotary_fractions = (1.0, 0.5, 0.25, 0.4)
    output_bias = True
    block = [("attn_norm.weight", ("d",)), ("attn_norm.bias", ("d",)),
             ("attn_q.weight", ("d", "d")), ("attn_q.bias", ("d",)), ("attn_k.weight", ("d", "d")), ("attn_k.bias", ("d",)),
             ("attn_v.weight", ("d", "d")), ("attn_v.bias", ("d",)), ("attn_output.weight", ("d", "d")), ("attn_output.bias", ("d",)),
             ("ffn_up.weight", ("F", "d")), ("ffn_up.bias", ("F",)), ("ffn_down.weight", ("d", "F")), ("ffn_down.bias", ("d",))]
    other = [("output_norm.weight", ("d",)), ("output_norm.bias", ("d",)), ("output.bias", ("V",))]


class Starcoder2(Decoder):
    """llama.cpp's `starcoder2`: layer_norm with biases, biases on every projection, GELU with no
    gate, NEOX rotary; no sliding window (llama.cpp attends to every earlier position)."""

    name = "starcoder2"
    variant_of = "gpt2"
    norm = "layer_norm"
    activation = "gelu_tanh"
    gated = False
    block = [("attn_norm.weight", ("d",)), ("attn_norm.bias", ("d",)),
             ("attn_q.weight", ("d", "d")), ("attn_q.bias", ("d",)), ("attn_k.weight", ("kv", "d")), ("attn_k.bias", ("kv",)),
             ("attn_v.weight", ("kv", "d")), ("attn_v.bias", ("kv",)), ("attn_output.weight", ("d", "d")), ("attn_output.bias", ("d",)),
             ("ffn_norm.weight", ("d",)), ("ffn_norm.bias", ("d",)),
             ("ffn_up.weight", ("F", "d")), ("ffn_up.bias", ("F",)), ("ffn_down.weight", ("d", "F")), ("ffn_down.bias", ("d",))]
    other = [("output_norm.weight", ("d",)), ("output_norm.bias", ("d",))]


class Olmo2(Decoder):
    """llama.cpp's `olmo2`: no norm before attention or the feed-forward layer, an RMSNorm after
    each, and q and k RMS-normed over their whole width before the NEOX rotary embedding."""

    name = "olmo2"
    variant_of = "llama"
    residual = "post"
    qk_norm = "width"
    block = [*_ATTENTION, ("attn_q_norm.weight", ("q",)), ("attn_k_norm.weight", ("kv",)), ("attn_output.weight", ("d", "q")),
             ("post_attention_norm.weight", ("d",)), *_GATED, ("post_ffw_norm.weight", ("d",))]
    other = [("output_norm.weight", ("d",))]


class CommandR(Decoder):
    """llama.cpp's `command-r`: layer_norm without a bias, one norm feeding attention and SwiGLU in
    parallel, NORM rotary (adjacent pairs), the output layer the token embedding, logits times
    `logit_scale`."""

    name = "command-r"
    variant_of = "gpt2"
    norm = "layer_norm"
    rope_form = "norm"
    residual = "parallel"
    tied_output = True
    output_ops = ("scale",)
    block = [("attn_norm.weight", ("d",)), *_ATTENTION, ("attn_output.weight", ("d", "q")), *_GATED]
    other = [("output_norm.weight", ("d",))]

    def metadata(self, writer, hp, model):
        super().metadata(writer, hp, model)
        writer.add_logit_scale(hp["logit_scale"] or 1.0)


class Gemma2(Decoder):
    """llama.cpp's `gemma2`: Gemma (embedding times sqrt(d), RMSNorm of the file's weights, GELU
    gate, NEOX rotary) with norms before and after attention and the feed-forward layer, attention
    scores and logits capped softly, and a sliding window on the even blocks."""

    name = "gemma2"
    variant_of = "llama"
    activation = "gelu_tanh"
    also_computes = ("tanh",)
    residual = "sandwich"
    embed_scale = True
    norm_offsets = (1.0, 0.0)
    bases = (10000.0,)
    attention_softcaps = (50.0, None)
    windowed = True
    output_ops = ("softcap",)
    block = [("attn_norm.weight", ("d",)), *_ATTENTION, ("attn_output.weight", ("d", "q")), ("post_attention_norm.weight", ("d",)),
             ("ffn_norm.weight", ("d",)), *_GATED, ("post_ffw_norm.weight", ("d",))]
    other = [("output_norm.weight", ("d",))]

    def metadata(self, writer, hp, model):
        super().metadata(writer, hp, model)
        context = model.max_positions if model.takes_positions else 2048
        writer.add_sliding_window(hp["window"] or context)  # no window: one as wide as its positions
        if hp["attention_softcap"]:
            writer.add_attn_logit_softcapping(hp["attention_softcap"])
        if hp["final_softcap"]:
            writer.add_final_logit_softcapping(hp["final_softcap"])


class Bloom(Decoder):
    """llama.cpp's `bloom`: layer_norm with biases, also of the embedding (`token_embd_norm`), one
    fused q|k|v projection (Hugging Face's grouped per head, reordered as llama.cpp's converter
    does), ALiBi (llama.cpp's max bias 8) instead of a rotary embedding, GELU with no gate, biases
    on every projection."""

    name = "bloom"
    variant_of = "gpt2"
    norm = "layer_norm"
    activation = "gelu_tanh"
    gated = False
    embed_norm = True
    alibi = True
    rotary_fractions = (0.0,)
    bases = (10000.0,)  # unused: no rotary embedding
    fused_orders = ("heads", "blocks")
    block = [("attn_norm.weight", ("d",)), ("attn_norm.bias", ("d",)), ("attn_qkv.weight", ("qkv", "d")), ("attn_qkv.bias", ("qkv",)),
             ("attn_output.weight", ("d", "d")), ("attn_output.bias", ("d",)), ("ffn_norm.weight", ("d",)), ("ffn_norm.bias", ("d",)),
             ("ffn_up.weight", ("F", "d")), ("ffn_up.bias", ("F",)), ("ffn_down.weight", ("d", "F")), ("ffn_down.bias", ("d",))]
    other = [("token_embd_norm.weight", ("d",)), ("token_embd_norm.bias", ("d",)), ("output_norm.weight", ("d",)),
             ("output_norm.bias", ("d",))]

    def describe(self, hp):
        return f"{hp['heads']} heads of {hp['head_dim']} with ALiBi" + (", q, k, v grouped per head" if hp["qkv_order"] == "heads" else "")

    def metadata(self, writer, hp, model):
        # What llama.cpp's converter writes for BLOOM: no rotary keys (llama.cpp's bloom has none).
        writer.add_context_length(model.max_positions if model.takes_positions else 2048)
        writer.add_embedding_length(hp["d"])
        writer.add_feed_forward_length(hp["F"])
        writer.add_block_count(hp["blocks"])
        writer.add_head_count(hp["heads"])
        writer.add_head_count_kv(hp["kv_heads"])
        writer.add_layer_norm_eps(hp["eps"])


def _described_windows(env):
    """The blocks' windows as the model's description says them (`layer_windows`), one reading; none
    when they differ in width, as llama.cpp's one `sliding_window` can't say."""
    windows = tuple(env.get("layer_windows") or [0] * env["blocks"])
    return [windows] if len({w for w in windows if w}) <= 1 else []


def _add_described_windows(writer, hp, model):
    windows = hp["window"]
    context = model.max_positions if model.takes_positions else 2048
    writer.add_sliding_window(max(windows) or context)
    writer.add_sliding_window_pattern([bool(w) for w in windows])


class Cohere2(CommandR):
    """llama.cpp's `cohere2`: `command-r`'s parallel block, with attention per block: the blocks
    that slide (the file's `sliding_window_pattern`, from the description's `layer_windows`) rotate
    their queries and keys, the others see every earlier position and use no rotary embedding."""

    name = "cohere2"
    windowed = True
    window_said = "and rotary embeddings on the blocks the model slides only"

    def windows(self, env):
        return _described_windows(env)

    def block_attention(self, hp, i):
        window = hp["window"][i]
        return window, hp["base"] if window else None

    def describe(self, hp):
        sliding = [str(i) for i, w in enumerate(hp["window"]) if w]
        said = f"{hp['heads']} heads of {hp['head_dim']}, rotary pairs (2i, 2i + 1), base {hp['base']:g}"
        return said + (f", a window of {max(hp['window'])} and rotary on blocks {', '.join(sliding)} only" if sliding else "")

    def metadata(self, writer, hp, model):
        super().metadata(writer, hp, model)
        _add_described_windows(writer, hp, model)


class Gemma3(Decoder):
    """llama.cpp's `gemma3`: Gemma 2's blocks without softcaps, with queries and keys RMS-normed over
    each head, and per-block attention: the blocks that slide (the file's `sliding_window_pattern`)
    rotate with the local base `rope.freq_base_swa` (10000 where a file has none), the others see every earlier
    position and rotate with `rope.freq_base`. Which blocks slide, and how far, is the model
    description's (its `layer_windows`); the search checks it by computing."""

    name = "gemma3"
    variant_of = "llama"
    activation = "gelu_tanh"
    residual = "sandwich"
    qk_norm = "head"
    embed_scale = True
    tied_output = True
    norm_offsets = (1.0, 0.0)
    bases = (1000000.0, 10000.0, 500000.0)
    local_bases = (10000.0, 1000000.0, 500000.0)  # the sliding blocks' base: llama.cpp reads `rope.freq_base_swa` (10000 without it)
    windowed = True
    window_said = "on the blocks the model slides"
    block = [("attn_norm.weight", ("d",)), *_ATTENTION, ("attn_q_norm.weight", ("hd",)), ("attn_k_norm.weight", ("hd",)),
             ("attn_output.weight", ("d", "q")), ("post_attention_norm.weight", ("d",)),
             ("ffn_norm.weight", ("d",)), *_GATED, ("post_ffw_norm.weight", ("d",))]
    other = [("output_norm.weight", ("d",))]

    def windows(self, env):
        return _described_windows(env)

    def variants(self, env):
        for hp in super().variants(env):
            for local in self.local_bases:
                yield {**hp, "local_base": local}

    def block_attention(self, hp, i):
        window = hp["window"][i]
        return window, hp["local_base"] if window else hp["base"]

    def describe(self, hp):
        windows = hp["window"]
        sliding = [i for i, w in enumerate(windows) if w]
        said = [f"{hp['heads']} heads of {hp['head_dim']}", f"base {hp['base']:g}",
                f"norm weights {'+ 1' if hp['norm_offset'] else 'as they are'}"]
        if sliding:
            said.append(f"a window of {windows[sliding[0]]} and base {hp['local_base']:g} on blocks {', '.join(map(str, sliding))}")
        return ", ".join(said)

    def metadata(self, writer, hp, model):
        super().metadata(writer, hp, model)
        _add_described_windows(writer, hp, model)
        writer.add_rope_freq_base_swa(hp["local_base"])


class GptNeox(Decoder):
    """llama.cpp's `gptneox`: layer_norm with biases, one fused q|k|v projection (Hugging Face's is
    grouped per head, reordered as llama.cpp's converter does), NEOX rotary on part of each head,
    GELU with no gate, and attention and the feed-forward layer in parallel or one after the other."""

    name = "gptneox"
    variant_of = "gpt2"
    norm = "layer_norm"
    activation = "gelu"
    also_computes = ("gelu_tanh",)
    gated = False
    rotary_fractions = (0.25, 0.5, 1.0)
    fused_orders = ("heads", "blocks")
    parallel_choices = (True, False)
    block = [("attn_norm.weight", ("d",)), ("attn_norm.bias", ("d",)), ("attn_qkv.weight", ("qkv", "d")), ("attn_qkv.bias", ("qkv",)),
             ("attn_output.weight", ("d", "d")), ("attn_output.bias", ("d",)), ("ffn_norm.weight", ("d",)), ("ffn_norm.bias", ("d",)),
             ("ffn_up.weight", ("F", "d")), ("ffn_up.bias", ("F",)), ("ffn_down.weight", ("d", "F")), ("ffn_down.bias", ("d",))]
    other = [("output_norm.weight", ("d",)), ("output_norm.bias", ("d",))]

    def metadata(self, writer, hp, model):
        super().metadata(writer, hp, model)
        writer.add_parallel_residual(bool(hp["parallel"]))


class GptOss(Decoder):
    """llama.cpp's `gpt-oss` (src/models/openai-moe-iswa.cpp): biases on q, k, v and the output
    projection, a learned logit per query head in each softmax's denominator (`attn_sinks`), a window
    on the even blocks (its set_swa_pattern(2)), NEOX rotary, RMSNorm before attention and before the
    experts (`post_attention_norm`), and sparse experts with biases: the router's logits (with a bias)
    choose `expert_used`, weighted by a softmax over the chosen (SOFTMAX_WEIGHT), each a clamped
    SwiGLU, (clamp(up, -7, 7) + 1) * g * sigmoid(1.702 g) with g = min(gate, 7) (swiglu_oai). The file
    holds gate and up apart; a program's one projection to both is split as it lays them out,
    interleaved (gpt-oss's own) or in halves."""

    name = "gpt-oss"
    variant_of = "llama"
    activation = "sigmoid"
    windowed = True
    ffn_norm = "post_attention_norm"
    bases = (10000.0, 150000.0, 500000.0, 1000000.0)
    block = [("attn_norm.weight", ("d",)), ("attn_q.weight", ("q", "d")), ("attn_q.bias", ("q",)), ("attn_k.weight", ("kv", "d")),
             ("attn_k.bias", ("kv",)), ("attn_v.weight", ("kv", "d")), ("attn_v.bias", ("kv",)), ("attn_output.weight", ("d", "q")),
             ("attn_output.bias", ("d",)), ("attn_sinks.weight", ("Hs",)), ("post_attention_norm.weight", ("d",)),
             ("ffn_gate_inp.weight", ("E", "d")), ("ffn_gate_inp.bias", ("E",)),
             ("ffn_gate_up_exps.weight", ("E", "2F", "d")), ("ffn_gate_up_exps.bias", ("E", "2F")),
             ("ffn_down_exps.weight", ("E", "d", "F")), ("ffn_down_exps.bias", ("E", "d"))]
    other = [("output_norm.weight", ("d",))]

    def variants(self, env):
        for hp in super().variants(env):
            if hp["heads"] != env["Hs"]:  # a sink per query head
                continue
            for used in _expert_counts(env):
                for gate_up in ("interleaved", "halves"):
                    yield {**hp, "expert_used": used, "gate_up": gate_up}

    def describe(self, hp):
        return f"{super().describe(hp)}, {hp['expert_used']} of {hp['E']} experts per token, gate and up {hp['gate_up']}"

    def prepare(self, tensors, hp):
        out = {}
        for name, value in super().prepare(tensors, hp).items():
            if ".ffn_gate_up_exps." not in name:
                out[name] = value
                continue
            F = value.shape[1] // 2
            gate, up = (value[:, 0::2], value[:, 1::2]) if hp["gate_up"] == "interleaved" else (value[:, :F], value[:, F:])
            prefix, kind = name.split("ffn_gate_up_exps.")
            out[f"{prefix}ffn_gate_exps.{kind}"], out[f"{prefix}ffn_up_exps.{kind}"] = gate, up
        return out

    def _feed_forward(self, layer, f, hp):
        import torch

        top, chosen = self._linear(f, layer, "ffn_gate_inp").topk(hp["expert_used"], dim=-1)
        g = _every_expert(f, layer, "ffn_gate_exps").clamp(max=7.0)
        inner = (_every_expert(f, layer, "ffn_up_exps").clamp(-7.0, 7.0) + 1) * g * torch.sigmoid(1.702 * g)
        return _chosen_experts(_every_expert(inner, layer, "ffn_down_exps"), chosen, top.softmax(-1))

    def metadata(self, writer, hp, model):
        super().metadata(writer, hp, model)
        _add_experts(writer, hp)
        writer.add_expert_feed_forward_length(hp["F"])
        context = model.max_positions if model.takes_positions else 2048
        writer.add_sliding_window(hp["window"] or context)  # no window: one as wide as its positions


class Deepseek2(Arch):
    """llama.cpp's `deepseek2` (src/models/deepseek2.cpp), DeepSeek-V2/V3 with multi-head latent attention
    as its converter writes it (key_length_mla set: the absorbed form, whose cache holds the latent):
    queries through a bottleneck (attn_q_a, RMSNorm, attn_q_b), keys and values from one latent per
    token (attn_kv_a_mqa: the latent, then a rotary part every head shares), RMS-normed; each head's
    query part without rotary taken into the latent's space by attn_k_b, its output out of it by
    attn_v_b (the two halves of the model's one expansion, attn_kv_b); NORM rotary (pairs (2i, 2i+1))
    on the rotary parts, scores over sqrt(the query's size). The first `leading_dense_block_count`
    blocks have a SwiGLU, the rest sparse SwiGLU experts chosen by the router's sigmoid (or softmax)
    scores plus `exp_probs_b`, weighted by the scores alone, renormalized or not, times
    `expert_weights_scale` (a number the weights don't show: fitted), plus a shared expert."""

    name = "deepseek2"
    variant_of = "llama"
    norm = "rms_norm"
    activation = "silu"
    also_computes = ("sigmoid",)
    bases = (10000.0, 50000.0, 500000.0, 1000000.0)
    block = [("attn_norm.weight", ("d",)), ("attn_q_a.weight", ("Cq", "d")), ("attn_q_a_norm.weight", ("Cq",)),
             ("attn_q_b.weight", ("Hk", "Cq")), ("attn_kv_a_mqa.weight", ("Ckv", "d")), ("attn_kv_a_norm.weight", ("C",)),
             ("attn_kv_b.weight", ("Hkv", "C")), ("attn_output.weight", ("d", "Hv")), ("ffn_norm.weight", ("d",))]
    runs = (_GATED,
            [("ffn_gate_inp.weight", ("E", "d")), ("exp_probs_b.bias", ("E",)), ("ffn_gate_exps.weight", ("E", "Fe", "d")),
             ("ffn_up_exps.weight", ("E", "Fe", "d")), ("ffn_down_exps.weight", ("E", "d", "Fe")), ("ffn_gate_shexp.weight", ("S", "d")),
             ("ffn_up_shexp.weight", ("S", "d")), ("ffn_down_shexp.weight", ("d", "S"))])
    other = [("output_norm.weight", ("d",))]

    def variants(self, env):
        rot = env["Ckv"] - env["C"]
        for heads in range(1, env["Hk"] + 1):
            if env["Hk"] % heads or env["Hkv"] % heads or env["Hv"] % heads:
                continue
            value = env["Hv"] // heads
            nope = env["Hkv"] // heads - value
            if rot <= 0 or rot % 2 or nope <= 0 or env["Hk"] // heads != nope + rot:
                continue
            routing = [(None, None, None)]
            if "E" in env:
                if env["S"] % env["Fe"]:
                    continue
                routing = [(used, gating, norm) for used in _expert_counts(env) for gating in ("sigmoid", "softmax") for norm in (True, False)]
            for base, rope_rows, (used, gating, norm) in itertools.product(self.bases, ("interleaved", "halves"), routing):
                yield {"heads": heads, "nope": nope, "rot": rot, "value": value, "base": base, "rope_rows": rope_rows,
                       "expert_used": used, "gating": gating, "weights_norm": norm, "expert_scale": 1.0}

    def describe(self, hp):
        said = [f"{hp['heads']} heads of {hp['nope']} + {hp['rot']} rotary ({hp['rope_rows']})", f"values of {hp['value']}",
                f"base {hp['base']:g}"]
        if hp["expert_used"]:
            said.append(f"{hp['expert_used']} of {hp['E']} experts per token by {hp['gating']}"
                        f"{', renormalized' if hp['weights_norm'] else ''}, times {hp['expert_scale']:g}")
        return ", ".join(said)

    def prepare(self, tensors, hp):
        """The expansion cut into each head's key part (transposed: attn_k_b) and value part (attn_v_b), as
        llama.cpp's converter does; rotary rows in halves laid out as pairs (llama.cpp's NORM form)."""
        H, nope, rot, value = hp["heads"], hp["nope"], hp["rot"], hp["value"]
        out = {}
        for name, t in tensors.items():
            if name.endswith("attn_kv_b.weight"):
                kv = t.reshape(H, nope + value, t.shape[-1])
                out[name.replace("attn_kv_b", "attn_k_b")] = kv[:, :nope].transpose(1, 2).contiguous()
                out[name.replace("attn_kv_b", "attn_v_b")] = kv[:, nope:].contiguous()
                continue
            if hp["rope_rows"] == "halves" and name.endswith(("attn_q_b.weight", "attn_kv_a_mqa.weight")):
                heads = H if name.endswith("attn_q_b.weight") else 1
                rows = t.reshape(heads, t.shape[0] // heads, t.shape[-1]).clone()
                rows[:, -rot:] = rotary.permute_rows(rows[:, -rot:], rot, to_interleaved=True)
                t = rows.reshape(t.shape)
            out[name] = t
        return out

    def fit(self, tensors, hp, ids, logits):
        """expert_weights_scale by Gauss-Newton on the logits (the routing doesn't depend on it), to 6 digits."""
        if not hp["expert_used"]:
            return hp
        scale = 1.0
        for _ in range(8):
            residual = self.reference(tensors, {**hp, "expert_scale": scale}, ids) - logits
            step = 1e-4 * max(1.0, abs(scale))
            slope = (self.reference(tensors, {**hp, "expert_scale": scale + step}, ids)
                     - self.reference(tensors, {**hp, "expert_scale": scale - step}, ids)) / (2 * step)
            curvature = (slope * slope).sum().item()
            if curvature == 0:
                break  # the experts don't reach the logits
            change = (slope * residual).sum().item() / curvature
            scale -= change
            if abs(change) <= 1e-12 * max(1.0, abs(scale)):
                break
        return {**hp, "expert_scale": float(f"{scale:.6g}")}

    def reference(self, t, hp, ids):
        import torch

        b, n = ids.shape
        H, nope, rot, eps = hp["heads"], hp["nope"], hp["rot"], hp["eps"]
        positions = torch.arange(n).expand(b, n)
        later = ~torch.ones(n, n, dtype=torch.bool).tril()
        silu = torch.nn.functional.silu
        x = t["token_embd.weight"][ids]
        for i in range(hp["blocks"]):
            p = lambda name: t[f"blk.{i}.{name}"]  # noqa: E731
            a = _rms_norm(x, p("attn_norm.weight"), eps)
            q = (_rms_norm(a @ p("attn_q_a.weight").T, p("attn_q_a_norm.weight"), eps) @ p("attn_q_b.weight").T).reshape(b, n, H, nope + rot)
            compressed = a @ p("attn_kv_a_mqa.weight").T
            latent = _rms_norm(compressed[..., :-rot], p("attn_kv_a_norm.weight"), eps)
            q_rope = _rope_norm(q[..., nope:], positions, hp["base"])
            k_rope = _rope_norm(compressed[..., None, -rot:], positions, hp["base"])[:, :, 0]
            # The absorbed form: each head's query part without rotary taken into the latent's space.
            q_latent = torch.einsum("bnhd,hcd->bnhc", q[..., :nope], p("attn_k_b.weight"))
            scores = (torch.einsum("bnhc,bmc->bhnm", q_latent, latent) + torch.einsum("bnhr,bmr->bhnm", q_rope, k_rope)) / math.sqrt(nope + rot)
            attended = torch.einsum("bhnm,bmc->bnhc", scores.masked_fill(later, float("-inf")).softmax(-1), latent)
            out = torch.einsum("bnhc,hvc->bnhv", attended, p("attn_v_b.weight")).reshape(b, n, -1)
            h = x + out @ p("attn_output.weight").T
            f = _rms_norm(h, p("ffn_norm.weight"), eps)
            swiglu = lambda kind: (silu(f @ p(f"ffn_gate{kind}.weight").T) * (f @ p(f"ffn_up{kind}.weight").T)) @ p(f"ffn_down{kind}.weight").T  # noqa: E731
            if f"blk.{i}.ffn_gate_inp.weight" not in t:
                x = h + swiglu("")
                continue
            router = f @ p("ffn_gate_inp.weight").T
            scores = torch.sigmoid(router) if hp["gating"] == "sigmoid" else router.softmax(-1)
            chosen = (scores + p("exp_probs_b.bias")).topk(hp["expert_used"], dim=-1).indices
            weights = scores.gather(-1, chosen)
            if hp["weights_norm"]:  # build_moe_ffn's norm_w, its sum clamped as llama.cpp does
                weights = weights / weights.sum(-1, keepdim=True).clamp(min=6.103515625e-5)
            layer = {f"{name}.weight": p(f"{name}.weight") for name in ("ffn_gate_exps", "ffn_up_exps", "ffn_down_exps")}
            inner = silu(_every_expert(f, layer, "ffn_gate_exps")) * _every_expert(f, layer, "ffn_up_exps")
            routed = _chosen_experts(_every_expert(inner, layer, "ffn_down_exps"), chosen, weights * hp["expert_scale"])
            x = h + routed + swiglu("_shexp")
        return _rms_norm(x, t["output_norm.weight"], eps) @ t.get("output.weight", t["token_embd.weight"]).T

    def metadata(self, writer, hp, model):
        import gguf

        experts = bool(hp["expert_used"])
        writer.add_context_length(model.max_positions if model.takes_positions else 2048)
        writer.add_embedding_length(hp["d"])
        writer.add_block_count(hp["blocks"])
        writer.add_feed_forward_length(hp.get("F", hp.get("Fe", 0)))
        writer.add_head_count(hp["heads"])
        writer.add_head_count_kv(1)  # the absorbed form: one latent (and rotary key) every head reads
        writer.add_layer_norm_rms_eps(hp["eps"])
        writer.add_leading_dense_block_count(hp["first_blocks"])
        writer.add_q_lora_rank(hp["Cq"])
        writer.add_kv_lora_rank(hp["C"])
        writer.add_key_length(hp["C"] + hp["rot"])
        writer.add_value_length(hp["C"])
        writer.add_key_length_mla(hp["nope"] + hp["rot"])
        writer.add_value_length_mla(hp["value"])
        writer.add_expert_feed_forward_length(hp["Fe"] if experts else hp["F"])
        writer.add_expert_shared_count(hp["S"] // hp["Fe"] if experts else 0)
        if experts:
            _add_experts(writer, hp)
            writer.add_expert_group_count(1)  # one group, chosen whole: a plain top-k over the experts
            writer.add_expert_group_used_count(1)
            writer.add_expert_weights_scale(hp["expert_scale"])
            if hp["weights_norm"]:
                writer.add_expert_weights_norm(True)
            writer.add_expert_gating_func(gguf.ExpertGatingFuncType.SIGMOID if hp["gating"] == "sigmoid" else gguf.ExpertGatingFuncType.SOFTMAX)
        writer.add_rope_dimension_count(hp["rot"])
        writer.add_rope_freq_base(hp["base"])


class Bert(Arch):
    """llama.cpp's `bert` (src/models/bert.cpp), an encoder whose output is embeddings: token,
    position and token-type (row 0: llama.cpp gives every token type 0) embeddings summed and
    layer-normed (`token_embd_norm`), then post-norm blocks: attention over every position with
    biases on q, k, v and its output, a layer_norm after the residual (`attn_output_norm`), GELU
    (llama.cpp's tanh table) with no gate, a layer_norm after the second residual
    (`layer_output_norm`). Its embeddings are the last block's output, per token (pooling none)."""

    name = "bert"
    encoder = True
    norm = "layer_norm"
    activation = "gelu"
    also_computes = ("gelu_tanh",)
    block = [("attn_q.weight", ("d", "d")), ("attn_q.bias", ("d",)), ("attn_k.weight", ("d", "d")), ("attn_k.bias", ("d",)),
             ("attn_v.weight", ("d", "d")), ("attn_v.bias", ("d",)), ("attn_output.weight", ("d", "d")), ("attn_output.bias", ("d",)),
             ("attn_output_norm.weight", ("d",)), ("attn_output_norm.bias", ("d",)),
             ("ffn_up.weight", ("F", "d")), ("ffn_up.bias", ("F",)), ("ffn_down.weight", ("d", "F")), ("ffn_down.bias", ("d",)),
             ("layer_output_norm.weight", ("d",)), ("layer_output_norm.bias", ("d",))]
    other = [("position_embd.weight", ("P", "d")), ("token_types.weight", ("T", "d")), ("token_embd_norm.weight", ("d",)),
             ("token_embd_norm.bias", ("d",))]

    def variants(self, env):
        for hd in _head_sizes(env["d"]):
            yield {"heads": env["d"] // hd, "kv_heads": env["d"] // hd, "head_dim": hd}

    def prepare(self, tensors, hp):
        return tensors

    def reference(self, t, hp, ids):
        import torch

        b, n = ids.shape
        H, hd, eps = hp["heads"], hp["head_dim"], hp["eps"]
        exact = "gelu" in hp["computes"]  # the form the model writes (llama.cpp's table is as near to either)
        x = t["token_embd.weight"][ids] + t["token_types.weight"][0] + t["position_embd.weight"][torch.arange(n)]
        x = _layer_norm(x, t["token_embd_norm.weight"], t["token_embd_norm.bias"], eps)
        for i in range(hp["blocks"]):
            p = lambda name: t[f"blk.{i}.{name}"]  # noqa: E731
            q, k, v = ((x @ p(f"attn_{c}.weight").T + p(f"attn_{c}.bias")).reshape(b, n, H, hd).transpose(1, 2) for c in "qkv")
            attended = ((q @ k.transpose(-1, -2) / math.sqrt(hd)).softmax(-1) @ v).transpose(1, 2).reshape(b, n, H * hd)
            x = _layer_norm(x + attended @ p("attn_output.weight").T + p("attn_output.bias"), p("attn_output_norm.weight"),
                            p("attn_output_norm.bias"), eps)
            up = torch.nn.functional.gelu(x @ p("ffn_up.weight").T + p("ffn_up.bias"), approximate="none" if exact else "tanh")
            x = _layer_norm(x + up @ p("ffn_down.weight").T + p("ffn_down.bias"), p("layer_output_norm.weight"),
                            p("layer_output_norm.bias"), eps)
        return x

    def metadata(self, writer, hp, model):
        import gguf

        writer.add_context_length(hp["P"])
        writer.add_embedding_length(hp["d"])
        writer.add_block_count(hp["blocks"])
        writer.add_feed_forward_length(hp["F"])
        writer.add_head_count(hp["heads"])
        writer.add_layer_norm_eps(hp["eps"])
        writer.add_causal_attention(False)
        writer.add_pooling_type(gguf.PoolingType.NONE)  # per token, as transformers' last hidden state
        writer.add_token_type_count(hp["T"])


ARCHITECTURES = [Llama(), Qwen2(), Gemma(), Phi3(), Gpt2(), Qwen3(), Phi2(), Starcoder2(), Olmo2(), CommandR(), Gemma2(), GptNeox(),
                 Gemma3(), LlamaExperts(), Qwen3Moe(), Bloom(), Cohere2(), Qwen2Moe(), GptOss(), Deepseek2(), Bert()]


def _head_sizes(d):
    """Head sizes that divide d, the common ones first."""
    common = [64, 128, 32, 16, 80, 96, 256, 8]
    sizes = [s for s in common if d % s == 0] + [s for s in range(1, d + 1) if d % s == 0 and s not in common]
    return sizes


def _plural(n, word):
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _bind(pattern, shape, env):
    """Unifies a tensor's shape pattern (`("F", "d")`) with a concrete shape, extending env."""
    if len(pattern) != len(shape):
        return None
    env = dict(env)
    for symbol, size in zip(pattern, shape):
        if symbol.startswith("="):  # a size llama.cpp fixes (qwen2moe's one-row shared gate: `=1`)
            if int(symbol[1:]) != size:
                return None
            continue
        # `3d`, `2F`: a multiple of a size, bound here if it isn't yet (a fused projection's rows).
        digits = len(symbol) - len(symbol.lstrip("0123456789"))
        times, symbol = (int(symbol[:digits]), symbol[digits:]) if digits else (1, symbol)
        if symbol in env:
            if env[symbol] * times != size:
                return None
        elif size % times == 0:
            env[symbol] = size // times
        else:
            return None
    return env


def _placements(parts):
    """The search (mapping.Backtracking) for every way to place each part's tensors, part after part:
    each tensor of a part (its slot, (part, name)) takes one of the part's fields, none twice, whose
    shape binds its pattern with the sizes bound so far; the fields are tried in the order the forward
    uses them first (so a model written in llama.cpp's order is read right the first time)."""
    slots = [(j, name) for j, (tensors, _, _, _) in enumerate(parts) for name, _ in tensors]
    patterns = {(j, name): pattern for j, (tensors, _, _, _) in enumerate(parts) for name, pattern in tensors}

    def binds(slot, field, partial, env):
        j = slot[0]
        if any(other[0] == j and taken == field for other, taken in partial.items()):
            return None
        return _bind(patterns[slot], parts[j][2](field), env)

    return mapping.Backtracking(slots, lambda slot: parts[slot[0]][1], binds)


def _place_parts(parts, env, search):
    """Every placement of the parts' tensors (`search`: _placements(parts)): yields ([(llama.cpp's
    name -> field, its blocks or None)], env)."""
    for placed, bound in search.mappings(env):
        yield [({name: placed[(j, name)] for name, _ in tensors}, blocks) for j, (tensors, _, _, blocks) in enumerate(parts)], bound


def _reached(parts, search):
    """The most of each part's tensors placed at once, which says where the shapes stop fitting."""
    reached, start = [], 0
    for tensors, _, _, _ in parts:
        reached.append(max(0, min(len(tensors), search.deepest - start)))
        start += len(tensors)
    return reached


def file_tensors(model, placements, params):
    """The file's tensors, by llama.cpp's names, read from the model's parameters as the placements say:
    (llama.cpp's name -> field, the blocks it is in, or None for a tensor outside the blocks)."""
    tensors = {"token_embd.weight": params[model.embedding]}
    for i in range(model.layers):
        for named, blocks in placements:
            if blocks is not None and i in blocks:
                for name, field in named.items():
                    tensors[f"blk.{i}.{name}"] = params[field][model.slices[i][field]]
    for named, blocks in placements:
        if blocks is None:
            tensors.update({name: params[field] for name, field in named.items()})
    if model.output_layer and model.output_layer != model.embedding:  # an encoder has none
        tensors["output.weight"] = params[model.output_layer]
    return tensors


def _blocks_said(blocks):
    return f"block {blocks[0]}" if len(blocks) == 1 else f"blocks {blocks[0]}–{blocks[-1]}"


class Refusal(Exception):
    """Why the model isn't `arch`, and how near it came: `stage` is how far match() got (the
    nearest architecture got furthest), `distance` orders those that stopped at the same stage."""

    # match()'s checks in order: the output head, the norm, the activation, the epsilon, the tied
    # output layer, the number of fields, their shapes, the head sizes, then the computation.
    STAGES = ("output", "norm", "activation", "epsilon", "tied", "fields", "shapes", "heads", "computes")

    def __init__(self, message, stage, distance=0.0):
        super().__init__(message)
        self.stage, self.distance = Refusal.STAGES.index(stage), distance


def match(arch, model, params, order, ids, logits, budget=400):
    """The reading of the model as `arch` that computes its logits, or Refusal saying why not."""
    import torch

    # What it computes after its output layer: an architecture with no output bias, scale or softcap can't.
    output = (model.spec.get("description") or {}).get("output") or {}
    if output.get("bias") and not getattr(arch, "output_bias", False):
        raise Refusal(f"{output['where']}: its output layer adds the bias `{output['bias']}`, and `{arch.name}` has no output bias",
                      "output")
    for op in output.get("after", []):
        if op["op"] not in getattr(arch, "output_ops", ()):
            what = {"scale": "scale its logits", "softcap": "cap its logits"}.get(op["op"], "compute anything after the output layer")
            raise Refusal(f"{op['where']}: it computes `{op['text']}` after the output layer, and `{arch.name}` doesn't {what}",
                          "output")

    # What it computes with: llama.cpp's architecture has one norm and one activation.
    norms = [said for kind, said in NORMS.items() if kind != arch.norm and said in model.uses(NORMS)]
    if norms:
        others = [kind for kind, said in NORMS.items() if said in norms]
        raise Refusal(f"llama.cpp's architecture normalizes with `{arch.norm}` only, but the model uses "
                      f"{' and '.join(norms)}{model.where(others)}", "norm")
    computes = {arch.activation, *getattr(arch, "also_computes", ())}
    activations = [said for kind, said in ACTIVATIONS.items() if kind not in computes and said in model.uses(ACTIVATIONS)]
    if activations:
        others = [kind for kind, said in ACTIVATIONS.items() if said in activations]
        raise Refusal(
            f"llama.cpp's architecture activates with `{ACTIVATIONS[arch.activation]}` only, but the model uses "
            f"{' and '.join(activations)}{model.where(others)}", "activation", len(activations)
        )
    epsilons = model.epsilons(arch.norm)
    if len(epsilons) > 1:
        raise Refusal(f"llama.cpp's architecture uses one epsilon in `{arch.norm}`, but the model uses " + " and ".join(map(str, epsilons))
                      + model.where_epsilon(arch.norm, epsilons[0]), "epsilon")
    eps = epsilons[0] if epsilons else 1e-5

    if arch.tied_output and model.output_layer != model.embedding:
        where = ((model.spec.get("description") or {}).get("output") or {}).get("where")
        raise Refusal(f"llama.cpp's `{arch.name}` reads its output layer from the token embedding, but the model's output layer "
                      f"`{model.output_layer}` isn't its embedding `{model.embedding}`" + (f" at {where}" if where else ""), "tied")

    # Its layout: fields stacked along the blocks (or along a run of them), and the others.
    plans = arch.plans(model)
    if not plans:
        runs = "".join(f", {_plural(len(fields), 'field')} read by {_blocks_said(blocks)} only" for blocks, fields in model.runs)
        theirs = (f", {_plural(len(arch.runs[0]), 'more tensor')} in each of its first blocks (dense) and {len(arch.runs[1])} in each of the "
                  f"rest" if arch.runs else "")
        raise Refusal(
            f"it has {_plural(len(model.stacked), 'field')} stacked along its {model.layers} blocks{model.where_blocks()}{runs} and "
            f"{_plural(len(model.others), 'other field')}, but `{arch.name}` has {_plural(len(arch.block), 'tensor')} in each block"
            f"{theirs} and {_plural(len(arch.other), 'other tensor')}", "fields",
            abs(len(model.stacked) - len(arch.block)) + abs(len(model.others) - len(arch.other)) + sum(len(f) for _, f in model.runs)
        )

    env = {"d": model.width, "V": model.vocab, "n": ids.shape[1], "after": output.get("after", []), "blocks": model.layers,
           "layer_windows": model.spec.get("layer_windows")}
    in_order = lambda fields: [f for f in order if f in fields]  # noqa: E731
    one_block = lambda f: model.shapes[f][1:]  # noqa: E731
    whole = lambda f: model.shapes[f]  # noqa: E731
    # Each plan's parts: (its tensors, the fields that may be them, a field's shape in one block, the blocks it is in).
    planned = []
    for block_tensors, runs, first_blocks in plans:
        parts = [(block_tensors, in_order(model.stacked), one_block, range(model.layers))]
        parts += [(tensors, in_order(fields), one_block, blocks) for tensors, fields, blocks in runs]
        parts.append((arch.other, in_order(model.others), whole, None))
        planned.append((parts, _placements(parts), first_blocks))

    def readings():
        for parts, search, first_blocks in planned:
            for placements, env2 in _place_parts(parts, env, search):
                tensors = file_tensors(model, placements, params)
                for variant in arch.variants(env2):
                    yield placements, tensors, {**env2, **variant, "eps": eps, "blocks": model.layers, "first_blocks": first_blocks,
                                                "computes": {_call_kind(call) for call in model.calls}}

    def difference(reading):
        """How far the reading's reference logits are from the compiled forward's, and the
        hyperparameters as fitted."""
        _, tensors, hp = reading
        with torch.no_grad():
            prepared = arch.prepare(tensors, hp)
            hp = arch.fit(prepared, hp, ids, logits)
            expected = arch.reference(prepared, hp, ids)
        return ((expected - logits).abs().max() / logits.abs().max()).item(), hp

    verifier = mapping.Verifier(difference, 1e-6, budget)
    agreeing = verifier.first_agreeing(readings())
    if agreeing:
        return agreeing.mapping[0], agreeing.detail
    # Where the shapes stopped fitting: the first part of the first plan that no reading placed whole.
    parts, search, _ = planned[0]
    reached = _reached(parts, search)
    short = [j for j, (part, got) in enumerate(zip(parts, reached)) if got < len(part[0])]
    if short:
        j = short[0]
        tensors, _, _, blocks = parts[j]
        got = reached[j]
        where = f"of its blocks{model.where_blocks()} " if j == 0 else f"of its {_blocks_said(list(blocks))} " if blocks is not None else ""
        prefix = "blk.N." if blocks is not None else ""
        raise Refusal(f"its fields' shapes don't fit `{arch.name}`'s tensors: no field {where}is left with "
                      f"the shape of `{prefix}{tensors[got][0]}`", "shapes", len(tensors) - got)
    best = verifier.nearest
    if best is None:
        raise Refusal(f"no number of heads fits its widths: `{arch.name}` needs heads of an even size that divides {model.width}", "heads")
    blocks = f" (its blocks{model.where_blocks()})" if model.where_blocks() else ""
    raise Refusal(
        f"it computes something else: of {_plural(verifier.tried, 'reading')} of its fields as `{arch.name}`'s tensors, the nearest "
        f"({arch.describe(best.detail)}) gives logits that differ by {best.difference:.2g} of their largest value{blocks}", "computes",
        best.difference
    )


# ---------------------------------------------------------------------------------------------
# Writing the file.


# Tokens llama.cpp's vocabulary loader requires of a model whose name contains one of the names
# (llama-vocab.cpp sets their attributes with token_to_id.at, which throws when one is missing).
NAMED_TOKENS = [(("phi-3", "phi3"), ["<|endoftext|>"])]


def _is_gguf(path):
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"GGUF"
    except OSError:
        return False


def read_tokenizer(spec, vocab):
    """The tokenizer of `--tokenizer` (a tokenizer.json or a folder), else of a `--weights` folder that has
    one; None for a GGUF file's vocabulary (copied as it is) or no tokenizer. Read and checked before any
    search: what llama.cpp can't express is refused (hf_tokenizer.Refusal) before anything is written."""
    path = spec.get("tokenizer")
    if path and _is_gguf(path):
        return None  # its `tokenizer.*` keys are copied as they are (_vocabulary)
    tokenizer = hf_tokenizer.for_export(spec, vocab)
    if tokenizer is not None:
        tokenizer.gguf_fields = hf_tokenizer.gguf_vocabulary(tokenizer, vocab)
    return tokenizer


def _vocabulary(writer, spec, vocab, name, tokenizer=None):
    """The vocabulary: the tokenizer the export carries (`tokenizer.ggml.*` computed from it), the
    tokenizer of a GGUF file the user gives, else one token per id (` 17`), with llama.cpp's
    SentencePiece defaults <unk> = 0, <s> = 1, </s> = 2."""
    import gguf

    if tokenizer is not None:
        hf_tokenizer.add_to_gguf(writer, tokenizer.gguf_fields)
        return
    if spec["tokenizer"]:
        name = spec["tokenizer_name"]
        try:
            reader = gguf.GGUFReader(spec["tokenizer"])
        except FileNotFoundError:
            raise GgufError(f"can't read the tokenizer `{name}`: no such file")
        except Exception as e:  # noqa: BLE001 - the reader's own reason
            raise GgufError(f"can't read the tokenizer `{name}` as a GGUF file: {e}")
        fields = {key: field for key, field in reader.fields.items() if key.startswith("tokenizer.")}
        if "tokenizer.ggml.tokens" not in fields:
            raise GgufError(f"`{name}` has no vocabulary (no `tokenizer.ggml.tokens`)")
        count = len(fields["tokenizer.ggml.tokens"].data)
        if count != vocab:
            raise GgufError(f"`{name}` has a vocabulary of {count} tokens, but the model's embedding has {vocab} rows")
        for key, field in fields.items():
            value = field.contents()
            value_type = field.types[0]
            if value_type == gguf.GGUFValueType.ARRAY:
                writer.add_key_value(key, value, value_type, sub_type=field.types[-1])
            else:
                writer.add_key_value(key, value, value_type)
        return
    # llama.cpp's loader looks up tokens of its own by the model's name (a "phi3" must have <|endoftext|>):
    # they become control tokens after </s>.
    named = [token for names, tokens in NAMED_TOKENS for token in tokens if any(n in name.lower() for n in names)]
    special = ["<unk>", "<s>", "</s>"] + named
    if vocab < len(special):
        raise GgufError(f"llama.cpp's default vocabulary needs at least {len(special)} tokens ({', '.join(special)}), but the model has {vocab}")
    tokens = special + [f"\u2581{i}" for i in range(len(special), vocab)]
    types_ = [gguf.TokenType.UNKNOWN] + [gguf.TokenType.CONTROL] * (len(special) - 1) + [gguf.TokenType.NORMAL] * (vocab - len(special))
    writer.add_tokenizer_model("llama")
    writer.add_token_list(tokens)
    writer.add_token_scores([0.0] * vocab)
    writer.add_token_types(types_)
    writer.add_bos_token_id(1)
    writer.add_eos_token_id(2)
    writer.add_unk_token_id(0)
    writer.add_add_bos_token(False)


def write_file(model, arch, placements, hp, params, tokenizer=None):
    import gguf
    import numpy as np

    spec = model.spec
    tensors = arch.prepare(file_tensors(model, placements, params), hp)

    output = spec["output"]
    # A name of its own beside the target: two writers never share a partial file.
    fd, partial = tempfile.mkstemp(prefix="." + os.path.basename(output)[:64] + ".", suffix=".partial", dir=os.path.dirname(output) or ".")
    os.close(fd)
    writer = gguf.GGUFWriter(partial, arch.name)
    try:
        general_name = spec["model"] or os.path.splitext(os.path.basename(spec["source"]))[0]
        writer.add_name(general_name)
        writer.add_file_type(gguf.LlamaFileType.ALL_F32)
        arch.metadata(writer, hp, model)
        writer.add_vocab_size(model.vocab)
        _vocabulary(writer, spec, model.vocab, general_name, tokenizer)
        for name, value in tensors.items():
            writer.add_tensor(name, value.detach().to("cpu").float().contiguous().numpy().astype(np.float32))
        writer.write_header_to_file()
        writer.write_kv_data_to_file()
        writer.write_tensors_to_file()
        writer.close()
        umask = os.umask(0)  # mkstemp made it 0600: give it the permissions a new file gets
        os.umask(umask)
        os.chmod(partial, 0o666 & ~umask)
        os.replace(partial, output)  # the file appears whole, or not at all
    finally:
        if os.path.exists(partial):
            os.remove(partial)
    return len(tensors)


def _size(n):
    for unit in ("bytes", "KB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1000


def _refuse_sliding_window(spec, model):
    """No architecture here has a sliding window in llama.cpp (Phi-3's is switched off there), so a
    window narrower than the model's positions is a different computation, said before any search:
    the search's few positions would not see it."""
    window = spec.get("sliding_window") or 0
    positions = model.max_positions if model.takes_positions else 0
    if not window or (positions and window >= positions):
        return  # as wide as every sequence the model takes: no position is masked by it
    # An architecture with windows (gemma2's even blocks) and the model's number of fields reads it by computing.
    windowed = [arch for arch in ARCHITECTURES if getattr(arch, "windowed", False)]
    if any(arch.fits(model) for arch in windowed):
        return
    name = spec["model"] or spec["function"]
    of = f" of its {positions}" if positions else ""
    names = list(dict.fromkeys(f"`{arch.name}`" for arch in ARCHITECTURES if arch not in windowed))  # `llama` once, with experts or not
    others = " (" + "; ".join(f"`{arch.name}`, with a window {arch.window_said}, has {_plural(len(arch.block), 'tensor')} in each block"
                              for arch in windowed) + ")"
    raise GgufError(
        f"`{name}` isn't an architecture llama.cpp has: its attention sees only the last {window} positions{of} (`window=`), but "
        f"llama.cpp's {', '.join(names[:-1])} and {names[-1]} attend to every earlier position{others}; without the window, or "
        f"with one as wide as its positions, it would export"
    )


def _refuse_output_head(spec):
    """The architectures here compute plain logits, `output.weight` times the hidden states: an
    output bias or an operation after the output layer (a scale, a softcap) would be dropped, so
    each is refused with its line before any search."""
    output = (spec.get("description") or {}).get("output") or {}
    name = spec["model"] or spec["function"]
    names = list(dict.fromkeys(f"`{arch.name}`" for arch in ARCHITECTURES))
    archs = f"llama.cpp's {', '.join(names[:-1])} and {names[-1]}"
    # What some architecture computes (phi2's output bias, command-r's scale, gemma2's softcap) is the search's to read.
    ops = [op["op"] for op in output.get("after", [])]
    if any((not output.get("bias") or getattr(arch, "output_bias", False)) and all(op in getattr(arch, "output_ops", ()) for op in ops)
           for arch in ARCHITECTURES):
        return
    if output.get("bias"):
        raise GgufError(f"{output['where']}: `{name}` isn't an architecture llama.cpp has: its output layer adds the bias "
                        f"`{output['bias']}`, and {archs} have no output bias")
    for op in output.get("after", []):
        what = {"scale": "scale their logits", "softcap": "cap their logits"}.get(op["op"], "compute anything after the output layer")
        raise GgufError(f"{op['where']}: `{name}` isn't an architecture llama.cpp has: it computes `{op['text']}` after the output "
                        f"layer, and {archs} don't {what}")


def export_gguf(spec):
    # The tokenizer first: refused or broken, it is said before torch is imported or anything is written.
    tokenizer = read_tokenizer(spec, spec["vocab"])
    try:
        import torch
        import numpy  # noqa: F401
    except ImportError as e:
        raise GgufError(f"--gguf needs torch and numpy in this Python ({sys.executable}): {e}")
    try:
        import gguf  # noqa: F401
    except ImportError as e:
        raise GgufError(f"--gguf needs the `gguf` package in this Python ({sys.executable}); install it with `pip install gguf` ({e})")
    reals = [given["name"] for given in spec.get("inputs") or [] if given["role"] == "pixels"]
    if reals:
        raise GgufError(f"`{spec['model'] or spec['function']}` isn't an architecture llama.cpp has: llama.cpp's encoders read token ids, "
                        f"and its input `{reals[0]}` is a tensor of reals")
    reference = script.reference_module(spec)
    model = Model(spec, reference)
    _refuse_sliding_window(spec, model)
    _refuse_output_head(spec)
    file_weights = weights.load_weights(spec, reference)  # a bad checkpoint is said before the search

    # Compare in float64, so that only a different computation can tell the two apart. One thread:
    # the search's tensors are tiny, and threads only wait on each other (100 times slower on a busy machine).
    torch.set_default_dtype(torch.float64)
    torch.set_num_threads(1)
    params = random_params(model)
    n = min(7, model.max_positions) if model.takes_positions else 7
    ids = torch.randint(0, model.vocab, (2, n), generator=torch.Generator().manual_seed(1))
    logits, order = model.run(params, ids)
    reasons, nearest = [], None
    windowed = None  # longer rows, for an architecture with a window: each width up to theirs shows
    for arch in ARCHITECTURES:
        if getattr(arch, "encoder", False) != model.encoder:  # an encoder is only `bert`, a language model never
            continue
        if arch.variant_of and not arch.fits(model):
            continue
        rows, expected = ids, logits
        if getattr(arch, "windowed", False):
            if windowed is None:
                long = torch.randint(0, model.vocab, (2, min(24, model.max_positions) if model.takes_positions else 24),
                                     generator=torch.Generator().manual_seed(2))
                windowed = long, model.run(params, long)[0]
            rows, expected = windowed
        try:
            placements, hp = match(arch, model, params, order, rows, expected)
        except Refusal as why:
            reasons.append(f"not `{arch.name}`: {why}")
            # Nearest first by its tensors: as many as the model has fields, then how far its checks got.
            closeness = (arch.fits(model), why.stage, -why.distance)
            if nearest is None or closeness > nearest[1]:
                nearest = (arch, closeness)
            continue
        torch.set_default_dtype(torch.float32)
        count = write_file(model, arch, placements, hp, file_weights, tokenizer)
        return {
            "architecture": arch.name,
            "blocks": model.layers,
            "heads": hp["heads"],
            "vocab": model.vocab,
            "tensors": count,
            "size": _size(os.path.getsize(spec["output"])),
            "hyperparameters": {k: v for k, v in hp.items() if isinstance(v, (int, float, str))},
            "mapping": {name: field for mapping, _ in placements for name, field in mapping.items()},
            "tokenizer": _tokenizer_summary(tokenizer),
        }
    name = spec["model"] or spec["function"]
    # The variants with other numbers of tensors than the model's go unsaid: their families' reasons
    # (`llama`'s for qwen2, gemma, phi3, ...) already say why, in the words the book's chapter shows.
    # The nearest: the architecture with the model's numbers of tensors whose checks it passed furthest
    # (its reason is the first difference).
    said = f"; the nearest is `{nearest[0].name}`" if len(reasons) > 1 and DETAILED else ""
    raise GgufError(f"`{name}` isn't an architecture llama.cpp has: " + "; ".join(reasons) + said)


def _tokenizer_summary(tokenizer):
    if tokenizer is None:
        return None
    fields = {key: value for key, value, _ in tokenizer.gguf_fields}
    return {"model": fields["tokenizer.ggml.model"], "pre": fields.get("tokenizer.ggml.pre"), "tokens": tokenizer.size,
            "chat_template": tokenizer.chat_template is not None}


# With --verbose, a refusal's differences carry their `.ss` lines and name the nearest architecture.
# Without, the refusal is the book's two lines to the character (the chapter on export prints Tiny's).
DETAILED = False


EXPECTED = (GgufError, weights.WeightsError, hf_tokenizer.TokenizerError)


def write(spec, verbose=False):
    """The target's interface (targets.py): writes the file spec["output"] names; returns the answer."""
    global DETAILED
    DETAILED = verbose
    return export_gguf(spec)

"""The architectures the generation benchmark runs: each a ShapeScript example at a benchmark size
and the transformers class it is measured against, with the mapping of transformers' weights onto
the example's parameters, by name. Adding an architecture is one entry in ARCHITECTURES.

The benchmark size doubles the examples' D (heads of 64 stay heads of 64), doubles H, Hkv and F
with it (the ratio H/Hkv and the head size are the example's), and takes V=8192, L=4, P=1024: a
size where the model's arithmetic, not Python, takes the time. (tests/python/test_architectures.py
has the same mapping at the examples' own size; benches do not import from tests/.)
"""
from __future__ import annotations

import pathlib
from dataclasses import dataclass, field
from typing import Callable, Union

ROOT = pathlib.Path(__file__).resolve().parents[1]

# A parameter of the ShapeScript model: transformers' tensor of that name (per layer: under
# `model.layers.{i}.`, stacked over the layers), or a function of `get(name)` for one that is not a
# plain copy (a slice of a fused tensor, say).
Source = Union[str, Callable[[Callable[[str], "object"]], "object"]]

# Llama's blocks, which most architectures share: ShapeScript's stacked parameter <- transformers' per-layer tensor.
LLAMA_LAYER = {"attn_norm": "input_layernorm.weight", "wq": "self_attn.q_proj.weight", "wk": "self_attn.k_proj.weight",
               "wv": "self_attn.v_proj.weight", "wo": "self_attn.o_proj.weight", "ffn_norm": "post_attention_layernorm.weight",
               "w_gate": "mlp.gate_proj.weight", "w_up": "mlp.up_proj.weight", "w_down": "mlp.down_proj.weight"}
LLAMA_GLOBAL = {"wte": "model.embed_tokens.weight", "norm": "model.norm.weight", "w_out": "lm_head.weight"}


@dataclass
class Architecture:
    example: str  # under examples/
    hf_class: str  # transformers' model class, e.g. "LlamaForCausalLM"
    config_class: str  # its config class, e.g. "LlamaConfig"
    dims: dict  # the example's `dim` lines at the benchmark size (derived dims such as Dh are left to the source)
    layer: dict = field(default_factory=lambda: dict(LLAMA_LAYER))  # ours <- transformers, per layer
    globals: dict = field(default_factory=lambda: dict(LLAMA_GLOBAL))  # ours <- transformers, once
    config: dict = field(default_factory=dict)  # more of the config's keywords: rope, eps, biases, activation ...
    # transformers' norm weights are w in x * w (1 + 0.2 N(0,1) gives them spread around 1), or, as
    # Gemma's, the w of x * (1 + w) (0.2 N(0,1) then).
    norm_offset: float = 1.0

    @property
    def source_path(self):
        return ROOT / "examples" / self.example

    def source(self) -> str:
        """The example with its `dim` lines set to the benchmark size."""
        lines = self.source_path.read_text().splitlines()
        for name, value in self.dims.items():
            index = next((i for i, line in enumerate(lines) if line.split()[:2] == ["dim", name]), None)
            if index is None:
                raise ValueError(f"{self.example} has no `dim {name}`")
            lines[index] = f"dim {name} = {value}"
        return "\n".join(lines) + "\n"

    def hf_config(self):
        import transformers

        d = self.dims
        kwargs = dict(vocab_size=d["V"], hidden_size=d["D"], intermediate_size=d["F"], num_hidden_layers=d["L"],
                      num_attention_heads=d["H"], num_key_value_heads=d.get("Hkv", d["H"]), head_dim=d["D"] // d["H"],
                      max_position_embeddings=d["P"], rms_norm_eps=1e-5, tie_word_embeddings="w_out" not in self.globals,
                      rope_parameters={"rope_type": "default", "rope_theta": 10000.0},
                      bos_token_id=None, eos_token_id=None, pad_token_id=None)
        kwargs.update(self.config)
        return getattr(transformers, self.config_class)(**kwargs)

    def reference(self, seed: int):
        """transformers' model with weights of enough spread that every part moves the logits:
        matrices of unit scale per input, norms around 1, biases around 0 but not 0."""
        import torch
        import transformers

        torch.manual_seed(seed)
        model = getattr(transformers, self.hf_class)(self.hf_config()).eval()
        with torch.no_grad():
            for name, value in model.named_parameters():
                if name.endswith("norm.weight"):
                    value.copy_(self.norm_offset + 0.2 * torch.randn_like(value))
                elif name.endswith(".bias"):
                    value.copy_(0.5 * torch.randn_like(value))
                else:
                    value.copy_(torch.randn_like(value) / value.shape[-1] ** 0.5)
        return model

    def weights(self, model) -> dict:
        """transformers' weights as the ShapeScript model's parameters; per-layer tensors stacked."""
        import torch

        state = model.state_dict()

        def take(source, prefix=""):
            if callable(source):
                return source(lambda name: state[prefix + name])
            return state[prefix + source]

        out = {ours: take(source) for ours, source in self.globals.items()}
        for ours, source in self.layer.items():
            out[ours] = torch.stack([take(source, f"model.layers.{i}.") for i in range(self.dims["L"])])
        return {name: value.detach().clone().contiguous() for name, value in out.items()}


def scaled(D, H, F, Hkv=None, V=8192, L=4, P=1024):
    dims = {"D": D, "H": H, "F": F, "V": V, "L": L, "P": P}
    if Hkv is not None:
        dims["Hkv"] = Hkv
    return dims


ARCHITECTURES = {
    # examples/llama.ss's bench size since the first benchmark: F=1376 (about 8/3 D, as Llama's).
    "llama": Architecture("llama.ss", "LlamaForCausalLM", "LlamaConfig", scaled(D=512, H=8, F=1376),
                          config=dict(attention_bias=False, mlp_bias=False)),
    "llama_gqa": Architecture("llama_gqa.ss", "LlamaForCausalLM", "LlamaConfig", scaled(D=512, H=8, Hkv=4, F=1024),
                              config=dict(attention_bias=False, mlp_bias=False)),
    "qwen2": Architecture("qwen2.ss", "Qwen2ForCausalLM", "Qwen2Config", scaled(D=512, H=8, Hkv=4, F=1024),
                          layer={**LLAMA_LAYER, "bq": "self_attn.q_proj.bias", "bk": "self_attn.k_proj.bias",
                                 "bv": "self_attn.v_proj.bias"},
                          config=dict(rms_norm_eps=1e-6, use_sliding_window=False,
                                      rope_parameters={"rope_type": "default", "rope_theta": 1e6})),
    "mistral": Architecture("mistral.ss", "MistralForCausalLM", "MistralConfig", scaled(D=512, H=8, Hkv=2, F=1536),
                            config=dict(sliding_window=None, rope_parameters={"rope_type": "default", "rope_theta": 1e6})),
    # A window of 64 (Mistral 7B v0.1's is 4096 of 32768): the default prompt of 16 and 64 new tokens pass it.
    "mistral_sliding": Architecture("mistral_sliding.ss", "MistralForCausalLM", "MistralConfig",
                                    {**scaled(D=512, H=8, Hkv=2, F=1536), "W": 64},
                                    config=dict(sliding_window=64, rope_parameters={"rope_type": "default", "rope_theta": 1e6})),
    "gemma": Architecture("gemma.ss", "GemmaForCausalLM", "GemmaConfig", scaled(D=512, H=8, Hkv=2, F=1536),
                          globals={"wte": "model.embed_tokens.weight", "norm": "model.norm.weight"},  # tied output: no w_out
                          norm_offset=0.0, config=dict(hidden_act="gelu_pytorch_tanh", rms_norm_eps=1e-6)),
    "phi3": Architecture("phi3.ss", "Phi3ForCausalLM", "Phi3Config", scaled(D=512, H=8, F=1024),
                         layer={"attn_norm": "input_layernorm.weight", "w_qkv": "self_attn.qkv_proj.weight",
                                "wo": "self_attn.o_proj.weight", "ffn_norm": "post_attention_layernorm.weight",
                                "w_gate_up": "mlp.gate_up_proj.weight", "w_down": "mlp.down_proj.weight"},
                         config=dict(original_max_position_embeddings=1024)),
}

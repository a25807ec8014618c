"""The model zoo: each architecture of examples/ that issue 19 names, with the transformers class it
computes and that class's tiny random config at the example's sizes, and the reference weights
(`reference_model`). One table, read by the tests (tests/python/test_model_zoo.py,
test_encoders.py) and by the benchmarks (bench_verify.py); plain Python and transformers, no pytest.
"""
from __future__ import annotations

import pathlib
from dataclasses import dataclass

import torch
import transformers

EXAMPLES = pathlib.Path(__file__).resolve().parents[1] / "examples"


@dataclass(frozen=True)
class Zoo:
    example: str
    model: str  # the ShapeScript model's name
    hf_class: str
    config_class: str
    config: tuple  # the config's settings, as (key, value) pairs
    V: int
    sequence: int = 24  # tokens per row compared: past every window the model has

    @property
    def source(self):
        return EXAMPLES / self.example


def settings(**kwargs) -> tuple:
    return tuple(sorted(kwargs.items()))


# Sizes match each example's dims; every config is eager attention in float32.
ZOO = {
    "qwen3": Zoo("qwen3.ss", "Qwen3", "Qwen3ForCausalLM", "Qwen3Config", settings(
        vocab_size=128, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=2,
        num_key_value_heads=1, head_dim=32, max_position_embeddings=128, rms_norm_eps=1e-6, tie_word_embeddings=False,
        rope_parameters={"rope_type": "default", "rope_theta": 1e6}, use_sliding_window=False), V=128),
    "starcoder2": Zoo("starcoder2.ss", "Starcoder2", "Starcoder2ForCausalLM", "Starcoder2Config", settings(
        vocab_size=128, hidden_size=64, intermediate_size=256, num_hidden_layers=2, num_attention_heads=2,
        num_key_value_heads=1, max_position_embeddings=64, norm_epsilon=1e-5, use_bias=True, hidden_act="gelu_pytorch_tanh",
        sliding_window=16, tie_word_embeddings=True, bos_token_id=1, eos_token_id=2,
        rope_parameters={"rope_type": "default", "rope_theta": 10000.0}), V=128),
    "olmo2": Zoo("olmo2.ss", "Olmo2", "Olmo2ForCausalLM", "Olmo2Config", settings(
        vocab_size=128, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=2,
        num_key_value_heads=2, max_position_embeddings=128, rms_norm_eps=1e-6, tie_word_embeddings=False,
        pad_token_id=1, eos_token_id=2, rope_parameters={"rope_type": "default", "rope_theta": 500000.0}), V=128),
    "gpt_neox": Zoo("gpt_neox.ss", "GptNeox", "GPTNeoXForCausalLM", "GPTNeoXConfig", settings(
        vocab_size=128, hidden_size=64, intermediate_size=256, num_hidden_layers=2, num_attention_heads=2,
        max_position_embeddings=128, layer_norm_eps=1e-5, hidden_act="gelu", use_parallel_residual=True, attention_bias=True,
        tie_word_embeddings=False, bos_token_id=0, eos_token_id=2,
        rope_parameters={"rope_type": "default", "rope_theta": 10000.0, "partial_rotary_factor": 0.25}), V=128),
    "opt": Zoo("opt.ss", "Opt", "OPTForCausalLM", "OPTConfig", settings(
        vocab_size=128, hidden_size=64, ffn_dim=256, num_hidden_layers=2, num_attention_heads=2, max_position_embeddings=64,
        do_layer_norm_before=True, word_embed_proj_dim=64, activation_function="relu", enable_bias=True,
        tie_word_embeddings=True, dropout=0.0, pad_token_id=1, bos_token_id=2, eos_token_id=2), V=128),
    "llama31": Zoo("llama31.ss", "Llama31", "LlamaForCausalLM", "LlamaConfig", settings(
        vocab_size=128, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=2,
        num_key_value_heads=1, max_position_embeddings=128, rms_norm_eps=1e-5, tie_word_embeddings=False,
        attention_bias=False, mlp_bias=False, rope_parameters={
            "rope_type": "llama3", "rope_theta": 10000.0, "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
            "original_max_position_embeddings": 64}), V=128),
    "bloom": Zoo("bloom.ss", "Bloom", "BloomForCausalLM", "BloomConfig", settings(
        vocab_size=128, hidden_size=64, n_layer=2, n_head=4, layer_norm_epsilon=1e-5, tie_word_embeddings=True,
        apply_residual_connection_post_layernorm=False, hidden_dropout=0.0, attention_dropout=0.0,
        bos_token_id=1, eos_token_id=2, pad_token_id=3), V=128),
    # Phi's output bias, Cohere's logit_scale and Gemma 2's final softcap (and its window chosen by
    # `l % 2 == 0`) are refused by import-weights until it takes an output head beyond `linear(h, m.W)`.
    "phi": Zoo("phi.ss", "Phi", "PhiForCausalLM", "PhiConfig", settings(
        vocab_size=128, hidden_size=64, intermediate_size=256, num_hidden_layers=2, num_attention_heads=2,
        num_key_value_heads=2, max_position_embeddings=128, layer_norm_eps=1e-5, hidden_act="gelu_new", qk_layernorm=False,
        tie_word_embeddings=False, bos_token_id=1, eos_token_id=2,
        rope_parameters={"rope_type": "default", "rope_theta": 10000.0, "partial_rotary_factor": 0.5}), V=128),
    "cohere": Zoo("cohere.ss", "Cohere", "CohereForCausalLM", "CohereConfig", settings(
        vocab_size=128, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=2,
        num_key_value_heads=1, max_position_embeddings=128, layer_norm_eps=1e-5, logit_scale=0.0625, use_qk_norm=False,
        attention_bias=False, tie_word_embeddings=True, pad_token_id=0, bos_token_id=1, eos_token_id=2,
        rope_parameters={"rope_type": "default", "rope_theta": 10000.0}), V=128),
    "gemma2": Zoo("gemma2.ss", "Gemma2", "Gemma2ForCausalLM", "Gemma2Config", settings(
        vocab_size=128, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=2,
        num_key_value_heads=1, head_dim=32, query_pre_attn_scalar=32, max_position_embeddings=128, rms_norm_eps=1e-6,
        hidden_activation="gelu_pytorch_tanh", sliding_window=8, layer_types=["sliding_attention", "full_attention"],
        attn_logit_softcapping=50.0, final_logit_softcapping=30.0, tie_word_embeddings=True,
        pad_token_id=0, eos_token_id=1, bos_token_id=2, rope_parameters={"rope_type": "default", "rope_theta": 10000.0}), V=128),
    # Sparse experts: 4, each token through the 2 its router scores highest (`topk`, `experts`).
    "mixtral": Zoo("mixtral.ss", "Mixtral", "MixtralForCausalLM", "MixtralConfig", settings(
        vocab_size=128, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=2,
        num_key_value_heads=1, head_dim=32, num_local_experts=4, num_experts_per_tok=2, max_position_embeddings=128,
        rms_norm_eps=1e-5, sliding_window=None, tie_word_embeddings=False,
        rope_parameters={"rope_type": "default", "rope_theta": 1e6}), V=128),
    # Experts stored one per expert (`mlp.experts.E.gate_proj`), a sparse layer in every block.
    "qwen3_moe": Zoo("qwen3_moe.ss", "Qwen3Moe", "Qwen3MoeForCausalLM", "Qwen3MoeConfig", settings(
        vocab_size=128, hidden_size=64, intermediate_size=128, moe_intermediate_size=96, num_hidden_layers=2,
        num_attention_heads=2, num_key_value_heads=1, head_dim=32, num_experts=4, num_experts_per_tok=2, norm_topk_prob=True,
        decoder_sparse_step=1, mlp_only_layers=[], max_position_embeddings=128, rms_norm_eps=1e-6, tie_word_embeddings=False,
        use_sliding_window=False, rope_parameters={"rope_type": "default", "rope_theta": 1e6}), V=128),
    # Attention sinks (`sinks=`), a window on every other block, experts with biases and a clamped
    # SwiGLU whose gate and up are interleaved in one projection, stored [E D 2F] (transposed).
    "gpt_oss": Zoo("gpt_oss.ss", "GptOss", "GptOssForCausalLM", "GptOssConfig", settings(
        vocab_size=128, hidden_size=64, intermediate_size=96, num_hidden_layers=2, num_attention_heads=2,
        num_key_value_heads=1, head_dim=32, num_local_experts=4, num_experts_per_tok=2, max_position_embeddings=128,
        rms_norm_eps=1e-5, sliding_window=8, layer_types=["sliding_attention", "full_attention"], attention_bias=True,
        swiglu_limit=7.0, tie_word_embeddings=False, pad_token_id=0, eos_token_id=1, bos_token_id=2,
        rope_parameters={"rope_type": "default", "rope_theta": 10000.0}), V=128),
    # Multi-head latent attention (unequal `split`s), interleaved rotary on the shared key part, a
    # dense first block, then sigmoid-routed experts stored per expert, a shared expert beside them.
    # `scoring_func` as DeepSeek-V3's own config.json says it (transformers' class always routes by sigmoid;
    # llama.cpp's converter reads it).
    "deepseek_v3": Zoo("deepseek_v3.ss", "DeepseekV3", "DeepseekV3ForCausalLM", "DeepseekV3Config", settings(
        vocab_size=128, hidden_size=64, intermediate_size=128, moe_intermediate_size=24, num_hidden_layers=2,
        num_attention_heads=2, num_key_value_heads=2, q_lora_rank=40, kv_lora_rank=512, qk_nope_head_dim=64,
        qk_rope_head_dim=64, v_head_dim=16, n_routed_experts=4, num_experts_per_tok=2, n_shared_experts=1, n_group=1,
        topk_group=1, norm_topk_prob=True, routed_scaling_factor=2.5, first_k_dense_replace=1, rope_interleave=True,
        max_position_embeddings=128, rms_norm_eps=1e-6, tie_word_embeddings=False, scoring_func="sigmoid",
        rope_parameters={"rope_type": "default", "rope_theta": 10000.0}), V=128),
    # A rotary base per block: the sliding blocks the local one, the full-attention blocks the global.
    "gemma3": Zoo("gemma3.ss", "Gemma3", "Gemma3ForCausalLM", "Gemma3TextConfig", settings(
        vocab_size=128, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=2,
        num_key_value_heads=1, head_dim=32, query_pre_attn_scalar=32, max_position_embeddings=128, rms_norm_eps=1e-6,
        hidden_activation="gelu_pytorch_tanh", sliding_window=8, layer_types=["sliding_attention", "full_attention"],
        tie_word_embeddings=True, pad_token_id=0, eos_token_id=1, bos_token_id=2, rope_parameters={
            "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
            "full_attention": {"rope_type": "default", "rope_theta": 1000000.0}}), V=128),
    # Rotary embeddings on the sliding blocks only; the full-attention blocks have none.
    "cohere2": Zoo("cohere2.ss", "Cohere2", "Cohere2ForCausalLM", "Cohere2Config", settings(
        vocab_size=128, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=2,
        num_key_value_heads=1, max_position_embeddings=128, layer_norm_eps=1e-5, logit_scale=0.0625, attention_bias=False,
        sliding_window=8, layer_types=["sliding_attention", "full_attention"], tie_word_embeddings=True,
        pad_token_id=0, bos_token_id=1, eos_token_id=2, rope_parameters={"rope_type": "default", "rope_theta": 10000.0}), V=128),
    # Routed experts weighted by the router's softmax as it is (norm_topk_prob false), and a shared
    # expert scaled by a sigmoid gate of its own.
    "qwen2_moe": Zoo("qwen2_moe.ss", "Qwen2Moe", "Qwen2MoeForCausalLM", "Qwen2MoeConfig", settings(
        vocab_size=128, hidden_size=64, intermediate_size=128, moe_intermediate_size=48, shared_expert_intermediate_size=128,
        num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=1, num_experts=4, num_experts_per_tok=2,
        norm_topk_prob=False, decoder_sparse_step=1, mlp_only_layers=[], qkv_bias=True, max_position_embeddings=128,
        rms_norm_eps=1e-6, tie_word_embeddings=False, use_sliding_window=False,
        rope_parameters={"rope_type": "default", "rope_theta": 1e6}), V=128),
}


def reference_model(zoo: Zoo, seed: int):
    """transformers' class with weights of enough spread that every part moves the logits: matrices
    of unit scale per input, and every vector (norm weights, biases) moved by 0.2 randn from where
    the class put it (ones, zeros), so a norm read as another, or a bias left out, shows."""
    config = getattr(transformers, zoo.config_class)(**dict(zoo.config))
    config._attn_implementation = "eager"
    torch.manual_seed(seed)
    model = getattr(transformers, zoo.hf_class)(config).eval().float()
    with torch.no_grad():
        for name, value in model.named_parameters():
            if value.dim() == 1:
                value.add_(0.2 * torch.randn_like(value))
            else:
                value.copy_(torch.randn_like(value) / value.shape[-1] ** 0.5)
        # Vectors saved as buffers (DeepSeek's router bias, e_score_correction_bias) move too.
        saved = model.state_dict()
        for name, value in model.named_buffers():
            if name in saved and value.dim() == 1 and value.is_floating_point():
                value.add_(0.2 * torch.randn_like(value))
    return model

"""Convolution and pooling: the sizes the checker computes are torch's, and the programs compute what
torch's own modules do.

examples/cnn.ss (conv, relu, pool, conv, relu, pool, a linear head) gives the logits of the same
network built from torch.nn modules with the same weights; examples/whisper_frontend.ss gives the
frames transformers' WhisperEncoder feeds its first layer (its own conv1, conv2 and
embed_positions, at a tiny random config), and its forward the encoder's last_hidden_state. The checker's output sizes (floor division where torch
floors) are compared with the shapes torch computes over a grid of sizes, kernels, strides, paddings
and dilations, and pooling, adaptive pooling and interpolation with torch.nn's modules.

    $SHAPESCRIPT_VENV/bin/python -m pytest tests/python/test_convolution.py
"""
from __future__ import annotations

import itertools
import json

import pytest
import torch
from torch import nn

import shapescript
from conftest import EXAMPLES, cli, export_pt2


def random_weights(model: nn.Module, seed: int) -> None:
    """Every parameter random at unit-ish scale, so that each one changes the result."""
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=generator) / max(1, p[0].numel()) ** 0.5)


def test_cnn_equals_torch_modules():
    reference = nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(16 * 8 * 8, 10),
    ).eval()
    random_weights(reference, 0)
    compiled = shapescript.compile(EXAMPLES / "cnn.ss")
    model = compiled.Cnn()
    model.load_state_dict({
        "conv1_w": reference[0].weight, "conv1_b": reference[0].bias,
        "conv2_w": reference[3].weight, "conv2_b": reference[3].bias,
        "head_w": reference[7].weight, "head_b": reference[7].bias,
    })
    images = torch.randn(2, 3, 32, 32, generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        logits = compiled.forward(model, images)
        expected = reference(images)
    assert logits.shape == (2, 10)
    torch.testing.assert_close(logits, expected, rtol=1e-5, atol=1e-5)


def whisper_weights(encoder) -> dict:
    """WhisperEncoder's state dict as examples/whisper_frontend.ss's params: per-layer weights stacked on L."""
    layers = encoder.layers

    def stacked(name):
        return torch.stack([layer.get_parameter(name) for layer in layers])

    return {
        "conv1_w": encoder.conv1.weight, "conv1_b": encoder.conv1.bias,
        "conv2_w": encoder.conv2.weight, "conv2_b": encoder.conv2.bias,
        "embed_positions": encoder.embed_positions.weight,
        "ln1_w": stacked("self_attn_layer_norm.weight"), "ln1_b": stacked("self_attn_layer_norm.bias"),
        "wq": stacked("self_attn.q_proj.weight"), "bq": stacked("self_attn.q_proj.bias"),
        "wk": stacked("self_attn.k_proj.weight"),
        "wv": stacked("self_attn.v_proj.weight"), "bv": stacked("self_attn.v_proj.bias"),
        "wo": stacked("self_attn.out_proj.weight"), "bo": stacked("self_attn.out_proj.bias"),
        "ln2_w": stacked("final_layer_norm.weight"), "ln2_b": stacked("final_layer_norm.bias"),
        "fc1_w": stacked("fc1.weight"), "fc1_b": stacked("fc1.bias"),
        "fc2_w": stacked("fc2.weight"), "fc2_b": stacked("fc2.bias"),
        "lnf_w": encoder.layer_norm.weight, "lnf_b": encoder.layer_norm.bias,
    }


def test_whisper_encoder_equals_transformers():
    """The front end gives what WhisperEncoder's first layer reads; the whole forward its last_hidden_state."""
    from transformers import WhisperConfig
    from transformers.models.whisper.modeling_whisper import WhisperEncoder

    config = WhisperConfig(num_mel_bins=16, d_model=32, max_source_positions=24, encoder_layers=2,
                           encoder_attention_heads=2, encoder_ffn_dim=64, decoder_layers=1,
                           decoder_attention_heads=2, decoder_ffn_dim=64, vocab_size=64)
    encoder = WhisperEncoder(config).eval()
    random_weights(encoder, 2)
    frames = []  # what the encoder's first layer reads: its front end's output
    encoder.layers[0].register_forward_pre_hook(lambda module, args, kwargs: frames.append(args[0] if args else kwargs["hidden_states"]), with_kwargs=True)
    mel = torch.randn(2, 16, 2 * 24, generator=torch.Generator().manual_seed(3))
    with torch.no_grad():
        expected = encoder(mel).last_hidden_state
    compiled = shapescript.compile(EXAMPLES / "whisper_frontend.ss")
    model = compiled.WhisperEncoder()
    model.load_state_dict(whisper_weights(encoder))
    with torch.no_grad():
        front = compiled.frontend(model, mel)
        out = compiled.forward(model, mel)
    assert front.shape == out.shape == (2, 24, 32)
    torch.testing.assert_close(front, frames[0], rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(out, expected, rtol=1e-4, atol=1e-4)


def torch_out(size: int, kernel: int, stride: int, padding: int, dilation: int) -> int:
    x = torch.zeros(1, 1, size)
    return torch.nn.functional.conv1d(x, torch.zeros(1, 1, kernel), stride=stride, padding=padding, dilation=dilation).shape[-1]


def test_checker_sizes_are_torchs(tmp_path):
    """One function per case, its result declared with torch's size: the file checks clean only if
    every size the checker computed is torch's (E0301 otherwise); a window that leaves nothing is E0320."""
    functions, too_small = [], 0
    for i, (size, kernel, stride, padding, dilation) in enumerate(itertools.product([5, 7, 8, 12], [1, 2, 3, 5], [1, 2, 3], [0, 1, 2], [1, 2])):
        try:
            out = torch_out(size, kernel, stride, padding, dilation)
        except RuntimeError:  # torch: "Output size is too small"
            out, too_small = 1, too_small + 1
        functions.append(f"fn f{i}(x: [1 1 {size}], w: [1 1 {kernel}]) -> [1 1 {out}]:\n"
                         f"    return conv1d(x, w, stride={stride}, padding={padding}, dilation={dilation})\n")
    path = tmp_path / "sizes.ss"
    path.write_text("\n".join(functions))
    codes = [d["code"] for d in json.loads(cli("check", "--format", "json", path).stdout)]
    assert too_small > 0 and codes == ["E0320"] * too_small


POOLING = """
dim C = 3

fn max_pooled(x: [b C 2h 2w]) -> [b C h w]:
    return max_pool2d(x, kernel_size=2)

fn avg_pooled(x: [b C 9 11]) -> [b C 5 6]:
    return avg_pool2d(x, kernel_size=3, stride=2, padding=1)

fn adaptive(x: [b C 9 11]) -> [b C 2 3]:
    return adaptive_avg_pool2d[2 3](x)

fn nearest(x: [b C h w]) -> [b C 2h 2w]:
    return interpolate(x, scale=2)

fn bilinear(x: [b C h w]) -> [b C 5 7]:
    return interpolate[5 7](x, mode="bilinear")

fn linear_1d(x: [b C t]) -> [b C 3t]:
    return interpolate(x, scale=3, mode="linear")

fn grouped(x: [b 4 10], w: [6 2 3]) -> [b 6 10]:
    return conv1d(x, w, padding=1, groups=2)
"""


def test_pooling_and_interpolation_equal_torch_modules(tmp_path):
    path = tmp_path / "pooling.ss"
    path.write_text(POOLING)
    compiled = shapescript.compile(path)
    generator = torch.Generator().manual_seed(4)
    x = torch.randn(2, 3, 6, 8, generator=generator)
    odd = torch.randn(2, 3, 9, 11, generator=generator)
    cases = [
        (compiled.max_pooled(x), nn.MaxPool2d(2)(x)),
        (compiled.avg_pooled(odd), nn.AvgPool2d(3, stride=2, padding=1)(odd)),
        (compiled.adaptive(odd), nn.AdaptiveAvgPool2d((2, 3))(odd)),
        (compiled.nearest(x), nn.Upsample(scale_factor=2, mode="nearest")(x)),
        (compiled.bilinear(x), nn.Upsample(size=(5, 7), mode="bilinear", align_corners=False)(x)),
        (compiled.linear_1d(x[:, :, 0]), nn.Upsample(scale_factor=3, mode="linear", align_corners=False)(x[:, :, 0])),
    ]
    conv = nn.Conv1d(4, 6, 3, padding=1, groups=2)
    signal = torch.randn(2, 4, 10, generator=generator)
    cases.append((compiled.grouped(signal, conv.weight), conv._conv_forward(signal, conv.weight, None)))
    for got, expected in cases:
        torch.testing.assert_close(got, expected)


GENERIC_FRONTEND = """
## Whisper's two convolutions with the frames generic: 2t frames in, t out ((2t - 1) / 2 + 1, rounded down).
export fn frontend(mel: [b 16 2t], w1: [32 16 3], w2: [32 32 3]) -> [b 32 t]:
    h = gelu(conv1d(mel, w1, padding=1))
    return gelu(conv1d(h, w2, stride=2, padding=1))
"""


def test_generic_sizes_export_as_torch_computes_them(tmp_path):
    """torch.export traces the strided convolution symbolically and agrees with the checker that 2t
    frames give t: the .pt2 accepts every even length and returns half of it."""
    source = tmp_path / "frontend.ss"
    source.write_text(GENERIC_FRONTEND)
    result = export_pt2(source, tmp_path / "frontend.pt2")
    assert result.returncode == 0, result.stderr
    program = torch.export.load(str(tmp_path / "frontend.pt2")).module()
    w1, w2 = torch.randn(32, 16, 3), torch.randn(32, 32, 3)
    for frames in (2, 22, 48):
        mel = torch.randn(2, 16, frames)
        expected = torch.nn.functional.gelu(torch.nn.functional.conv1d(
            torch.nn.functional.gelu(torch.nn.functional.conv1d(mel, w1, padding=1)), w2, stride=2, padding=1))
        torch.testing.assert_close(program(mel, w1, w2), expected)
        assert expected.shape[-1] == frames // 2

"""scaled_dot_product_attention's `softcap=`, `sinks=` and `bias=`: the compiled forward computes what
transformers' own attention functions compute (Gemma 2's softcap, gpt-oss's sinks), and a Hugging Face
folder hands softcap and sinks to transformers' attention interface as those classes do (`softcap=`,
`s_aux=self.sinks`), where vLLM's Transformers backend finds them."""
from __future__ import annotations

import json
import sys
import types

import pytest
import torch

from conftest import ROOT, cli, model_class, unit_scale_weights

sys.path.insert(0, str(ROOT / "python"))
import shapescript  # noqa: E402

ATTEND = """\
dim H   = 4
dim Hkv = 2

fn capped(q: [b H n e], k: [b Hkv n e], v: [b Hkv n e]) -> [b H n e]:
    return scaled_dot_product_attention(q, k, v, attn_mask=causal[n n], softcap=0.5)

fn sunk(q: [b H n e], k: [b Hkv n e], v: [b Hkv n e], s: [H]) -> [b H n e]:
    return scaled_dot_product_attention(q, k, v, attn_mask=causal[n n], sinks=s)

fn biased(q: [b H n e], k: [b Hkv n e], v: [b Hkv n e], a: [H 1 n]) -> [b H n e]:
    return scaled_dot_product_attention(q, k, v, attn_mask=causal[n n], bias=a)
"""


@pytest.fixture(scope="module")
def attend(tmp_path_factory):
    path = tmp_path_factory.mktemp("attend") / "attend.ss"
    path.write_text(ATTEND)
    return shapescript.compile(path)


def inputs(seed=0, n=6, e=8):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(2, 4, n, e, generator=g), torch.randn(2, 2, n, e, generator=g), torch.randn(2, 2, n, e, generator=g))


def transformers_attention(function, q, k, v, **kwargs):
    """One of transformers' eager attention functions on a causal mask: [b H n e], as ours returns."""
    module = torch.nn.Module().eval()
    module.num_key_value_groups = q.shape[1] // k.shape[1]
    module.sinks = kwargs.pop("sinks", None)
    n = q.shape[-2]
    mask = torch.zeros(n, n).masked_fill(torch.ones(n, n, dtype=torch.bool).tril().logical_not(), float("-inf"))
    out, _ = function(module, q, k, v, mask.view(1, 1, n, n), scaling=q.shape[-1] ** -0.5, **kwargs)
    return out.transpose(1, 2)


def test_softcap_is_gemma2s(attend):
    from transformers.models.gemma2.modeling_gemma2 import eager_attention_forward

    q, k, v = inputs()
    q = q * 4  # scores well past the cap, so capping changes them
    expected = transformers_attention(eager_attention_forward, q, k, v, softcap=0.5)
    torch.testing.assert_close(attend.capped(q, k, v), expected, rtol=1e-5, atol=1e-5)
    uncapped = transformers_attention(eager_attention_forward, q, k, v)
    assert (attend.capped(q, k, v) - uncapped).abs().max() > 1e-2


def test_sinks_are_gpt_oss(attend):
    from transformers.models.gpt_oss.modeling_gpt_oss import eager_attention_forward

    q, k, v = inputs(1)
    sinks = torch.tensor([0.5, -1.0, 2.0, 0.0])
    expected = transformers_attention(eager_attention_forward, q, k, v, sinks=sinks)
    torch.testing.assert_close(attend.sunk(q, k, v, sinks), expected, rtol=1e-5, atol=1e-5)
    # Each head's weights sum to less than one: the sink took the rest.
    plain = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
    assert (attend.sunk(q, k, v, sinks) - plain).abs().max() > 1e-2


def test_bias_is_added_to_the_scores(attend):
    """ALiBi's form, a bias per head and key: what BLOOM adds (examples/bloom.ss is checked against
    BloomForCausalLM in test_model_zoo)."""
    q, k, v = inputs(2)
    bias = torch.randn(4, 1, 6, generator=torch.Generator().manual_seed(3))
    keys, values = k.repeat_interleave(2, dim=1), v.repeat_interleave(2, dim=1)
    scores = q @ keys.transpose(-1, -2) / 8 ** 0.5 + bias
    scores = scores.masked_fill(torch.ones(6, 6, dtype=torch.bool).tril().logical_not(), float("-inf"))
    torch.testing.assert_close(attend.biased(q, k, v, bias), scores.softmax(-1) @ values, rtol=1e-5, atol=1e-5)


LM = """\
dim D   = 64
dim H   = 4
dim Hkv = 2
dim Dh  = D / H
dim Dkv = Hkv * Dh
dim V   = 64
dim L   = 2

model Sunk:
    param wte:   [V D]     = normal(std=0.02)
    param wq:    [L D D]   = normal(std=0.02)
    param wk:    [L Dkv D] = normal(std=0.02)
    param wv:    [L Dkv D] = normal(std=0.02)
    param wo:    [L D D]   = normal(std=0.02)
    param sinks: [L H]     = zeros
    param norm:  [L D]     = ones

fn attention(x: [b n D], wq: [D D], wk: [Dkv D], wv: [Dkv D], wo: [D D], sinks: [H]) -> [b n D]:
    q = linear(x, wq) |> rearrange(b n (H Dh) -> b H n Dh)
    k = linear(x, wk) |> rearrange(b n (Hkv Dh) -> b Hkv n Dh)
    v = linear(x, wv) |> rearrange(b n (Hkv Dh) -> b Hkv n Dh)
    return scaled_dot_product_attention(q, k, v, attn_mask=causal[n n], softcap=20.0, sinks=sinks)
        |> rearrange(b H n Dh -> b n (H Dh))
        |> linear(wo)

fn forward(m: Sunk, ids: [b n] Index[V]) -> [b n V] Logit over V:
    x = embedding(ids, m.wte)
    for l in 0..L:
        h = rms_norm(x, over=D, weight=m.norm[l])
        x = x + attention(h, m.wq[l], m.wk[l], m.wv[l], m.wo[l], m.sinks[l])
    return linear(x, m.wte)
"""


def test_hf_folder_hands_softcap_and_sinks_to_the_attention_interface(tmp_path):
    import transformers

    (tmp_path / "sunk.ss").write_text(LM)
    compiled = shapescript.compile(tmp_path / "sunk.ss")
    reference = model_class(compiled)()
    reference.load_state_dict(unit_scale_weights(reference.state_dict(), seed=4, is_norm=lambda k, v: k == "norm"))
    torch.save(reference.state_dict(), tmp_path / "ckpt.pt")
    result = cli("export", "sunk.ss", "--hf", "folder", "--weights", "ckpt.pt", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "vLLM can serve it" in result.stdout, result.stdout
    folder = tmp_path / "folder"
    config = json.loads((folder / "config.json").read_text())
    assert config["attn_logit_softcapping"] == 20.0
    modeling = (folder / "modeling_shapescript.py").read_text()
    # vLLM's backend reads the sinks from the call's `s_aux=self.<parameter>`; sdpa has neither option.
    assert "softcap=20.0, s_aux=self.sinks" in modeling and "_supports_sdpa = False" in modeling
    model = transformers.AutoModelForCausalLM.from_pretrained(str(folder), trust_remote_code=True, dtype=torch.float32).eval()
    assert model.config._attn_implementation == "eager"
    ids = torch.randint(0, 64, (2, 10), generator=torch.Generator().manual_seed(5))
    with torch.no_grad():
        expected = compiled.forward(reference, ids)
        torch.testing.assert_close(model(input_ids=ids).logits, expected, rtol=1e-4, atol=1e-4)
        # With the key-value cache: the same greedy tokens as the compiled forward run on the whole sequence.
        tokens = model.generate(ids[:1, :4], max_new_tokens=4, do_sample=False)
        sequence = ids[:1, :4]
        for _ in range(4):
            sequence = torch.cat([sequence, compiled.forward(reference, sequence)[:, -1:].argmax(-1)], dim=1)
        assert tokens.tolist() == sequence.tolist()


def test_hf_folder_adds_a_bias_itself_and_says_vllm_cant(tmp_path):
    """examples/bloom.ss's ALiBi (`bias=`): the folder computes it in its own code, equal to the
    compiled forward, without a key-value cache, and says why vLLM can't serve it (E3308)."""
    import transformers

    from conftest import EXAMPLES

    compiled = shapescript.compile(EXAMPLES / "bloom.ss")
    reference = model_class(compiled)()
    reference.load_state_dict(unit_scale_weights(reference.state_dict(), seed=6))
    torch.save(reference.state_dict(), tmp_path / "ckpt.pt")
    result = cli("export", EXAMPLES / "bloom.ss", "--hf", "folder", "--weights", "ckpt.pt", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "vLLM can't serve it: its attention adds `bias=alibi` to the scores" in result.stdout, result.stdout
    model = transformers.AutoModelForCausalLM.from_pretrained(str(tmp_path / "folder"), trust_remote_code=True, dtype=torch.float32).eval()
    ids = torch.randint(0, 128, (2, 10), generator=torch.Generator().manual_seed(7))
    with torch.no_grad():
        expected = compiled.forward(reference, ids, torch.arange(10).expand(2, 10))
        torch.testing.assert_close(model(input_ids=ids).logits, expected, rtol=1e-4, atol=1e-4)

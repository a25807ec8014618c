"""`shapescript export FILE --fn forward [--weights ckpt.pt]`: a model's forward as a .pt2 program
that holds the model's parameters, as torch.export holds an nn.Module's."""
import pytest
import torch

import shapescript
from conftest import EXAMPLES, cli as run, unit_scale_weights


@pytest.mark.parametrize("example, model_name, vocab", [("llama.ss", "Llama", 512), ("gpt2.ss", "Gpt2", 500)])
def test_a_model_forward_exports_with_its_weights_and_dynamic_batch_and_length(tmp_path, example, model_name, vocab):
    compiled = shapescript.compile(EXAMPLES / example)
    weights = unit_scale_weights(getattr(compiled, model_name)().state_dict(), seed=1)
    torch.save(weights, tmp_path / "ckpt.pt")
    result = run("export", str(EXAMPLES / example), "--fn", "forward", "-o", "lm.pt2", "--weights", "ckpt.pt", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "wrote lm.pt2: `forward`, dynamic ids[0] = b, ids[1] = n, pos[0] = b, pos[1] = n\n"
    program = torch.export.load(str(tmp_path / "lm.pt2"))
    held = {k.removeprefix("model."): v for k, v in program.state_dict.items()}
    assert held.keys() == weights.keys() and all(torch.equal(held[k], weights[k]) for k in weights)
    model = getattr(compiled, model_name)()
    model.load_state_dict(weights)
    for b, n in [(1, 9), (3, 4)]:
        ids = torch.randint(0, vocab, (b, n))
        pos = torch.arange(n).expand(b, n)
        with torch.no_grad():
            torch.testing.assert_close(program.module()(ids, pos), compiled.forward(model, ids, pos), rtol=1e-5, atol=1e-5)


def test_the_export_rules_apply_to_a_model_forward(tmp_path):
    (tmp_path / "m.ss").write_text(
        "import python torch\n\ndim D = 4\n\nmodel M:\n    param w: [D D] = normal(std=0.02)\n\n"
        "fn forward(m: M, x: [b D]) -> [b D]:\n    return linear(x, m.w) + (torch.load(\"w.pt\") as [b D])\n")
    assert run("check", "m.ss", cwd=tmp_path).returncode == 0  # not exported: Python is allowed
    result = run("export", "m.ss", "--fn", "forward", cwd=tmp_path)
    assert result.returncode == 1 and "error[E1701]: `torch.load` is Python" in result.stderr
    assert not (tmp_path / "forward.pt2").exists()


def test_weights_need_a_model(tmp_path):
    result = run("export", str(EXAMPLES / "patches.ss"), "--weights", "ckpt.pt", cwd=tmp_path)
    assert (result.returncode, result.stderr) == (2, "error: --weights gives a model's parameters, but `patchify` takes no model\n")
    with pytest.raises(shapescript.ShapeScriptError, match="takes no model"):
        shapescript.export(EXAMPLES / "patches.ss", "patchify", tmp_path / "p.pt2", weights=tmp_path / "ckpt.pt")


def test_from_python_with_the_initializers(tmp_path):
    ep = shapescript.export(EXAMPLES / "tiny_llama.ss", "forward", tmp_path / "tiny.pt2")
    ids = torch.randint(0, 500, (2, 6))
    assert ep.module()(ids, torch.arange(6).expand(2, 6)).shape == (2, 6, 500)
    assert ep.state_dict["model.w_gate"].shape == (2, 256, 64)
    assert torch.equal(ep.state_dict["model.ffn_norm"], torch.ones(2, 64)) and torch.equal(ep.state_dict["model.final"], torch.ones(64))
    assert 0.015 < float(ep.state_dict["model.wte"].std()) < 0.025  # normal(std=0.02)

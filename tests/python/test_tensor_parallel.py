"""The tensor-parallel plan `--hf` writes (base_model_tp_plan), run for real: two processes, each
holding half of every "colwise" linear's output rows and half of every "rowwise" linear's input
columns, summing the rowwise outputs with torch.distributed (gloo, on loopback), as vLLM's
ColumnParallelLinear and RowParallelLinear do. Their logits must be the unsplit model's."""
import json
import subprocess
import sys
import textwrap

import pytest
import torch

from conftest import EXAMPLES, cli, unit_scale_weights

WORKER = textwrap.dedent('''
    import fnmatch, os, sys
    import torch, torch.distributed as dist
    from transformers import AutoModelForCausalLM
    folder, out, rank, world, store = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
    dist.init_process_group("gloo", init_method=f"file://{store}", rank=rank, world_size=world)
    model = AutoModelForCausalLM.from_pretrained(folder, trust_remote_code=True, dtype=torch.float32).eval()
    split = 0
    for pattern, style in model.config.base_model_tp_plan.items():
        for name, module in model.model.named_modules():
            if not (fnmatch.fnmatch(name, pattern) and isinstance(module, torch.nn.Linear)) or style == "replicate":
                continue
            split += 1
            with torch.no_grad():
                if style == "colwise":   # this process's output rows (its heads, its features)
                    module.weight = torch.nn.Parameter(module.weight.chunk(world, 0)[rank].clone())
                    if module.bias is not None:
                        module.bias = torch.nn.Parameter(module.bias.chunk(world, 0)[rank].clone())
                else:                    # rowwise: its input columns; the partial outputs are summed
                    module.weight = torch.nn.Parameter(module.weight.chunk(world, 1)[rank].clone())
                    bias, module.bias = module.bias, None
                    def reduce(mod, args, output, bias=bias):
                        dist.all_reduce(output)
                        return output if bias is None else output + bias
                    module.register_forward_hook(reduce)
    ids = torch.arange(2 * 9).reshape(2, 9) % model.config.vocab_size
    with torch.no_grad():
        logits = model(input_ids=ids).logits
    if rank == 0:
        torch.save({"logits": logits, "split": split}, out)
    dist.destroy_process_group()
''')


@pytest.mark.parametrize("example, split", [("llama.ss", 14), ("tiny_llama.ss", 14)])
def test_the_plan_splits_heads_and_features_across_two_processes(tmp_path, example, split):
    result = cli("export", EXAMPLES / example, "--hf", "hf", "--vllm", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(str(tmp_path / "hf"), trust_remote_code=True, dtype=torch.float32).eval()
    model.load_state_dict(unit_scale_weights(dict(model.named_parameters()), seed=0), strict=False)  # so that every part matters
    model.save_pretrained(str(tmp_path / "hf"))
    ids = torch.arange(2 * 9).reshape(2, 9) % model.config.vocab_size
    with torch.no_grad():
        whole = model(input_ids=ids).logits
    (tmp_path / "worker.py").write_text(WORKER)
    store = str(tmp_path / "store")  # a file the two processes meet at: no port to race for
    workers = [subprocess.Popen([sys.executable, str(tmp_path / "worker.py"), str(tmp_path / "hf"), str(tmp_path / "out.pt"), str(r), "2", store],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for r in range(2)]
    try:
        for w in workers:
            _, err = w.communicate(timeout=300)
            assert w.returncode == 0, err
    finally:
        for w in workers:
            w.kill()  # one failed: the other would wait for it
    got = torch.load(tmp_path / "out.pt", weights_only=True)
    assert got["split"] == split  # every linear of both blocks is split, none replicated
    torch.testing.assert_close(got["logits"], whole, rtol=1e-5, atol=1e-5)


def test_a_fused_projection_is_replicated(tmp_path):
    result = cli("export", EXAMPLES / "tiny_sdpa.ss", "--hf", "hf", "--vllm", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    config = json.loads((tmp_path / "hf" / "config.json").read_text())
    source = (tmp_path / "hf" / "configuration_shapescript.py").read_text()
    # `split(b n (3 H Dh) -> ...)` of one projection: a device holding rows of q, k and v alike can't split heads.
    assert '"layers.*.attention.w_qkv": "replicate"' in source and config["num_attention_heads"] == 4

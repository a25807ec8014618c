"""`shapescript run FILE --nproc-per-node N`: examples/train_tiny.ss trained by two processes under
torchrun (gloo, FSDP2) learns what one process learns from the same global batch, step for step;
its sharded checkpoint (DCP) continues at another number of processes and is what --weights reads;
Ctrl-C stops every rank at one step with a whole checkpoint; two "machines" on 127.0.0.1 meet.

Each run is a few dozen steps of a tiny model; the runs are shared by the module's tests."""
import json
import os
import random
import signal
import subprocess
import sys
import time

import pytest
import torch

from conftest import BIN, EXAMPLES, ROOT, cli, cli_env, free_port

sys.path.insert(0, str(ROOT / "python" / "shapescript" / "runtime"))
import distributed  # noqa: E402 - the runtime's reader of sharded checkpoints

STEPS = 24  # a straight run; the halves stop at 12 and are resumed to 24


def training_text(words=4000):
    """English-like text from a fixed seed, the same in every run: the curves compared across runs
    and numbers of processes must not move when the project's docs are edited (the example trains on
    docs/language.md, and an edit there once pushed a resumed curve past its tolerance)."""
    vocabulary = ("the a model learns each axis of a tensor shape size name type checks export weight layer "
                  "attention head token sequence batch step loss gradient process shard checkpoint").split()
    rng = random.Random(24)
    sentences = []
    while sum(len(s) for s in sentences) < words:
        sentences.append([rng.choice(vocabulary) for _ in range(rng.randint(4, 12))])
    return "\n".join(" ".join(s).capitalize() + "." for s in sentences) + "\n"


def program(folder, steps, batch=4, length=32):
    folder.mkdir(parents=True, exist_ok=True)
    source = (ROOT / "examples" / "train_tiny.ss").read_text()
    (folder / "training.txt").write_text(training_text())
    replaced = source.replace('"../docs/language.md"', '"training.txt"')
    assert replaced != source, "examples/train_tiny.ss no longer trains on ../docs/language.md"
    for name, value in {"S": steps, "B": batch, "T": length}.items():
        line = next(l for l in replaced.splitlines() if l.startswith(f"dim {name} "))
        replaced = replaced.replace(line, f"dim {name}  = {value}")
    (folder / "train_tiny.ss").write_text(replaced)
    return folder


def losses(folder):
    return [json.loads(line) for line in (folder / "train_tiny.log.jsonl").read_text().splitlines()]


def train(folder, *flags):
    result = cli("run", "train_tiny.ss", *flags, cwd=folder, timeout=300)
    assert result.returncode == 0, result.stderr
    return result


def assert_same_curve(got, expected):
    assert [e["step"] for e in got] == [e["step"] for e in expected]
    torch.testing.assert_close([e["loss"] for e in got], [e["loss"] for e in expected], rtol=1e-5, atol=1e-5)


def assert_resumed_curve(got, expected):
    """A run resumed from two processes' checkpoint: the weights, step and data position it restores
    give its first loss, which must agree as closely as two processes' steps agree with one's (1e-5).
    After it, the two processes' float sums, in another order than one process's, differ by about
    1e-7, which a dozen more steps of Adam grew to 1e-4 (2026-12-07, on a changed training text):
    the rest of the curve must agree to 1e-3."""
    assert [e["step"] for e in got] == [e["step"] for e in expected]
    torch.testing.assert_close(got[0]["loss"], expected[0]["loss"], rtol=1e-5, atol=1e-5)
    torch.testing.assert_close([e["loss"] for e in got], [e["loss"] for e in expected], rtol=1e-3, atol=1e-3)


@pytest.fixture(scope="module")
def one(tmp_path_factory):
    """One process, 24 steps straight: the curve every other run must follow."""
    folder = program(tmp_path_factory.mktemp("one"), STEPS)
    train(folder)
    return folder


@pytest.fixture(scope="module")
def two_half(tmp_path_factory):
    """Two processes, the first 12 steps; its last checkpoint is a folder of shards."""
    folder = program(tmp_path_factory.mktemp("two"), STEPS // 2)
    result = train(folder, "--nproc-per-node", "2")
    assert "under torchrun (2 processes per node)" in result.stderr
    return folder


def test_two_processes_train_as_one_on_the_same_global_batch(one, two_half):
    logged = losses(two_half)
    assert_same_curve(logged, losses(one)[:STEPS // 2])
    assert logged[-1]["loss"] < logged[0]["loss"] - 1.0  # it learns
    shards = sorted(p.name for p in (two_half / "tiny.pt").iterdir())
    assert shards == [".metadata", "__0_0.distcp", "__1_0.distcp"]  # each rank wrote its own
    assert not [p for p in two_half.iterdir() if p.name.startswith(".")]  # nothing partial left


def test_the_sharded_checkpoint_is_what_weights_reads(two_half):
    exported = cli("export", "train_tiny.ss", "--hf", "tiny_hf", "--weights", "tiny.pt", cwd=two_half)
    assert exported.returncode == 0, exported.stderr
    from safetensors.torch import load_file

    saved = distributed.read_folder(str(two_half / "tiny.pt"))
    assert saved["shapescript_run"]["step"] == STEPS // 2 and saved["shapescript_run"]["world_size"] == 2
    folder = load_file(str(two_half / "tiny_hf" / "model.safetensors"))
    assert torch.equal(folder["model.embed_tokens.weight"], saved["state_dict"]["wte"])


def test_resuming_two_processes_on_one_continues_the_same_curve(one, two_half, tmp_path):
    folder = program(tmp_path, STEPS)
    result = train(folder, "--resume", str(two_half / "tiny.pt"))
    assert f"resuming at step {STEPS // 2} of {STEPS}" in result.stderr
    assert_resumed_curve(losses(folder), losses(one)[STEPS // 2:])


def test_resuming_two_processes_on_one_under_torchrun_reads_each_rank_its_shards(one, two_half, tmp_path):
    """DCP's resharding: the shards of two ranks read into the one rank's shards, not read whole."""
    folder = program(tmp_path, STEPS)
    result = train(folder, "--nproc-per-node", "1", "--resume", str(two_half / "tiny.pt"))
    assert f"resuming at step {STEPS // 2} of {STEPS}" in result.stderr
    assert_resumed_curve(losses(folder), losses(one)[STEPS // 2:])


def test_resuming_one_process_on_two_continues_the_same_curve(one, tmp_path):
    half = program(tmp_path / "half", STEPS // 2)
    train(half)  # its tiny.pt: one file, as one process writes it
    folder = program(tmp_path / "resumed", STEPS)
    result = train(folder, "--nproc-per-node", "2", "--resume", str(half / "tiny.pt"))
    assert f"resuming at step {STEPS // 2} of {STEPS}" in result.stderr
    assert_same_curve(losses(folder), losses(one)[STEPS // 2:])


def test_ctrl_c_stops_every_rank_at_one_step_with_a_whole_checkpoint(one, tmp_path):
    program(tmp_path, 10_000)
    process = subprocess.Popen([BIN, "run", "train_tiny.ss", "--nproc-per-node", "2"], cwd=tmp_path, env=cli_env(),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    log = tmp_path / "train_tiny.log.jsonl"
    try:
        deadline = time.time() + 240
        while not (log.exists() and len(log.read_text().splitlines()) >= 3):
            assert process.poll() is None and time.time() < deadline, process.communicate()
            time.sleep(0.01)
        os.killpg(process.pid, signal.SIGINT)  # Ctrl-C, as a terminal sends it to the foreground process group
        _, stderr = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
    assert process.returncode == 130, stderr
    saved = distributed.read_folder(str(tmp_path / "train_tiny.ckpt"))
    stopped = saved["shapescript_run"]["step"]
    assert 3 <= stopped < 10_000
    assert (f"saved step {stopped} to train_tiny.ckpt; continue with "
            f"`shapescript run train_tiny.ss --nproc-per-node 2 --resume train_tiny.ckpt`") in stderr
    logged = losses(tmp_path)
    assert [e["step"] for e in logged] == list(range(stopped))  # both ranks stopped after the same step
    assert_same_curve(logged[:STEPS], losses(one)[:min(stopped, STEPS)])


def test_two_nodes_on_one_machine_meet_and_train(one, tmp_path):
    program(tmp_path, STEPS // 2)
    endpoint = f"127.0.0.1:{free_port()}"
    nodes = [subprocess.Popen([BIN, "run", "train_tiny.ss", "--nproc-per-node", "1", "--nnodes", "2", "--node-rank", str(rank),
                               "--rdzv-endpoint", endpoint], cwd=tmp_path, env=cli_env(), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for rank in (0, 1)]
    try:
        outputs = [node.communicate(timeout=240) for node in nodes]
    finally:
        for node in nodes:
            if node.poll() is None:
                node.kill()
                node.communicate()
    for node, (_, stderr) in zip(nodes, outputs):
        assert node.returncode == 0, stderr
    assert "under torchrun (1 process per node, 2 nodes)" in outputs[0][1]
    assert_same_curve(losses(tmp_path), losses(one)[:STEPS // 2])


def ranks_of(folder):
    """The pids of the ranks torchrun started in `folder`, by rank."""
    ranks = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if os.readlink(f"/proc/{pid}/cwd") != str(folder):
                continue
            environ = dict(v.split("=", 1) for v in open(f"/proc/{pid}/environ").read().split("\0") if "=" in v)
        except OSError:  # gone, or not ours to read
            continue
        if "TORCHELASTIC_RUN_ID" in environ and "RANK" in environ and "LOCAL_RANK" in environ:
            ranks[int(environ["RANK"])] = int(pid)
    return ranks


def test_a_lost_rank_stops_the_run_and_is_named(tmp_path):
    program(tmp_path, 10_000)
    process = subprocess.Popen([BIN, "run", "train_tiny.ss", "--nproc-per-node", "2"], cwd=tmp_path, env=cli_env(),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    log = tmp_path / "train_tiny.log.jsonl"
    try:
        deadline = time.time() + 240
        while not (log.exists() and len(log.read_text().splitlines()) >= 3):
            assert process.poll() is None and time.time() < deadline, process.communicate()
            time.sleep(0.01)
        ranks = ranks_of(tmp_path)
        assert sorted(ranks) == [0, 1], ranks
        os.kill(ranks[1], signal.SIGKILL)  # a machine lost, as far as rank 1 goes
        _, stderr = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
    assert process.returncode == 1, stderr
    assert f"error: rank 1 (local rank 1, pid {ranks[1]}) was killed by signal 9 (SIGKILL)" in stderr.splitlines()
    assert not ranks_of(tmp_path)  # rank 0 did not outlive it
    assert not (tmp_path / "train_tiny.ckpt").exists()  # no checkpoint rather than half of one


SHARDING = """
import sys, torch, torch.distributed as dist
from torch import nn
from torch.distributed.fsdp import FSDPModule
sys.path.insert(0, sys.argv[1])
import distributed

class Block(nn.Module):
    def __init__(self, shared=None):
        super().__init__()
        self.w = nn.Parameter(torch.ones(4, 4))
        self.shared = shared  # a parameter tied to the root's

class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.wte = nn.Parameter(torch.ones(8, 4))
        self.blocks = nn.ModuleList([Block(), Block(), Block(self.wte)])

dist.init_process_group("gloo")
model = Model()
distributed.shard(model)
print(dist.get_rank(), [isinstance(b, FSDPModule) for b in model.blocks], isinstance(model, FSDPModule),
      model.wte.to_local().shape[0], flush=True)
dist.destroy_process_group()
"""


def test_each_block_is_its_own_group_and_a_tied_parameter_stays_in_the_roots(tmp_path):
    (tmp_path / "sharding.py").write_text(SHARDING)
    result = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", "2", "--standalone",
                             str(tmp_path / "sharding.py"), str(ROOT / "python" / "shapescript" / "runtime")],
                            capture_output=True, text=True, timeout=300, env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert result.returncode == 0, result.stderr
    # one parameter, one group: the block holding the root's `wte` is left to the root's group
    assert sorted(result.stdout.splitlines()) == ["0 [True, True, False] True 4", "1 [True, True, False] True 4"]


# --- tensor parallelism: the folder's base_model_tp_plan, read by transformers ------------------

TENSOR_PARALLEL = """
import json, sys, torch, torch.distributed as dist
from torch.distributed.tensor import DTensor
from transformers import AutoModelForCausalLM
folder, ids = sys.argv[1], torch.tensor(json.loads(sys.argv[2]))
dist.init_process_group("gloo")
model = AutoModelForCausalLM.from_pretrained(folder, trust_remote_code=True, tp_plan="auto", dtype=torch.float32)
with torch.no_grad():
    logits = model(input_ids=ids).logits
# Each weight the plan splits: its placement and the rows this rank holds.
shards = {name: [str(p.placements[0]), list(p.to_local().shape)] for name, p in model.named_parameters() if isinstance(p, DTensor)}
if dist.get_rank() == 0:
    torch.save({"logits": logits.full_tensor() if isinstance(logits, DTensor) else logits, "shards": shards}, folder + ".tp.pt")
dist.destroy_process_group()
"""


def test_transformers_runs_the_folder_tensor_parallel_over_two_processes_with_one_process_logits(tmp_path):
    folder = tmp_path / "gqa_hf"
    result = cli("export", EXAMPLES / "llama_gqa.ss", "--hf", folder, "--tp", "2")
    assert result.returncode == 0, result.stderr
    refused = cli("export", EXAMPLES / "llama_gqa.ss", "--hf", tmp_path / "four", "--tp", "4")
    assert refused.returncode == 1 and "error[E3310]: 2 key/value heads don't split evenly over 4 devices" in refused.stderr
    assert not (tmp_path / "four").exists()

    ids = torch.randint(0, 512, (2, 11), generator=torch.Generator().manual_seed(0))
    (tmp_path / "tp.py").write_text(TENSOR_PARALLEL)
    ran = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", "2", "--standalone", str(tmp_path / "tp.py"),
                          str(folder), json.dumps(ids.tolist())],
                         capture_output=True, text=True, timeout=300, env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert ran.returncode == 0, ran.stderr[-3000:]
    got = torch.load(str(folder) + ".tp.pt")
    # The plan's q/k/v and gate/up split by rows, o and down by columns: half of each on each rank.
    config = json.loads((folder / "config.json").read_text())
    D, F = config["hidden_size"], config["dims"]["F"]
    shards = got["shards"]
    assert shards["model.layers.0.attention.wq.weight"] == ["S(0)", [D // 2, D]]
    assert shards["model.layers.0.attention.wk.weight"] == ["S(0)", [config["dims"]["Dkv"] // 2, D]]
    assert shards["model.layers.1.attention.wo.weight"] == ["S(1)", [D, D // 2]]
    assert shards["model.layers.1.feed_forward.w_down.weight"] == ["S(1)", [D, F // 2]]

    from transformers import AutoModelForCausalLM
    model = AutoModelForCausalLM.from_pretrained(folder, trust_remote_code=True, dtype=torch.float32)
    with torch.no_grad():
        expected = model(input_ids=ids).logits
    torch.testing.assert_close(got["logits"], expected, rtol=1e-5, atol=1e-5)

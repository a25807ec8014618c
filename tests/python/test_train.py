"""`shapescript run FILE`: the training half of the language, run for real on a few steps of
examples/train_tiny.ss: the loss falls, the checkpoint is what --weights reads, and Ctrl-C saves a
run that --resume continues from the same step to the same weights."""
import json
import os
import signal
import subprocess
import time

import torch

from conftest import BIN, ROOT, cli, cli_env


def program(tmp_path, steps, batch=4, length=32):
    source = (ROOT / "examples" / "train_tiny.ss").read_text()
    replaced = source.replace('"../docs/language.md"', json.dumps(str(ROOT / "docs" / "language.md")))
    for name, value in {"S": steps, "B": batch, "T": length}.items():
        line = next(l for l in replaced.splitlines() if l.startswith(f"dim {name} "))
        replaced = replaced.replace(line, f"dim {name}  = {value}")
    path = tmp_path / "train_tiny.ss"
    path.write_text(replaced)
    return path


def run(args, cwd, **kwargs):
    return cli(*args, cwd=cwd, **kwargs)


def start_run(cwd):
    """`shapescript run train_tiny.ss` in a process group of its own, for Ctrl-C: a terminal sends
    it to the whole foreground process group, the CLI and its Python."""
    # SIGINT as a terminal's job has it: a shell without job control starts background jobs (pytest
    # run with `&`) with SIGINT ignored, which the CLI leaves ignored and doesn't pass on.
    return subprocess.Popen([BIN, "run", "train_tiny.ss"], cwd=cwd, env=cli_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


def losses(log):
    return [json.loads(line) for line in log.read_text().splitlines()]


def test_a_few_steps_lower_the_loss_and_the_checkpoint_is_what_weights_reads(tmp_path):
    program(tmp_path, steps=40)
    result = run(["run", "train_tiny.ss"], tmp_path)
    assert result.returncode == 0, result.stderr
    assert "step 40/40 [####################]  loss " in result.stderr and "tokens/s; loss " in result.stderr
    logged = losses(tmp_path / "train_tiny.log.jsonl")
    assert [entry["step"] for entry in logged] == list(range(40))
    first, last = logged[0]["loss"], sum(e["loss"] for e in logged[-5:]) / 5
    assert first > 6.0 and last < first - 2.0, (first, last)  # from ln(500) to well below
    saved = torch.load(tmp_path / "tiny.pt", weights_only=True)
    assert set(saved["state_dict"]) == {"wte", "w_qkv", "w_o", "norm"}
    assert saved["shapescript_run"]["step"] == 40
    exported = run(["export", "train_tiny.ss", "--hf", "tiny_hf", "--vllm", "--weights", "tiny.pt"], tmp_path)
    assert exported.returncode == 0, exported.stderr
    from safetensors.torch import load_file

    folder = load_file(str(tmp_path / "tiny_hf" / "model.safetensors"))
    assert torch.equal(folder["model.embed_tokens.weight"], saved["state_dict"]["wte"])


def test_ctrl_c_saves_the_run_and_resume_continues_from_the_same_step_to_the_same_weights(tmp_path):
    straight, interrupted = tmp_path / "straight", tmp_path / "interrupted"
    straight.mkdir(), interrupted.mkdir()
    program(straight, steps=200)
    program(interrupted, steps=200)
    assert run(["run", "train_tiny.ss"], straight).returncode == 0

    process = start_run(interrupted)
    log = interrupted / "train_tiny.log.jsonl"
    deadline = time.time() + 120
    while not (log.exists() and len(log.read_text().splitlines()) >= 3):
        assert process.poll() is None and time.time() < deadline, process.communicate()
        time.sleep(0.005)
    os.killpg(process.pid, signal.SIGINT)
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 130, stderr
    saved = torch.load(interrupted / "train_tiny.ckpt.pt", weights_only=True)
    stopped = saved["shapescript_run"]["step"]
    assert 3 <= stopped < 200
    assert f"saved step {stopped} to train_tiny.ckpt.pt; continue with `shapescript run train_tiny.ss --resume train_tiny.ckpt.pt`" in stderr
    assert not (interrupted / "tiny.pt").exists()  # main stopped at the end of a step, before its save

    resumed = run(["run", "train_tiny.ss", "--resume", "train_tiny.ckpt.pt"], interrupted)
    assert resumed.returncode == 0, resumed.stderr
    assert f"resuming at step {stopped} of 200" in resumed.stderr
    steps = [entry["step"] for entry in losses(log)]
    assert steps == list(range(stopped)) + list(range(stopped, 200))  # each step logged once, in order
    a = torch.load(straight / "tiny.pt", weights_only=True)["state_dict"]
    b = torch.load(interrupted / "tiny.pt", weights_only=True)["state_dict"]
    for name in a:
        torch.testing.assert_close(b[name], a[name], rtol=1e-5, atol=1e-6)


def test_run_errors_say_what_and_where(tmp_path):
    path = program(tmp_path, steps=3)
    path.write_text(path.read_text().replace(json.dumps(str(ROOT / "docs" / "language.md")), '"missing.txt"'))
    result = run(["run", "train_tiny.ss"], tmp_path)
    assert result.returncode == 1
    assert "error: can't read the dataset `missing.txt`: no such file or directory" in result.stderr
    assert result.stderr.rstrip().endswith("exited with exit status: 1")
    path.write_text(path.read_text().replace('"missing.txt"', json.dumps(str(ROOT / "docs" / "language.md")))
                    .replace('save_checkpoint(m, "tiny.pt")', 'save_checkpoint(m, "no/such/folder/tiny.pt")'))
    result = run(["run", "train_tiny.ss"], tmp_path)
    assert result.returncode == 1
    missing = tmp_path / "no/such/folder/tiny.pt"
    assert f"error: can't save the checkpoint `{missing}`: the folder `{missing.parent}` does not exist" in result.stderr.splitlines()
    assert "does not exist (at train_tiny.ss:" not in result.stderr  # a RunError: said plainly, without a line
    result = run(["run", "train_tiny.ss", "--resume", "nothing.pt"], tmp_path)
    assert result.returncode == 1
    assert "error: can't read the checkpoint `nothing.pt`: no such file" in result.stderr
    result = run(["run", "train_tiny.ss", "--fn", "forward"], tmp_path)
    assert (result.returncode, result.stderr) == (2, "error: `forward` takes parameters; `shapescript run` runs a function that takes none, such as `fn main():`\n")


def test_the_trained_model_served_from_its_folder_writes_like_its_training_text(tmp_path):
    program(tmp_path, steps=150, batch=16, length=64)
    assert run(["run", "train_tiny.ss"], tmp_path).returncode == 0
    assert run(["export", "train_tiny.ss", "--hf", "tiny_hf", "--vllm", "--weights", "tiny.pt"], tmp_path).returncode == 0
    import transformers

    text = (ROOT / "docs" / "language.md").read_bytes()
    model = transformers.AutoModelForCausalLM.from_pretrained(str(tmp_path / "tiny_hf"), trust_remote_code=True).eval()
    torch.manual_seed(0)
    prompt = torch.tensor([list(b"The checker ")])
    with torch.no_grad():
        out = model.generate(prompt, max_new_tokens=200, do_sample=True, top_k=10)[0, prompt.shape[1]:].tolist()
    # An untrained Tiny picks among 500 ids; a trained one writes the text's bytes, spaces and letters most.
    in_text = sum(1 for t in out if t < 256 and bytes([t]) in text) / len(out)
    letters = sum(1 for t in out if chr(t).isalpha() or t == ord(" ")) / len(out) if all(t < 256 for t in out) else 0
    assert in_text > 0.95 and letters > 0.6, bytes(t for t in out if t < 256)


def test_ctrl_c_while_it_starts_stops_at_once_and_writes_nothing(tmp_path):
    program(tmp_path, steps=100_000)  # hours of training, were Ctrl-C lost
    process = start_run(tmp_path)
    try:
        assert process.stderr.readline().startswith("running `main` of train_tiny.ss with ")  # said just before Python starts
        time.sleep(0.2)  # Python has started; importing torch takes longer than this
        os.killpg(process.pid, signal.SIGINT)  # Ctrl-C, as a terminal sends it to the foreground process group
        sent = time.monotonic()
        _, stderr = process.communicate(timeout=60)
        took = time.monotonic() - sent
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
    assert process.returncode == 130, stderr
    assert took < 10, f"Ctrl-C took {took:.1f} s to stop it"
    assert stderr.splitlines()[-1] == "interrupted before `main` started: nothing was saved", stderr
    assert "Traceback" not in stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["train_tiny.ss"]  # no checkpoint, no log, nothing partial


def test_training_on_a_tokenizers_ids_saves_it_beside_the_checkpoint_and_the_export_carries_it(tmp_path):
    """`dataset(.., tokenizer="tok.json")`: the text is read as the tokenizer's ids (a byte-level BPE
    trained here), the checker holds V against its size (E0804), the checkpoint gets the tokenizer
    beside it, and `export --hf --weights tiny.pt` carries it: the folder tokenizes as the source."""
    import tokenizers
    import transformers
    from tokenizers import decoders, models, pre_tokenizers, trainers

    text = (ROOT / "docs" / "language.md").read_text()
    trained = tokenizers.Tokenizer(models.BPE())
    trained.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    trained.decoder = decoders.ByteLevel()
    trained.train_from_iterator([text], trainers.BpeTrainer(vocab_size=300, special_tokens=["<|endoftext|>"], show_progress=False,
                                                            initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    trained.save(str(tmp_path / "tok.json"))
    path = program(tmp_path, steps=3)
    path.write_text(path.read_text().replace("dataset(", 'dataset(tokenizer="tok.json", ', 1))

    small = tmp_path / "small.ss"
    small.write_text(path.read_text().replace("dim V  = 500", "dim V  = 256"))
    refused = run(["check", "small.ss"], tmp_path)
    assert refused.returncode == 1 and "error[E0804]: the tokenizer `tok.json` gives ids up to 299, but `vocab=V` is 256" in refused.stdout

    result = run(["run", "train_tiny.ss"], tmp_path)
    assert result.returncode == 0, result.stderr
    assert json.loads((tmp_path / "tiny.tokenizer.json").read_text()) == json.loads((tmp_path / "tok.json").read_text())
    exported = run(["export", "train_tiny.ss", "--hf", "tiny_hf", "--vllm", "--weights", "tiny.pt"], tmp_path)
    assert exported.returncode == 0, exported.stderr
    carried = transformers.AutoTokenizer.from_pretrained(str(tmp_path / "tiny_hf"))
    for probe in ["The checker points at the shapes.", "  dim D = 64\n", "café 中文 😀"]:
        assert carried.encode(probe, add_special_tokens=False) == trained.encode(probe).ids
    # Text in, text out, from the folder alone (test_bring_your_model serves such a folder with vLLM).
    model = transformers.AutoModelForCausalLM.from_pretrained(str(tmp_path / "tiny_hf"), trust_remote_code=True).eval()
    prompt = carried("The checker ", return_tensors="pt", add_special_tokens=False).input_ids
    with torch.no_grad():
        # Rows 300..499 are padding (V is larger than the tokenizer): no token to write.
        written = model.generate(prompt, max_new_tokens=8, do_sample=False, suppress_tokens=list(range(300, 500)))[0, prompt.shape[1]:].tolist()
    assert len(written) == 8 and carried.decode(written) == trained.decode(written)

"""The CLI's files and processes under hostile or unlucky conditions (issue 25): no output replaces
an input, every output appears whole or not at all, file system errors are messages with exit
status 2, and the Python child dies with the CLI, whatever ends it, leaving no temporary folder.

Most tests give the CLI a stand-in for Python (`--python FAKE`): a small script that does what the
test needs (writes part of an output and sleeps, writes nothing) so that timing is deterministic
and no test waits for torch. One test runs two real exports at once.
"""
from __future__ import annotations

import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import BIN, EXAMPLES, PYTHON, cli, cli_env

SOURCE = (EXAMPLES / "patches.ss").read_text()  # the smallest export fn
MODEL = (EXAMPLES / "tiny.ss").read_text()  # the smallest language model's forward


def fake_python(folder: Path, body: str, name: str = "fake_python") -> str:
    """An executable the CLI runs as `FAKE -I SCRIPT SPEC`: `spec` is the spec it was given, `out`
    the output the CLI told it to write; it writes its pid to pid.txt beside itself, then `body`."""
    path = folder / name
    path.write_text(f"#!{PYTHON}\nimport json, os, pathlib, signal, sys, time\n"
                    "spec = json.load(open(sys.argv[3]))\nout = pathlib.Path(spec.get('output') or '/nonexistent')\n"
                    f"pathlib.Path({str(folder / 'pid.txt')!r}).write_text(str(os.getpid()))\n" + body)
    path.chmod(0o755)
    return str(path)


def gone(pid: int) -> bool:
    """Whether process `pid` has ended (a zombie no one has reaped yet has)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return True
    return state in ("Z", "X")


def eventually(condition, seconds: float = 10) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


def as_a_terminal_job() -> None:
    """SIGINT as a terminal's job has it: a shell without job control starts its background jobs
    (pytest run with `&`) with SIGINT ignored, which the CLI, as it should, leaves ignored."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start(args, tmp_path: Path, tmpdir: Path) -> subprocess.Popen:
    """The CLI in a session of its own (as a terminal's job), TMPDIR a fresh folder."""
    tmpdir.mkdir(exist_ok=True)
    return subprocess.Popen([BIN, *map(str, args)], cwd=tmp_path, env=cli_env(TMPDIR=str(tmpdir)), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True, preexec_fn=as_a_terminal_job)


def child_pid(tmp_path: Path, process: subprocess.Popen) -> int:
    pid_file = tmp_path / "pid.txt"
    assert eventually(lambda: pid_file.exists() and pid_file.read_text() or process.poll() is not None), "the child never started"
    assert process.poll() is None, process.communicate()
    return int(pid_file.read_text())


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith((".shapescript-partial-", "shapescript-")))


# ---------------------------------------------------------------------------------------------
# An output that is an input is refused before any work.


@pytest.mark.parametrize("command", [
    ["export", "p.ss", "-o", "p.ss"],
    ["export", "p.ss", "-o", "hard.ss"],  # a hard link of the source
    ["export", "p.ss", "-o", "soft.ss"],  # a symbolic link to it
    ["export", "p.ss", "--gguf", "p.ss"],
    ["export", "p.ss", "--hf", "."],  # a folder that holds the source, which replacing it would remove
    ["export", "p.ss", "-o", "w.pt", "--weights", "w.pt"],
    ["export", "p.ss", "--hf", "out", "--weights", "hfdir"],
    ["export", "p.ss", "--gguf", "hfdir/config.json", "--weights", "hfdir"],  # a file of an input folder
    ["run", "p.ss", "--log", "p.ss"],
    ["run", "p.ss", "--log", "w.pt", "--resume", "w.pt"],
    ["run", "p.ss", "--checkpoint", "hard.ss"],
    ["import-weights", "p.ss", "hfdir", "-o", "hfdir/model.safetensors"],
    ["import-weights", "p.ss", "hfdir", "-o", "p.ss"],
], ids=lambda c: " ".join(c))
def test_an_output_that_is_an_input_is_refused(tmp_path, command):
    (tmp_path / "p.ss").write_text(SOURCE)
    os.link(tmp_path / "p.ss", tmp_path / "hard.ss")
    (tmp_path / "soft.ss").symlink_to("p.ss")
    (tmp_path / "w.pt").write_bytes(b"weights")
    (tmp_path / "hfdir").mkdir()
    (tmp_path / "hfdir" / "config.json").write_text("{}")
    (tmp_path / "hfdir" / "model.safetensors").write_bytes(b"tensors")
    (tmp_path / "out").symlink_to("hfdir")
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    result = cli(*command, "--python", "/bin/false", cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith("error: can't write `") and "choose another output" in result.stderr, result.stderr
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == before


def test_the_python_api_refuses_an_output_that_is_its_source(tmp_path):
    source = tmp_path / "p.ss"
    source.write_text(SOURCE)
    result = subprocess.run([PYTHON, "-c", "import shapescript, sys; shapescript.export(sys.argv[1], 'patchify', sys.argv[1])", source],
                            capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(EXAMPLES.parent / "python")})
    assert "it is the input" in result.stderr and result.returncode != 0, result.stderr
    assert source.read_text() == SOURCE


# ---------------------------------------------------------------------------------------------
# Reading: a folder or an unreadable file is exit status 2, never an empty file.


@pytest.mark.parametrize("path", ["folder", "/proc/self/mem"])
def test_check_of_what_cant_be_read_is_exit_2(tmp_path, path):
    (tmp_path / "folder").mkdir()
    result = cli("check", path, cwd=tmp_path)
    assert result.returncode == 2, result
    assert result.stderr.startswith(f"error: can't read `{path}`: "), result.stderr


def test_check_json_quoting_a_byte_that_isnt_utf8_is_json(tmp_path):
    (tmp_path / "bad.ss").write_bytes(b"fn f(x: \xff) -> x:\n    return 1\n")
    result = subprocess.run([BIN, "check", "--format", "json", "bad.ss"], cwd=tmp_path, capture_output=True, env=cli_env())
    assert result.returncode == 1, result
    diagnostics = json.loads(result.stdout.decode("utf-8"))
    assert diagnostics and "\ufffd" in json.dumps(diagnostics, ensure_ascii=False), diagnostics


# ---------------------------------------------------------------------------------------------
# File system errors: messages and exit status 2, never an abort.


@pytest.mark.parametrize("tmpdir", ["missing", "a_file"])
@pytest.mark.parametrize("command", [
    ["export", "p.ss", "-o", "p.pt2"],
    ["run", "train.ss"],
    ["import-weights", "tiny.ss", "hfdir", "-o", "w.pt"],
    ["verify", "tiny.ss"],
], ids=lambda c: c[0])
def test_an_unusable_tmpdir_is_a_message(tmp_path, command, tmpdir):
    (tmp_path / "p.ss").write_text(SOURCE)
    (tmp_path / "tiny.ss").write_text(MODEL)
    shutil.copy(EXAMPLES / "train_tiny.ss", tmp_path / "train.ss")
    (tmp_path / "hfdir").mkdir()
    (tmp_path / "a_file").write_text("")
    result = cli(*command, "--python", "/bin/false", cwd=tmp_path, env=cli_env(TMPDIR=str(tmp_path / tmpdir)))
    assert result.returncode == 2, result
    assert "(TMPDIR)" in result.stderr and "terminate" not in result.stderr, result.stderr


@pytest.mark.parametrize("output", ["loop/p.pt2", "x" * 300 + ".pt2", "/dev/null"],
                         ids=["under_a_symlink_loop", "name_over_255_bytes", "a_device_the_rename_would_replace"])
def test_an_output_that_cant_be_named_is_a_message(tmp_path, output):
    (tmp_path / "p.ss").write_text(SOURCE)
    (tmp_path / "loop").symlink_to("loop2")
    (tmp_path / "loop2").symlink_to("loop")
    result = cli("export", "p.ss", "-o", output, "--python", "/bin/false", cwd=tmp_path)
    assert result.returncode == 2, result
    assert result.stderr.startswith("error: can't write `"), result.stderr


def test_a_virtual_env_under_a_symlink_loop_is_passed_over(tmp_path):
    (tmp_path / "p.ss").write_text(SOURCE)
    (tmp_path / "loop").symlink_to("loop2")
    (tmp_path / "loop2").symlink_to("loop")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python3").write_text("#!/bin/sh\necho 'error: the python3 on PATH ran' >&2\nexit 1\n")
    (bin_dir / "python3").chmod(0o755)
    env = cli_env(VIRTUAL_ENV=str(tmp_path / "loop" / "venv"), PATH=f"{bin_dir}:{os.environ['PATH']}")
    result = cli("export", "p.ss", "-o", "p.pt2", cwd=tmp_path, env=env)
    assert result.returncode == 1, result
    assert "error: the python3 on PATH ran" in result.stderr, result.stderr


def test_a_full_disk_writing_the_request_is_said(tmp_path):
    """Files over 8 KB fail with EFBIG as on a full disk (ENOSPC); once Python ran a truncated script and "succeeded"."""
    (tmp_path / "p.ss").write_text(SOURCE)
    (tmp_path / "tmp").mkdir()

    def small_files():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (8192, 8192))

    result = subprocess.run([BIN, "export", "p.ss", "-o", "p.pt2", "--python", "/bin/true"], cwd=tmp_path, capture_output=True, text=True,
                            env=cli_env(TMPDIR=str(tmp_path / "tmp")), preexec_fn=small_files)
    assert result.returncode == 2, result
    assert "File too large" in result.stderr and "without writing its reply" not in result.stderr, result.stderr
    assert leftovers(tmp_path / "tmp") == [] and not (tmp_path / "p.pt2").exists()


# ---------------------------------------------------------------------------------------------
# Success is said only of an output that is there.


def test_an_hf_export_whose_python_writes_nothing_fails(tmp_path):
    (tmp_path / "tiny.ss").write_text(MODEL)
    result = cli("export", "tiny.ss", "--hf", "hf", "--python", "/bin/true", cwd=tmp_path)
    assert result.returncode == 1, result
    assert "wrote" not in result.stdout
    assert result.stderr.splitlines()[-1] == "error: writing `hf` failed: `/bin/true` exited with exit status: 0 but nothing was written"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tiny.ss"]


# ---------------------------------------------------------------------------------------------
# Signals: the child dies with the CLI, and nothing is left behind.

HANGS = "out.write_bytes(b'half of a program')\ntime.sleep(60)\n"  # an export interrupted half-way


@pytest.mark.parametrize("how", ["SIGINT", "SIGTERM", "SIGKILL"])
def test_a_stopped_export_leaves_the_previous_output_and_no_child_or_temporary_folder(tmp_path, how):
    (tmp_path / "p.ss").write_text(SOURCE)
    (tmp_path / "p.pt2").write_bytes(b"the previous program")
    process = start(["export", "p.ss", "-o", "p.pt2", "--python", fake_python(tmp_path, HANGS)], tmp_path, tmp_path / "tmp")
    child = child_pid(tmp_path, process)
    sent = time.monotonic()
    process.send_signal(getattr(signal, how))
    _, stderr = process.communicate(timeout=30)
    assert time.monotonic() - sent < 10
    assert process.returncode == {"SIGINT": 130, "SIGTERM": 143, "SIGKILL": -9}[how], stderr
    assert eventually(lambda: gone(child)), "the Python child outlived the CLI"
    assert eventually(lambda: leftovers(tmp_path) == [] and leftovers(tmp_path / "tmp") == []), (leftovers(tmp_path), leftovers(tmp_path / "tmp"))
    assert (tmp_path / "p.pt2").read_bytes() == b"the previous program"


def test_ctrl_c_stops_import_weights_whose_child_has_sigint_unblocked(tmp_path):
    (tmp_path / "tiny.ss").write_text(MODEL)
    (tmp_path / "hfdir").mkdir()
    mask = "blocked = int(next(l for l in open('/proc/self/status') if l.startswith('SigBlk')).split()[1], 16)\n"
    body = mask + f"pathlib.Path({str(tmp_path / 'sigint_blocked')!r}).write_text(str(bool(blocked & (1 << (signal.SIGINT - 1)))))\n"
    process = start(["import-weights", "tiny.ss", "hfdir", "-o", "w.pt", "--python", fake_python(tmp_path, body + HANGS)], tmp_path, tmp_path / "tmp")
    child = child_pid(tmp_path, process)
    assert eventually(lambda: (tmp_path / "sigint_blocked").exists())
    os.killpg(process.pid, signal.SIGINT)  # Ctrl-C, as the terminal sends it to the foreground process group
    _, stderr = process.communicate(timeout=30)
    assert process.returncode == 130, stderr
    assert (tmp_path / "sigint_blocked").read_text() == "False"
    assert eventually(lambda: gone(child))
    assert eventually(lambda: leftovers(tmp_path) == [] and leftovers(tmp_path / "tmp") == [])
    assert not (tmp_path / "w.pt").exists()


def test_ctrl_c_stops_verify_and_its_exports(tmp_path):
    (tmp_path / "tiny.ss").write_text(MODEL)
    process = start(["verify", "tiny.ss", "--python", fake_python(tmp_path, HANGS)], tmp_path, tmp_path / "tmp")
    child = child_pid(tmp_path, process)  # the export verify runs, running its Python
    os.killpg(process.pid, signal.SIGINT)
    _, stderr = process.communicate(timeout=30)
    assert process.returncode == 130, stderr
    assert eventually(lambda: gone(child))
    assert eventually(lambda: leftovers(tmp_path / "tmp") == []), leftovers(tmp_path / "tmp")


def test_sigterm_stops_run(tmp_path):
    shutil.copy(EXAMPLES / "train_tiny.ss", tmp_path / "train.ss")
    process = start(["run", "train.ss", "--python", fake_python(tmp_path, "time.sleep(60)\n")], tmp_path, tmp_path / "tmp")
    child = child_pid(tmp_path, process)
    process.terminate()
    _, stderr = process.communicate(timeout=30)
    assert process.returncode == 143, stderr
    assert eventually(lambda: gone(child))
    assert eventually(lambda: leftovers(tmp_path) == [] and leftovers(tmp_path / "tmp") == [])


# ---------------------------------------------------------------------------------------------
# --hf folders are swapped in whole.

HF_FILES = ("config.json", "configuration_shapescript.py", "modeling_shapescript.py", "model.safetensors")


def hf_writer(tmp_path: Path, name: str, seconds: float, order=HF_FILES) -> str:
    """A stand-in for hf.py that writes a folder marked `name`, a file at a time in `order`, taking `seconds`."""
    body = (f"out.mkdir(exist_ok=True)\nfor f in {tuple(order)!r}:\n    (out / f).write_text({name!r})\n    time.sleep({seconds / len(order)})\n")
    return fake_python(tmp_path, body, name)


def test_an_hf_folder_is_replaced_whole_and_keeps_files_the_export_doesnt_write(tmp_path):
    (tmp_path / "tiny.ss").write_text(MODEL)
    (tmp_path / "hf").mkdir()
    for f in HF_FILES:
        (tmp_path / "hf" / f).write_text("old")
    (tmp_path / "hf" / "tokenizer.json").write_text("the user's")
    result = cli("export", "tiny.ss", "--hf", "hf", "--python", hf_writer(tmp_path, "new", 0), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert {f: (tmp_path / "hf" / f).read_text() for f in HF_FILES} == {f: "new" for f in HF_FILES}
    assert (tmp_path / "hf" / "tokenizer.json").read_text() == "the user's"
    assert leftovers(tmp_path) == []


def test_an_hf_export_refuses_to_replace_a_folder_that_isnt_one(tmp_path):
    (tmp_path / "tiny.ss").write_text(MODEL)
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep")
    result = cli("export", "tiny.ss", "--hf", "mine", "--python", "/bin/false", cwd=tmp_path)
    assert result.returncode == 2, result
    assert "isn't a Hugging Face folder" in result.stderr
    assert (tmp_path / "mine" / "notes.txt").read_text() == "keep"


def test_two_hf_exports_to_one_folder_at_once_leave_one_whole(tmp_path):
    (tmp_path / "tiny.ss").write_text(MODEL)
    (tmp_path / "hf").mkdir()
    (tmp_path / "hf" / "config.json").write_text("old")
    # Written in place, one file at a time in opposite orders, they would leave a folder of both.
    writers = [start(["export", "tiny.ss", "--hf", "hf", "--python", hf_writer(tmp_path, name, 1.0, order)], tmp_path, tmp_path / "tmp")
               for name, order in (("first", HF_FILES), ("second", HF_FILES[::-1]))]
    for w in writers:
        _, stderr = w.communicate(timeout=60)
        assert w.returncode == 0, stderr
    contents = {(tmp_path / "hf" / f).read_text() for f in HF_FILES}
    assert len(contents) == 1 and contents < {"first", "second"}, contents
    assert leftovers(tmp_path) == [] and leftovers(tmp_path / "tmp") == []


def test_two_real_hf_exports_to_one_folder_at_once_give_a_loadable_folder(tmp_path):
    (tmp_path / "tiny.ss").write_text(MODEL)
    writers = [start(["export", "tiny.ss", "--hf", "hf", "--python", PYTHON], tmp_path, tmp_path / "tmp") for _ in range(2)]
    for w in writers:
        _, stderr = w.communicate(timeout=600)
        assert w.returncode == 0, stderr
    config = json.loads((tmp_path / "hf" / "config.json").read_text())
    assert config["vocab_size"] == 500, config
    assert sorted(p.name for p in (tmp_path / "hf").iterdir() if not p.name.startswith("__")) == sorted(HF_FILES)
    assert leftovers(tmp_path) == [] and leftovers(tmp_path / "tmp") == []

"""What the tests under tests/python share: where things are, running the `shapescript` binary,
exporting, the chapter's transcripts, free ports and random weights of unit scale.

Test files import these names (`from conftest import cli, EXAMPLES`): pytest puts this
folder on sys.path before it collects them.

    $SHAPESCRIPT_BIN    the binary (default: build/shapescript)
    sys.executable      the Python with torch and einops, which the binary's runtime is given
"""
from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import sysconfig
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
PROGRAMS = Path(__file__).resolve().parent / "programs"
BIN = os.environ.get("SHAPESCRIPT_BIN", str(ROOT / "build" / "shapescript"))
PYTHON = sys.executable
# The product chapter whose transcripts are requirements: beside the repository here and in CI.
# The book's chapter on export, kept in the repository: its transcripts are the golden files of test_chapter.
CHAPTER = ROOT / "tests" / "python" / "chapter" / "exporting-without-python.md"


# The files that take longest, first: scripts/test.sh gives each worker whole files, and the
# longest started last would leave the other worker idle while it runs.
SLOWEST_FIRST = ["test_vllm.py", "test_model_zoo.py", "test_verify.py", "test_package.py", "test_encoders.py",
                 "test_export_programs.py", "test_architectures.py", "test_bring_your_model.py"]


def pytest_collection_modifyitems(session, config, items):
    rank = {name: i for i, name in enumerate(SLOWEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: each file's own order is kept


def cli_env(**changes) -> dict:
    """The environment the binary runs in: this Python's virtualenv is the active one, no colours."""
    return {**os.environ, "VIRTUAL_ENV": str(Path(PYTHON).parent.parent), "NO_COLOR": "1", **changes}


def cli(*args, cwd=None, env=None, timeout=900, **kwargs) -> subprocess.CompletedProcess:
    """Runs `shapescript ARGS...` and returns its exit status and output (text)."""
    return subprocess.run([BIN, *map(str, args)], cwd=cwd, env=cli_env() if env is None else env, capture_output=True,
                          text=True, timeout=timeout, **kwargs)


def export_pt2(source, output, *extra, fn=None, python=PYTHON, cwd=None) -> subprocess.CompletedProcess:
    """`shapescript export SOURCE -o OUTPUT --python PYTHON [--fn FN] EXTRA...`."""
    return cli("export", source, "-o", output, "--python", python, *extra, *(["--fn", fn] if fn else []), cwd=cwd)


def run_fresh(script: str, cwd: Path, env=None, timeout: int = 600) -> subprocess.CompletedProcess:
    """Runs `script` in a fresh, isolated Python (-I) from `cwd`: no ShapeScript, no repo on the path."""
    return subprocess.run([PYTHON, "-I", "-c", script], capture_output=True, text=True, cwd=cwd, env=env, timeout=timeout)


def fresh_python(folder: Path, lend_packages: bool = False, modules: dict[str, str] | None = None) -> str:
    """The Python of a new virtualenv in FOLDER/venv (no pip): with nothing installed, or lent this
    Python's packages (torch, einops) by a .pth file; `modules` are files put into its site-packages,
    as a package the user installed would be."""
    venv = folder / "venv"
    subprocess.run([PYTHON, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    if lend_packages:
        (site / "lent_packages.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    for name, text in (modules or {}).items():
        (site / name).write_text(text)
    return str(python)


# A package that prints, as some greet when imported and say goodbye as Python exits: a program
# that imports it (`import python loud`) prints on stdout, a brace first. Its .pth file imports it
# as Python starts, as some installed packages' hooks do: an export never imports what the program
# names, but its runtime still runs in a Python that may print.
LOUD_PACKAGE = {"loud.py": 'import atexit\nprint({"loud": "hello"})\natexit.register(print, "{loud: goodbye}")\n',
                "loud_hook.pth": "import loud\n"}


def place(folder: Path, source: Path | str, name: str | None = None) -> Path:
    """Puts a program into `folder` as NAME (default: the file's own name, or model.ss for text)."""
    path = folder / (name or (source.name if isinstance(source, Path) else "model.ss"))
    if isinstance(source, Path):
        shutil.copy(source, path)
    else:
        path.write_text(source)
    return path


def chapter_block(first: str) -> str:
    """The chapter's lines from the one that is FIRST to the next blank line (a program, or what it printed)."""
    lines = CHAPTER.read_text().splitlines()
    start = lines.index(first)
    end = lines.index("", start)
    return "\n".join(lines[start:end]) + "\n"


def chapter_transcript(command: str) -> str:
    """What the chapter prints after `$ COMMAND`: its lines up to a blank line that prose follows.
    A blank line inside the output is followed by more of it: another diagnostic, or the footer."""
    lines = CHAPTER.read_text().splitlines()
    start = lines.index(f"$ {command}") + 1
    end = start
    while end < len(lines) and (lines[end] or (end + 1 < len(lines) and re.match(r"(error|warning|info)\b|For more information", lines[end + 1]))):
        end += 1
    return "\n".join(lines[start:end]) + "\n"


def chapter_refusal(with_type: bool = True) -> re.Pattern:
    """The chapter's `RuntimeError: ...` for a height of 30 (without `RuntimeError: ` when not
    `with_type`), with torch's symbol (s68 there) as any s<N>."""
    line = next(l for l in CHAPTER.read_text().splitlines() if l.startswith("RuntimeError: Expected input"))
    if not with_type:
        line = line.removeprefix("RuntimeError: ")
    symbol = re.search(r"\*(s\d+),", line).group(1)
    return re.compile("^" + re.escape(line).replace(symbol, r"(s\d+)", 1).replace(symbol, r"\1") + "$")


def free_port() -> int:
    """A TCP port on loopback that nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def unit_scale_weights(state: dict, seed: int, is_norm=lambda key, value: value.dim() == 1) -> dict:
    """Random weights for the tensors of `state` (a state dict) that keep activations near unit
    scale, so that outputs depend on every part of a model: a matrix's rows randn / sqrt(fan-in), a
    norm's weights 1 + 0.2 randn."""
    import torch

    generator = torch.Generator().manual_seed(seed)
    return {key: (1 + 0.2 * torch.randn(value.shape, generator=generator)) if is_norm(key, value)
            else torch.randn(value.shape, generator=generator) / value.shape[-1] ** 0.5
            for key, value in state.items()}


def model_class(compiled):
    """The nn.Module class a compiled ShapeScript module defines (its model)."""
    import torch

    return next(v for v in vars(compiled).values()
                if isinstance(v, type) and issubclass(v, torch.nn.Module) and v.__module__ == compiled.__name__)


def wait_until_healthy(url: str, process: subprocess.Popen, log_path: Path, seconds: float, what: str) -> None:
    """Polls `url` (a server's /health) until it answers 200; fails with the log's tail if the
    process ends or `seconds` pass first."""
    import time
    import urllib.request

    deadline = time.time() + seconds
    while True:
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        assert process.poll() is None, Path(log_path).read_text()[-5000:]
        assert time.time() < deadline, f"{what} did not become healthy in {seconds:g} s\n" + Path(log_path).read_text()[-5000:]
        time.sleep(0.5)


def llama_cpp_dir() -> Path:
    """Where scripts/llama_cpp.sh built llama.cpp (libllama, llama-server, the Python bindings)."""
    found = subprocess.run(["bash", str(ROOT / "scripts" / "llama_cpp.sh"), "--print-dir"], capture_output=True, text=True).stdout.strip()
    path = Path(found)
    assert (path / "bin" / "llama-server").exists(), f"llama.cpp isn't built at {path}: run scripts/llama_cpp.sh (scripts/setup.sh does)"
    return path


def llama_cpp_module():
    """llama-cpp-python's bindings, loading the libllama built with them."""
    path = llama_cpp_dir()
    os.environ["LLAMA_CPP_LIB_PATH"] = str(path / "lib")
    if str(path / "python") not in sys.path:
        sys.path.insert(0, str(path / "python"))
    import llama_cpp

    return llama_cpp


def llama_cpp_logits(gguf_path: Path, ids: list[int]):
    """The logits real llama.cpp computes for `ids` at every position (a numpy array [n V]): float32
    key-value cache, no flash attention, so that only the order of sums differs from torch."""
    import numpy as np

    llm = llama_cpp_module().Llama(model_path=str(gguf_path), n_ctx=64, n_batch=64, logits_all=True, type_k=0, type_v=0,
                                   flash_attn=False, verbose=False, n_threads=2)
    llm.reset()
    llm.eval(list(ids))
    return np.array(llm.scores[: llm.n_tokens])


def llama_cpp_converter() -> Path:
    """llama.cpp's own converter of a transformers folder to GGUF, convert_hf_to_gguf.py, of the same
    commit as the build (scripts/llama_cpp.sh keeps it, with the conversion/ and gguf-py/ it imports)."""
    path = llama_cpp_dir() / "convert" / "convert_hf_to_gguf.py"
    assert path.exists(), f"llama.cpp's converter isn't kept at {path}: run scripts/llama_cpp.sh (scripts/setup.sh does)"
    return path

# Real vLLM (PyPI's CPU build) lives in a venv of its own: scripts/engines.sh makes it.
VLLM_VENV = Path(os.environ.get("SHAPESCRIPT_VLLM_VENV", Path.home() / ".cache" / "shapescript" / "vllm-venv"))

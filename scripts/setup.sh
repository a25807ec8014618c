#!/usr/bin/env bash
# Installs what a fresh machine lacks and builds the project. Idempotent: fast when all is there.
# Python packages live in a venv outside the checkout ($SHAPESCRIPT_VENV) so clean clones reuse it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
venv=${SHAPESCRIPT_VENV:-$HOME/.cache/shapescript/venv}
build=${SHAPESCRIPT_BUILD:-$root/build}

apt_packages=(cmake ninja-build g++ pkg-config libtree-sitter-dev nlohmann-json3-dev libuv1-dev
  libspdlog-dev libfmt-dev catch2 pybind11-dev libcli11-dev libmimalloc-dev neovim clang libclang-rt-14-dev)
missing=()
for p in "${apt_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}" >&2
  sudo_cmd=(); [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# The VS Code extension's packages (npm ci, only when its lock file changed).
command -v npm >/dev/null && "$root/editors/vscode/package.sh" --deps-only

# sentencepiece and tiktoken: llama.cpp's converter (convert_hf_to_gguf.py) reads a tokenizer.model,
# and imports tiktoken for Qwen's and BLOOM's BPE vocabularies. accelerate: transformers loads a
# folder tensor-parallel (`tp_plan="auto"`) only with it. onnx and onnxscript: `export --onnx`
# (torch.onnx's exporter) and the reference evaluator its tests run the file with. pytest-xdist:
# test.sh runs the Python tests on two workers, a file to a worker.
python_packages=(torch einops numpy pytest pytest-xdist pytest-lsp transformers safetensors gguf diskcache sentencepiece tiktoken accelerate onnx onnxscript)
if [ ! -x "$venv/bin/python" ]; then
  echo "setup: creating $venv" >&2
  python3 -m venv "$venv"
fi
if ! "$venv/bin/python" -c "import torch, einops, numpy, pytest, xdist, pytest_lsp, transformers, safetensors, gguf, diskcache, sentencepiece, tiktoken, accelerate, onnx, onnxscript" 2>/dev/null; then
  echo "setup: installing ${python_packages[*]} into $venv (torch is large the first time)" >&2
  "$venv/bin/python" -m pip install -q --upgrade pip
  "$venv/bin/python" -m pip install -q "${python_packages[@]}"
fi

# The tree-sitter CLI runs the grammar's corpus tests; building never needs it (parser.c is committed).
if [ ! -x "$HOME/.cargo/bin/tree-sitter" ] && command -v cargo >/dev/null; then
  echo "setup: building tree-sitter-cli 0.22.6 with cargo (once, a few minutes)" >&2
  cargo install -q tree-sitter-cli --version 0.22.6 --locked
fi

# A current Neovim (0.10+) for the editor tests, beside Debian's 0.7 (from Debian 13's packages).
# If it can't be fetched, everything else still sets up; the editor tests then say it is missing.
"$root/scripts/neovim_current.sh" >/dev/null || echo "setup: warning: no current Neovim (scripts/neovim_current.sh failed)" >&2

# llama.cpp (libllama, llama-server, llama-cpp-python's bindings) for the tests of --gguf: built once
# from PyPI's source into ~/.cache/shapescript (about 10 minutes on 2 cores the first time).
"$root/scripts/llama_cpp.sh" >/dev/null

cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DPython3_EXECUTABLE="$venv/bin/python" >/dev/null
cmake --build "$build"

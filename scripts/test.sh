#!/usr/bin/env bash
# Sets up (idempotently), builds, and runs every test: C++ unit, golden, fuzz smoke, language server,
# and the Python tests of export. CI runs exactly this (.ci/run).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
"$root/scripts/setup.sh"
"$root/scripts/engines.sh"  # real vLLM in its own venv, for tests/python/test_vllm.py and test_verify.py
venv=${SHAPESCRIPT_VENV:-$HOME/.cache/shapescript/venv}
build=${SHAPESCRIPT_BUILD:-$root/build}

echo "== Grammar corpus (tree-sitter test)"
(cd "$root/grammar" && "$HOME/.cargo/bin/tree-sitter" test)

echo "== C++ tests (ctest)"
ctest --test-dir "$build" --output-on-failure

# Two workers, each taking whole files (a file's module fixtures, such as the one vLLM process
# serving every model, are made once): most of these tests wait on one core, a subprocess or an
# engine, so two halve the tier's time on 2 cores. SHAPESCRIPT_TEST_WORKERS=0 runs them in order.
workers=${SHAPESCRIPT_TEST_WORKERS:-2}
echo "== Python tests (pytest on $workers workers; the 30 slowest listed, since CI has a time budget)"
SHAPESCRIPT_BIN="$build/shapescript" SHAPESCRIPT_BUILD="$build" PYTHONPATH="$root/python" \
  "$venv/bin/python" -m pytest -q -p no:cacheprovider --durations=30 -n "$workers" --dist loadfile "$root/tests/python" "$@"

echo "== End-to-end language server tests (Neovim, pytest-lsp)"
SHAPESCRIPT_BUILD="$build" SHAPESCRIPT_VENV="$venv" "$root/tests/e2e/run.sh"

echo "== Editor integrations (VS Code .vsix + TextMate grammar, Neovim plugin)"
SHAPESCRIPT_BUILD="$build" "$root/tests/editors/run.sh"

#!/usr/bin/env bash
# End-to-end tests of the language server with real, published LSP clients:
#   - Neovim's built-in client (nvim_lsp_test.lua, headless), against `shapescript-lsp` and `shapescript lsp`,
#     on Neovim 0.7 and a current Neovim;
#   - the Neovim plugin with only its documented setup (nvim_plugin_e2e.lua): each keymap, the E-code display;
#   - pytest-lsp (test_pytest_lsp.py), in the project venv.
# Environment: SHAPESCRIPT_BUILD (default <repo>/build), SHAPESCRIPT_VENV (default
# ~/.cache/shapescript/venv). Runs everything, then exits non-zero if anything failed.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
build=${SHAPESCRIPT_BUILD:-$root/build}
venv=${SHAPESCRIPT_VENV:-$HOME/.cache/shapescript/venv}
export SHAPESCRIPT_BUILD="$build"
failed=()

# Both ends of what the plugin supports: Debian's Neovim 0.7 and a current one
# (scripts/neovim_current.sh unpacks Debian 13's 0.10 for it).
nvims=(nvim "${SHAPESCRIPT_NVIM_CURRENT:-$HOME/.cache/shapescript/neovim-current/bin/nvim}")

run_nvim() {  # $1: nvim, $2: the server command
  echo "-- $1: $2"
  SHAPESCRIPT_LSP="$2" timeout 120 "$1" --headless --clean -i NONE -u "$root/tests/e2e/nvim_lsp_test.lua" </dev/null
}

for nvim in "${nvims[@]}"; do
  if ! command -v "$nvim" >/dev/null; then
    echo "FAIL $nvim is not installed (scripts/setup.sh installs it)"; failed+=("$nvim"); continue
  fi
  run_nvim "$nvim" "$build/lsp/shapescript-lsp" || failed+=("$nvim (shapescript-lsp)")
  run_nvim "$nvim" "$build/shapescript lsp" || failed+=("$nvim (shapescript lsp)")
  echo "-- $nvim: the plugin's documented setup"
  SHAPESCRIPT_CMD="$build/shapescript lsp" timeout 120 "$nvim" --headless --clean --cmd "set rtp^=$root/editors/nvim" \
    -u "$root/tests/e2e/nvim_plugin_e2e.lua" </dev/null || failed+=("$nvim plugin")
done

echo "-- pytest-lsp: $build/lsp/shapescript-lsp"
SHAPESCRIPT_LSP="$build/lsp/shapescript-lsp" timeout 300 "$venv/bin/python" -m pytest -v -p no:cacheprovider \
  -o asyncio_default_fixture_loop_scope=function -W error::pytest_lsp.LspSpecificationWarning \
  "$root/tests/e2e" "$@" || failed+=("pytest-lsp")

if [ ${#failed[@]} -gt 0 ]; then
  echo "e2e: FAILED: ${failed[*]}"
  exit 1
fi
echo "e2e: all passed"

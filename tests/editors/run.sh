#!/usr/bin/env bash
# Runs every editor test: the VS Code extension (.vsix built from the checkout, its manifest, and the
# TextMate grammar's scopes) and the Neovim plugin (headless, only editors/nvim on the runtimepath).
# Needs node/npm (editors/vscode/package.sh runs `npm ci` the first time), nvim and a current nvim
# (scripts/neovim_current.sh).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
build=${SHAPESCRIPT_BUILD:-$root/build}
status=0

echo "== VS Code extension"
node tests/editors/vscode_test.js || status=1

# Debian's Neovim 0.7 and a current one (scripts/neovim_current.sh).
for nvim in nvim "${SHAPESCRIPT_NVIM_CURRENT:-$HOME/.cache/shapescript/neovim-current/bin/nvim}"; do
  echo "== Neovim plugin ($("$nvim" --version | head -1))"
  SHAPESCRIPT_BUILD="$build" timeout 120 "$nvim" --headless --clean --cmd 'set rtp^=editors/nvim' \
    -u tests/editors/nvim_plugin_test.lua || status=1
done

echo "== Neovim tree-sitter queries match grammar/queries"
for q in highlights indents; do
  if cmp -s "grammar/queries/$q.scm" "editors/nvim/queries/shapescript/$q.scm"; then echo "PASS queries $q.scm"
  else echo "FAIL queries $q.scm differs: editors/nvim/queries/shapescript/$q.scm should link to grammar/queries/$q.scm"; status=1; fi
done

exit $status

#!/usr/bin/env bash
# Regenerates the parser from grammar.js with the tree-sitter CLI and runs the corpus tests.
# For developers changing the grammar; the normal build compiles the committed src/ and never
# runs this. Needs tree-sitter-cli 0.22.6 (see README.md): it writes ABI 14 parsers, which the
# Debian runtime (libtree-sitter 0.20.x) loads.
set -euo pipefail

cd "$(dirname "$0")"

TREE_SITTER="${TREE_SITTER:-tree-sitter}"
if ! command -v "$TREE_SITTER" >/dev/null 2>&1; then
  if [ -x "$HOME/.cargo/bin/tree-sitter" ]; then
    TREE_SITTER="$HOME/.cargo/bin/tree-sitter"
  else
    echo "regenerate.sh: tree-sitter CLI not found; install it with" >&2
    echo "  cargo install tree-sitter-cli --version 0.22.6 --locked" >&2
    exit 1
  fi
fi

version="$("$TREE_SITTER" --version | awk '{print $2}')"
if [ "$version" != "0.22.6" ]; then
  echo "regenerate.sh: warning: tree-sitter $version, expected 0.22.6 (ABI 14)" >&2
fi

# --no-bindings: only src/ (parser.c, grammar.json, node-types.json, tree_sitter/*.h).
"$TREE_SITTER" generate --no-bindings --abi 14

if ! grep -q '^#define LANGUAGE_VERSION 14$' src/parser.c; then
  echo "regenerate.sh: src/parser.c is not ABI 14" >&2
  exit 1
fi

"$TREE_SITTER" test "$@"

echo "src/parser.c: $(wc -c < src/parser.c) bytes, $(grep -m1 '^#define STATE_COUNT' src/parser.c | awk '{print $3}') states"

#!/usr/bin/env bash
# Regenerates docs/images/nvim-diagnostic.png and docs/images/nvim-hover.png: Neovim with the plugin in
# tmux, captured with `tmux capture-pane -e -p`, rendered by ansi2png.py (needs Python with Pillow:
# PYTHON=/path/to/python). Run from anywhere.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
py=${PYTHON:-python3}
tmp=$(mktemp -d)
sock="shapescript-shots-$$"
cols=118 rows=20
trap 'tmux -L "$sock" kill-server 2>/dev/null || true; rm -rf "$tmp"' EXIT
nv() { # FILE KEYS... : open FILE in nvim, send keys, wait, capture
  local file=$1; shift
  tmux -L "$sock" kill-server 2>/dev/null || true
  sock="shapescript-shots-$$-$RANDOM"
  tmux -L "$sock" -f /dev/null new-session -d -x $cols -y $rows \
    "cd '$root' && TERM=tmux-256color nvim --clean --cmd 'set rtp^=editors/nvim' -u '$here/init.lua' '$file'"
  sleep 2
  for k in "$@"; do
    if [[ $k == sleep:* ]]; then sleep "${k#sleep:}"; else tmux -L "$sock" send-keys "$k"; fi
  done
  tmux -L "$sock" capture-pane -e -p > "$tmp/capture.txt"
}
cd "$root"
nv examples/export_bad.ss sleep:1 6G 11l sleep:0.5 ":lua vim.diagnostic.open_float()" Enter sleep:1.5
"$py" "$here/ansi2png.py" "$tmp/capture.txt" docs/images/nvim-diagnostic.png $cols $rows
nv examples/patches.ss sleep:1 4G 19l ":lua vim.lsp.buf.hover()" Enter sleep:2
"$py" "$here/ansi2png.py" "$tmp/capture.txt" docs/images/nvim-hover.png $cols $rows
echo "wrote docs/images/nvim-diagnostic.png docs/images/nvim-hover.png"

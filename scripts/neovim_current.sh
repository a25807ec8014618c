#!/usr/bin/env bash
# A current Neovim (0.10+) beside Debian 12's 0.7, so the editor tests run against both ends of what
# the plugin supports. Debian 12 has only 0.7 and neither PyPI nor npm ships an nvim binary, so this
# takes Debian 13's signed packages (apt verifies them against the system's archive keyring) and
# unpacks them into a private folder, never into the system. Their binaries need Debian 13's glibc,
# so the wrapper runs nvim through that glibc's own loader; processes nvim starts (the language
# server) run on the system's libraries as usual. Prints the wrapper's path. Idempotent.
set -euo pipefail
prefix=${SHAPESCRIPT_NVIM_CURRENT_DIR:-$HOME/.cache/shapescript/neovim-current}
wrapper="$prefix/bin/nvim"
if [ -x "$wrapper" ] && "$wrapper" --headless -u NONE -i NONE +q </dev/null >/dev/null 2>&1; then
  echo "$wrapper"
  exit 0
fi

echo "setup: unpacking Debian 13's Neovim into $prefix (once, about 10 MB)" >&2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/lists/partial" "$work/cache/archives/partial" "$work/debs"
echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian trixie main" \
  >"$work/sources.list"
apt_options=(-o "Dir::Etc::SourceList=$work/sources.list" -o Dir::Etc::SourceParts=/dev/null
  -o "Dir::State::Lists=$work/lists" -o "Dir::Cache=$work/cache" -o Dir::State::Status=/dev/null
  -o APT::Architecture=amd64 -o APT::Sandbox::User="$(id -un)" -qq)
apt-get "${apt_options[@]}" update
# neovim's Depends in Debian 13, plus the glibc and libgcc they were built against.
(cd "$work/debs" && apt-get "${apt_options[@]}" download neovim neovim-runtime libc6 libgcc-s1 libluajit-5.1-2 \
  libmsgpack-c2 libtree-sitter0.22 libunibilium4 libuv1t64 libvterm0 lua-lpeg lua-luv)

staged="$prefix.partial"
rm -rf "$staged"
mkdir -p "$staged/bin"
for deb in "$work"/debs/*.deb; do dpkg-deb -x "$deb" "$staged/root"; done
libs="$prefix/root/usr/lib/x86_64-linux-gnu"
# Its built-in parsers (markdown for hover, lua, vimdoc...) live in /usr/lib/nvim, on the default runtimepath.
cat >"$staged/bin/nvim" <<EOF
#!/bin/sh
VIMRUNTIME="$prefix/root/usr/share/nvim/runtime" exec "$libs/ld-linux-x86-64.so.2" --library-path "$libs" \\
  "$prefix/root/usr/bin/nvim" --cmd "set rtp+=$prefix/root/usr/lib/nvim" "\$@"
EOF
chmod +x "$staged/bin/nvim"
rm -rf "$prefix"
mv "$staged" "$prefix"
"$wrapper" --version | head -1 >&2
echo "$wrapper"

#!/usr/bin/env bash
# Builds the ShapeScript VS Code extension: `npm ci` when node_modules is missing or older than
# package-lock.json, then tsc (type check only), then esbuild bundles src/extension.ts and its
# dependencies into out/extension.js, then `vsce package` (no node_modules: the bundle holds them)
# into editors/vscode/shapescript-VERSION.vsix, or into $1 when given. Idempotent; no network when installed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here"
stamp=node_modules/.package-lock.json   # npm writes it on every install
if [ ! -d node_modules ] || [ ! -f "$stamp" ] || [ package-lock.json -nt "$stamp" ] || [ package.json -nt "$stamp" ]; then
  echo "package.sh: npm ci" >&2
  npm ci --no-audit --no-fund --loglevel=error >&2
fi
if [ "${1:-}" = "--deps-only" ]; then exit 0; fi
rm -rf out
node_modules/.bin/tsc -p . --noEmit
node_modules/.bin/esbuild src/extension.ts --bundle --platform=node --format=cjs --target=node18 \
  --external:vscode --minify --log-level=warning --outfile=out/extension.js
version=$(node -p 'require("./package.json").version')
vsix=${1:-$here/shapescript-$version.vsix}
node_modules/.bin/vsce package --no-dependencies --skip-license --allow-missing-repository --out "$vsix" >&2
echo "$vsix"

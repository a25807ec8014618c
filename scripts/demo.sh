#!/usr/bin/env bash
# The main job on a bundled example: check the examples, export patchify to a .pt2, and run the
# exported program in a Python that has only torch, as the book's chapter does.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
venv=${SHAPESCRIPT_VENV:-$HOME/.cache/shapescript/venv}
shapescript="${SHAPESCRIPT_BUILD:-$root/build}/shapescript"
out=${1:-$root/build/demo}
mkdir -p "$out"

echo "\$ shapescript check examples/patches.ss examples/tiny_sdpa.ss examples/causal_attention.ss"
(cd "$root" && "$shapescript" check examples/patches.ss examples/tiny_sdpa.ss examples/causal_attention.ss && echo "no errors")
echo
echo "\$ shapescript check examples/export_bad.ss"
(cd "$root/examples" && "$shapescript" check export_bad.ss) || true
echo
echo "\$ shapescript export patches.ss -o patchify.pt2"
cp "$root/examples/patches.ss" "$out/"
(cd "$out" && "$shapescript" export patches.ss -o patchify.pt2 --python "$venv/bin/python")
echo
cat > "$out/run_patchify.py" <<'PY'
import torch
patchify = torch.export.load("patchify.pt2").module()   # no ShapeScript needed
print(patchify(torch.randn(4, 3, 224, 160)).shape)
print(patchify(torch.randn(1, 3, 32, 64)).shape)
try:
    patchify(torch.randn(1, 3, 30, 64))
except RuntimeError as e:
    print(f"RuntimeError: {e}")
PY
echo "\$ python run_patchify.py   # torch only: no ShapeScript, no einops"
(cd "$out" && "$venv/bin/python" -I run_patchify.py)

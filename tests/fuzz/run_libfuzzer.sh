#!/usr/bin/env bash
# Builds the libFuzzer target with clang into build-fuzz/ and fuzzes the whole checker, the code
# generators and the JSON the CLI and the language server write.
#
#   tests/fuzz/run_libfuzzer.sh [SECONDS] [LIBFUZZER_ARGS...]     (default 60 seconds)
#
# Environment: BUILD_DIR (default <repo>/build-fuzz), CC/CXX (default clang/clang++),
# JOBS (parallel fuzzing processes, default 1), MAX_LEN (default 65536 bytes: deep nesting and long
# chains fit), SHAPESCRIPT_FUZZ_KNOWN (known findings to pass over, e.g. generated-code; see fuzz_entry.cpp).
# New inputs go to $BUILD_DIR/corpus; crashes, hangs (-timeout) and leaks to $BUILD_DIR/artifacts/.
# Reproduce one with:  $BUILD_DIR/tests/fuzz/fuzz_check $BUILD_DIR/artifacts/crash-...
# (or, without clang, build/tests/fuzz/fuzz_replay FILE).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
seconds="${1:-60}"
shift || true
build="${BUILD_DIR:-$root/build-fuzz}"
jobs="${JOBS:-1}"
max_len="${MAX_LEN:-65536}"

mkdir -p "$build"
# Keep the whole build directory out of git without touching the top-level .gitignore.
[ -f "$build/.gitignore" ] || echo '*' > "$build/.gitignore"

if [ ! -f "$build/CMakeCache.txt" ]; then
  CC="${CC:-clang}" CXX="${CXX:-clang++}" cmake -S "$root" -B "$build" -G Ninja \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSHAPESCRIPT_FUZZ=ON -DSHAPESCRIPT_PYTHON=OFF
fi
cmake --build "$build" --target fuzz_check

mkdir -p "$build/corpus" "$build/artifacts"
seeds=("$here/corpus" "$root/examples")
[ -d "$root/tests/golden/check" ] && seeds+=("$root/tests/golden/check")

export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:symbolize=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

args=(-max_total_time="$seconds" -max_len="$max_len" -timeout=10 -rss_limit_mb=4096
      -dict="$here/shapescript.dict" -artifact_prefix="$build/artifacts/" -print_final_stats=1)
if [ "$jobs" -gt 1 ]; then
  args+=(-fork="$jobs" -ignore_crashes=1 -ignore_timeouts=1)
fi
echo "fuzzing for ${seconds}s; corpus $build/corpus; seeds ${seeds[*]}"
exec "$build/tests/fuzz/fuzz_check" "${args[@]}" "$@" "$build/corpus" "${seeds[@]}"

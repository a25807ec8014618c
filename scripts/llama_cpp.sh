#!/usr/bin/env bash
# Builds llama.cpp from the source llama-cpp-python ships on PyPI (GitHub is not reachable here),
# once, into a cache outside the checkout: the shared libraries, llama-server, and llama-cpp-python's
# ctypes bindings of the same llama.cpp commit; and llama.cpp's own converter (convert_hf_to_gguf.py
# with the conversion/, gguf-py/ and models/templates/ it reads) in $cache/convert, which the tests
# compare `--gguf` with. Idempotent; prints the cache directory. A cache with the build but not the
# converter gets the converter alone (the source is downloaded again, nothing is rebuilt).
# Use: scripts/llama_cpp.sh [--print-dir]   (several minutes on 2 cores the first time)
set -euo pipefail
version=0.3.36   # llama-cpp-python release; its sdist vendors llama.cpp
cache=${SHAPESCRIPT_LLAMA_CPP:-$HOME/.cache/shapescript/llama.cpp-$version}
if [ "${1:-}" = "--print-dir" ]; then echo "$cache"; exit 0; fi
built() { [ -x "$cache/bin/llama-server" ] && [ -f "$cache/lib/libllama.so" ] && [ -d "$cache/python/llama_cpp" ]; }
converter() { [ -f "$cache/convert/convert_hf_to_gguf.py" ] && [ -d "$cache/convert/conversion" ] && [ -d "$cache/convert/gguf-py/gguf" ]; }
if built && converter; then echo "$cache"; exit 0; fi

work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
echo "llama_cpp: downloading llama-cpp-python $version's source from PyPI" >&2
python3 -m pip download -q --no-deps --no-binary :all: -d "$work" "llama-cpp-python==$version" >&2
src=$work/llama_cpp_python-$version
# The converter's files: the script, the package of model classes it imports, the gguf-py it puts
# first on sys.path, and the chat templates some classes read.
convert_files=(convert_hf_to_gguf.py conversion gguf-py models/templates)
keep_converter() {  # copies the converter from $src's llama.cpp into $1
  mkdir -p "$1/models"
  for f in "${convert_files[@]}"; do cp -r "$src/vendor/llama.cpp/$f" "$1/$f"; done
}
if built; then
  echo "llama_cpp: llama.cpp is built; extracting only its converter" >&2
  tar -xzf "$work"/llama_cpp_python-$version.tar.gz -C "$work" "${convert_files[@]/#/llama_cpp_python-$version/vendor/llama.cpp/}"
  rm -rf "$cache/convert.partial"; keep_converter "$cache/convert.partial"
  rm -rf "$cache/convert"; mv "$cache/convert.partial" "$cache/convert"
  echo "$cache"; exit 0
fi
tar -xzf "$work"/llama_cpp_python-$version.tar.gz -C "$work"

echo "llama_cpp: building llama.cpp (libllama, llama-server); several minutes on 2 cores" >&2
# No curl, TLS, web UI or examples: nothing is fetched at build time, and only what we run is built.
cmake -S "$src/vendor/llama.cpp" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DBUILD_SHARED_LIBS=ON -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_TESTS=OFF \
  -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=ON -DLLAMA_BUILD_SERVER=ON -DLLAMA_BUILD_APP=OFF \
  -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF -DGGML_NATIVE=ON \
  -DCMAKE_INSTALL_RPATH='$ORIGIN/../lib' -DCMAKE_BUILD_WITH_INSTALL_RPATH=ON >&2
cmake --build "$work/build" --target llama llama-server >&2

staging=$cache.partial; rm -rf "$staging"; mkdir -p "$staging/bin" "$staging/lib" "$staging/python"
cp "$work/build/bin/llama-server" "$staging/bin/"
find "$work/build" -name '*.so*' -exec cp -P {} "$staging/lib/" \;
cp -r "$src/llama_cpp" "$staging/python/"
keep_converter "$staging/convert"
rm -rf "$cache"; mv "$staging" "$cache"   # a finished cache or none: never half of one
echo "$cache"

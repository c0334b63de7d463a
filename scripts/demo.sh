#!/usr/bin/env bash
# The first thing to run: real extractions from a real model, with nothing installed by hand.
#
# By default the model runs in process (llama.cpp, embedded): this installs what the build needs if it is
# missing (cmake, clang, libclang-dev; the 98 MB default model), builds, and runs two examples:
#   quickstart  the people and companies in a short text, as one value and as a list;
#   ontology    entities, relationships and attributes as a tagged enum, printed as they stream in.
# With OLLAMA_HOST set (e.g. http://localhost:11434) the same examples run against that Ollama server
# instead (model: OLLAMA_MODEL, default llama3.2), and nothing is installed.
#
# The build uses cargo's dev profile, in which llama.cpp and the grammar engine are optimised anyway
# (see Cargo.toml), and the same package selection and features as scripts/test.sh (--workspace
# --all-features): cargo resolves features per command, and a different selection unifies the build
# dependencies of llama.cpp differently (e.g. `regex` under bindgen), which builds llama.cpp a second
# time. So the demo and scripts/test.sh share one build of llama.cpp.
set -euo pipefail
cd "$(dirname "$0")/.."
# One-shot builds: incremental compilation state would add gigabytes to the target directory and buys nothing
# for a single run (set CARGO_INCREMENTAL=1 to keep it while iterating). Both scripts set the same value, so
# they share one build.
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"

if [[ -n "${OLLAMA_HOST:-}" ]]; then
    echo "demo.sh: using the Ollama server at $OLLAMA_HOST" >&2
    cargo run --quiet --example quickstart -- --ollama
    cargo run --quiet --example ontology -- --ollama
else
    scripts/setup.sh
    echo "demo.sh: building (the first build compiles llama.cpp: several minutes on 2 cores)" >&2
    cargo build --quiet --workspace --all-features --examples
    # `cargo run` has no --workspace, so run what the build above produced.
    target_dir="$(cargo metadata --format-version 1 --no-deps |
        python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')"
    "$target_dir/debug/examples/quickstart"
    "$target_dir/debug/examples/ontology"
fi

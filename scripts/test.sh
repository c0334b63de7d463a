#!/usr/bin/env bash
# The whole check, as CI runs it: the import graph, formatting, lints (warnings are errors) and every test,
# with the embedded llama.cpp engine on, so the end-to-end tests run on tokens a real model produces.
# Exits non-zero at the first failure.
set -euo pipefail
cd "$(dirname "$0")/.."
# One-shot builds: incremental compilation state would add gigabytes to the target directory and buys nothing
# for a single run (set CARGO_INCREMENTAL=1 to keep it while iterating). Both scripts set the same value, so
# they share one build.
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"

scripts/setup.sh

if ! cargo fmt --version >/dev/null 2>&1 || ! cargo clippy --version >/dev/null 2>&1; then
    command -v rustup >/dev/null 2>&1 || { echo "test.sh: rustfmt and clippy are missing (and rustup is not here to add them)" >&2; exit 1; }
    rustup component add rustfmt clippy
fi

step() { printf '\n== %s\n' "$*" >&2; }

step "import graph: no file-level circle, no upward import (scripts/import-cycles.py)"
python3 scripts/import-cycles.py --self-test
python3 scripts/import-cycles.py

step "cargo fmt --check"
cargo fmt --all -- --check

step "cargo clippy (all targets, all features, -D warnings)"
cargo clippy --workspace --all-targets --all-features -- -D warnings

step "cargo doc (all features, -D warnings: every intra-doc link resolves)"
RUSTDOCFLAGS="${RUSTDOCFLAGS:-} -D warnings" cargo doc --workspace --all-features --no-deps --quiet

step "cargo test (all features)"
cargo test --workspace --all-features

step "trybuild UI tests of the derive (without the llama-cpp feature, see tests/ui.rs)"
cargo test --test ui

step "all checks passed"

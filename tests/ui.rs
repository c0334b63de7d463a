//! Compile-fail tests of `#[derive(Extract)]`: one file per rule in `tests/ui/`, each with the
//! `.stderr` a user sees; `tests/ui/pass/` holds shapes that derive (each checks its schema when run). Regenerate with `TRYBUILD=overwrite cargo test --test ui` and read the diff.
//!
//! Skipped when the `llama-cpp` feature is on: trybuild builds the crate under test again, with the
//! same features, in its own target directory, and a second llama.cpp build adds minutes for nothing
//! the derive depends on. `scripts/test.sh` runs this file on its own without the feature.
#![cfg(not(feature = "llama-cpp"))]

#[test]
fn ui() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/*.rs");
    cases.pass("tests/ui/pass/*.rs");
}

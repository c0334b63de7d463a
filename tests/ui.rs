//! The derive's UI tests. Compile-fail: one file per rule in `tests/ui/`, each with the `.stderr` a
//! user sees, built by trybuild in a crate of its own. Regenerate with `TRYBUILD=overwrite cargo test
//! --test ui` and read the diff. Shapes that derive: `tests/ui/pass/`, one module each, with only the
//! imports a user writes, built and run here as this binary's tests (their schemas are checked when
//! run), not by trybuild: a trybuild pass case links and runs a program of its own (about 100 MB each
//! with full debug info), where compile-fail cases are only checked (BENCHMARKS.md, "The build").
//!
//! Skipped when the `llama-cpp` feature is on: trybuild builds the crate under test again, with the
//! same features, in its own target directory, and a second llama.cpp build adds minutes for nothing
//! the derive depends on. `scripts/test.sh` runs this file on its own without the feature.
#![cfg(not(feature = "llama-cpp"))]

#[test]
fn ui() {
    trybuild::TestCases::new().compile_fail("tests/ui/*.rs");
}

// Shapes that derive, each a module of its own. Their fields are read only through their schemas and
// partial forms (trybuild allowed `dead_code` for them).
#[allow(dead_code)]
#[path = "ui/pass/direct_recursion.rs"]
mod direct_recursion;
#[allow(dead_code)]
#[path = "ui/pass/flatten.rs"]
mod flatten;
#[allow(dead_code)]
#[path = "ui/pass/generic_enum.rs"]
mod generic_enum;
#[allow(dead_code)]
#[path = "ui/pass/generic_type.rs"]
mod generic_type;
#[allow(dead_code)]
#[path = "ui/pass/mutual_recursion.rs"]
mod mutual_recursion;
#[allow(dead_code)]
#[path = "ui/pass/partial_enums.rs"]
mod partial_enums;

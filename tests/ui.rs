//! Compile-fail tests of `#[derive(Extract)]`: one file per rule in `tests/ui/`, each with the
//! `.stderr` a user sees. Regenerate with `TRYBUILD=overwrite cargo test --test ui` and read the diff.

#[test]
fn ui() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/*.rs");
}

//! Schemas: lowering to each provider's dialect, the view of a schema, snapshots of the generated ones, the
//! official JSON-Schema-Test-Suite, the lowering's work budget and property tests.
//!
//! One test binary of several modules (a binary per file would link the whole library into each).

#[path = "../common/mod.rs"]
mod common;

mod budget;
mod lowering;
mod props;
mod snapshots;
mod suite;
mod view;

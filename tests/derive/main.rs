//! The derive, end to end: what `#[derive(Extract)]` generates for every shape serde can describe (attributes,
//! generic enums, recursion, the partial forms), checked through the generated schemas and values.
//!
//! One test binary of several modules (a binary per file would link the whole library into each).

#[path = "../common/mod.rs"]
mod common;

mod attributes;
mod generic_enums;
mod partial_forms;
mod recursion;
mod shapes;

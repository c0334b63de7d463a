//! Parsing what models write: the catalogue of real outputs, property tests of the lenient and partial
//! parsers, and partial values while a stream arrives.
//!
//! One test binary of several modules (a binary per file would link the whole library into each).

#[path = "../common/mod.rs"]
mod common;
#[path = "../support/mod.rs"]
mod support;

mod cases;
mod lexer;
mod partial_values;
mod props;

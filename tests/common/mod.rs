//! Fixtures shared by the integration tests (`mod common;` in a test file).
//!
//! Each test binary compiles this module on its own and uses only part of it.
#![allow(dead_code)]

pub mod decoded;
pub mod snapshots;
pub mod types;

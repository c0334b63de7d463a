//! Telemetry: the spans an extraction opens, captured by a global `tracing` subscriber, in a binary of
//! their own (a process has one global subscriber; the extract suite's is the response cache's).

#[path = "../support/mod.rs"]
mod support;

mod spans;

//! Telemetry: the spans an extraction opens, captured by a global `tracing` subscriber, in a binary of
//! their own (a process has one global subscriber; the extract suite's is the response cache's). The
//! tests take turns (`capture`).

#[path = "../batch_servers/mod.rs"]
mod batch_servers;
#[path = "../support/mod.rs"]
mod support;

mod batch_ids;
mod capture;
mod content;
mod spans;

//! The end-to-end tests on the embedded llama.cpp engine and a real model (feature `llama-cpp`): the model
//! is loaded once for the whole binary (`llama_common::model`) and requests queue on it.
//!
//! One test binary of several modules (a binary per file would link the whole library, and llama.cpp, into
//! each, and load the model once per binary).
#![cfg(feature = "llama-cpp")]

#[path = "../common/mod.rs"]
mod common;
#[path = "../llama_common/mod.rs"]
mod llama_common;
#[path = "../support/mod.rs"]
mod support;

mod batching;
mod demo;
mod engine;
mod exit;
mod extract;
mod grounding;
mod guard;
mod partial;
mod per_field;
mod schema;
mod tool;

//! The extraction paths over scripted backends: checks, confidence, documents and PDFs, grounding, media parts,
//! merging by key, samples, worked examples, instruction tokens, the response cache, and the loop and
//! repetition detectors.
//!
//! One test binary of several modules (a binary per file would link the whole library into each). Only
//! `response_cache` installs a global `tracing` subscriber here (the spans of `tests/telemetry` are
//! checked in a binary of their own, whose subscriber is another).

#[path = "../common/mod.rs"]
mod common;
#[path = "../support/pdf_writer.rs"]
mod pdf_writer;
#[path = "../support/mod.rs"]
mod support;
#[path = "../token_ratio/mod.rs"]
mod token_ratio;

mod checks;
mod confidence_paths;
mod document;
mod document_one;
mod grounding;
mod instruction_tokens;
mod loop_detector;
mod loop_repetition;
mod media;
mod media_convert;
mod merge_keys;
mod partial_backend;
mod pdf;
mod response_cache;
mod samples;
mod worked_examples;

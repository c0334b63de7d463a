//! Every backend on the wire against local servers (Ollama, OpenAI-compatible, Anthropic, Gemini): requests,
//! streams, faults and retries, loops, guards, confidence, redirects, fallbacks and the blocking API.
//!
//! One test binary of several modules (a binary per file would link the whole library into each). The
//! tests that check logs share one global capture (`logs`).

#[path = "../batch_servers/mod.rs"]
mod batch_servers;
#[path = "../common/mod.rs"]
mod common;
#[path = "../support/mod.rs"]
mod support;

mod anthropic;
mod blocking;
mod confidence;
mod custom_provider;
mod derived;
mod element_loop;
mod exchanges;
mod fallback;
mod faults;
mod gemini;
mod gemini_files;
mod guard;
mod logs;
mod loops;
mod ollama;
mod openai;
mod prompt_caching;
mod provider_batch;
mod rate_limits;
mod redirects;

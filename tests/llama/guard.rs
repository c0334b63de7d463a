//! The loop guard on the real model (SmolLM2-135M-Instruct under greedy decoding): inputs that loop
//! without the guard (found with `cargo run --features llama-cpp --example loops`) stop early, recover,
//! and give a valid value within the attempt cap: on the embedded engine directly, and through the
//! OpenAI-compatible and Ollama backends against a local server that runs the same engine
//! (`tests/support/engine.rs`), where stopping means closing the connection.
#![cfg(feature = "llama-cpp")]

use crate::llama_common;
use crate::support;

#[path = "../../examples/support/loop_cases.rs"]
mod cases;

use cases::{Fact, Invoice, FACT_TEXTS, INVOICES};
use llama_common::model;
use llm_extract::extract::LoopGuard;
use llm_extract::report::{Attempt, AttemptKind};
use llm_extract::{llm::Finish, Extractor, Llm, Ollama, OpenAiCompatible};
use support::engine::{EngineServer, Served};

/// An invoice the model turns into a digit run (`"1250000000…`) under greedy decoding.
const LOOPING_INVOICE: &str = INVOICES[4];

/// Three facts whose list the model cycles under greedy decoding.
const LOOPING_FACTS: &str = FACT_TEXTS[0];

/// The context the model runs with: without the guard, a loop would run to it.
const CONTEXT: u64 = 4096;

fn looped(attempt: &Attempt) -> bool {
    attempt.finish == Some(Finish::Loop) && attempt.looped.is_some()
}

#[tokio::test]
async fn without_the_guard_the_invoice_loops_until_the_token_limit() {
    let err_or_value = Extractor::new(model())
        .loop_guard(LoopGuard::off())
        .max_tokens(300)
        .max_attempts(1)
        .extract::<Invoice>(LOOPING_INVOICE)
        .await;
    let attempts = match &err_or_value {
        Ok(out) => out.report.attempts.clone(),
        Err(e) => e.attempts().to_vec(),
    };
    assert_eq!(attempts[0].finish, Some(Finish::Length), "{attempts:?}");
    assert_eq!(attempts[0].usage.completion_tokens, 300);
}

#[tokio::test]
async fn the_looping_invoice_stops_early_and_recovers() {
    let out = Extractor::new(model())
        .extract::<Invoice>(LOOPING_INVOICE)
        .await
        .unwrap_or_else(|e| panic!("{e}: {:?}", e.attempts()));
    let first = &out.report.attempts[0];
    assert!(looped(first), "{first:?}");
    assert!(
        first.usage.completion_tokens < 100,
        "stopped within tens of tokens: {first:?}"
    );
    assert!(out.report.attempts.len() <= 3);
    assert_eq!(
        out.report.attempts.last().unwrap().kind,
        AttemptKind::Recovery
    );
    assert!(
        out.report.usage.completion_tokens < CONTEXT / 10,
        "{:?}",
        out.report.usage
    );
    assert!(!out.value.invoice_number.is_empty());
}

#[tokio::test]
async fn the_cycling_facts_stop_early_and_keep_their_items() {
    let out = Extractor::new(model())
        .extract_all::<Fact>(LOOPING_FACTS)
        .await
        .unwrap_or_else(|e| panic!("{e}: {:?}", e.attempts()));
    assert!(
        looped(&out.report.attempts[0]),
        "{:?}",
        out.report.attempts[0]
    );
    assert!(!out.value.is_empty());
    assert!(out.report.attempts.len() <= 3);
    assert!(
        out.report.usage.completion_tokens < CONTEXT / 10,
        "{:?}",
        out.report.usage
    );
    // No item twice: the loop's repeats were dropped.
    for (i, item) in out.value.iter().enumerate() {
        assert!(!out.value[..i].contains(item), "{:?}", out.value);
    }
}

/// The looping invoice through an HTTP backend served by the engine: the first answer loops, the client
/// closes the connection and the server's generation ends there, far below its token limit; the next
/// attempt carries the repeat penalty over the wire and gives a valid value.
async fn stops_and_recovers_over_http(llm: &dyn Llm, server: &EngineServer) {
    let out = Extractor::new(llm)
        .extract::<Invoice>(LOOPING_INVOICE)
        .await
        .unwrap_or_else(|e| panic!("{e}: {:?}", e.attempts()));
    let first = &out.report.attempts[0];
    assert!(looped(first), "{first:?}");
    assert!(out.report.attempts.len() <= 3, "{:?}", out.report.attempts);
    assert_eq!(
        out.report.attempts.last().unwrap().kind,
        AttemptKind::Recovery
    );
    assert!(!out.value.invoice_number.is_empty());

    let served: Vec<Served> = server.served(out.report.attempts.len());
    let stopped = &served[0];
    assert!(stopped.client_left, "{stopped:?}");
    let limit = u64::from(stopped.request.max_tokens.expect("a token limit is sent"));
    assert!(
        stopped.completion_tokens < limit / 2,
        "the engine stopped when the client left: {stopped:?}"
    );
    // Greedy and seeded by default; the recovery asked for a repeat penalty.
    assert_eq!(stopped.request.temperature, Some(0.0));
    assert!(stopped.request.seed.is_some());
    assert_eq!(stopped.request.repeat_penalty, None);
    let recovered = served.last().unwrap();
    assert!(
        recovered.request.repeat_penalty.is_some_and(|p| p > 1.0),
        "{recovered:?}"
    );
    assert!(!recovered.client_left, "{recovered:?}");
}

#[tokio::test]
async fn through_the_openai_compatible_server_the_looping_invoice_stops_and_recovers() {
    let server = EngineServer::start(model().clone());
    let llm = OpenAiCompatible::new(server.url(), "smollm2").unwrap();
    stops_and_recovers_over_http(&llm, &server).await;
}

#[tokio::test]
async fn through_the_ollama_server_the_looping_invoice_stops_and_recovers() {
    let server = EngineServer::start(model().clone());
    let llm = Ollama::builder("smollm2")
        .host(server.url())
        .build()
        .unwrap();
    stops_and_recovers_over_http(&llm, &server).await;
}

//! The whole pipeline on tokens a real model produced: `extract`, `extract_all` (JSON Lines under a
//! grammar), truncation, streaming, prompted mode with repairs, and the HTTP backends (`Ollama`,
//! `OpenAiCompatible`) against a local server that answers both wire formats by running the embedded engine.
//!
//! The 135M model is weak: these tests assert validity, types and the ledger, plus sanity checks that hold
//! for this model on these texts, never exact content. The model is loaded once for the binary.
#![cfg(feature = "llama-cpp")]

mod common;
mod llama_common;
mod support;

use common::types::{Extracted, OntologyItem};
use futures_util::StreamExt;
use llama_common::{model, ONTOLOGY_TEXT, PERSON_AND_COMPANY};
use llm_extract::llm::{BoxFuture, ChatEvent, ChatStream};
use llm_extract::{
    ChatRequest, Dialect, Extract, Extractor, Finish, Llm, LlmError, Mode, Ollama, OpenAiCompatible,
};
use serde::Serialize;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use support::engine::EngineServer;

fn assert_valid<T: Extract + Serialize>(value: &T) {
    let json = serde_json::to_value(value).unwrap();
    let validator = T::schema().validator().unwrap();
    assert!(
        validator.is_valid(&json),
        "{json} does not validate against {}",
        T::schema().name()
    );
}

fn names_nadella_or_microsoft(extracted: &Extracted) -> bool {
    [&extracted.person, &extracted.company]
        .into_iter()
        .flatten()
        .any(|n| n.contains("Nadella") || n.contains("Microsoft"))
}

#[tokio::test]
async fn one_value_from_a_short_sentence() {
    let extracted = Extractor::new(model())
        .max_tokens(64)
        .extract::<Extracted>(PERSON_AND_COMPANY)
        .await
        .unwrap();
    assert_valid(&extracted.value);
    assert!(
        names_nadella_or_microsoft(&extracted.value),
        "{:?}",
        extracted.value
    );
    assert_eq!(
        extracted.attempts.len(),
        1,
        "a constrained answer needs no repair"
    );
    assert!(extracted.usage.completion_tokens > 0);
}

#[tokio::test]
async fn json_lines_of_a_tagged_enum_are_typed_and_valid() {
    let items = Extractor::new(model())
        .max_tokens(160)
        .max_continuations(0)
        .extract_all::<OntologyItem>(ONTOLOGY_TEXT)
        .await
        .unwrap();
    assert!(
        !items.value.is_empty(),
        "no item; raw: {:?}",
        items.attempts.last().map(|a| &a.raw)
    );
    for item in &items.value {
        assert_valid(item);
    }
    // The engine constrains line by line, so the answer was JSON Lines, not a list object.
    let raw = &items.attempts[0].raw;
    assert!(raw.starts_with("{\"type\": "), "{raw:?}");
}

/// The complete lines of a JSON Lines answer (a last line without its newline was cut off).
fn complete_lines(raw: &str) -> usize {
    raw.matches('\n').count()
}

#[tokio::test]
async fn a_small_token_limit_keeps_every_complete_item_and_reports_length() {
    let items = Extractor::new(model())
        .max_tokens(70)
        .max_continuations(0)
        .repeat_limit(0)
        .extract_all::<OntologyItem>(ONTOLOGY_TEXT)
        .await
        .unwrap();
    assert_eq!(items.finish, Finish::Length, "{:?}", items.attempts);
    // Every complete line became an item (the grammar makes each one valid); a cut-off last line did not.
    let raw = &items.attempts[0].raw;
    assert_eq!(items.value.len(), complete_lines(raw), "{raw:?}");
    assert!(!items.value.is_empty(), "{raw:?}");
    for item in &items.value {
        assert_valid(item);
    }
}

/// An `Llm` that passes everything through and records when the answer's end went by.
struct Observed<L> {
    inner: L,
    done: Arc<AtomicBool>,
}

impl<L: Llm> Llm for Observed<L> {
    fn dialect(&self) -> Dialect {
        self.inner.dialect()
    }
    fn constrains_json_lines(&self) -> bool {
        self.inner.constrains_json_lines()
    }
    fn chat_stream(&self, request: ChatRequest) -> BoxFuture<'_, Result<ChatStream, LlmError>> {
        let done = Arc::clone(&self.done);
        Box::pin(async move {
            let stream = self.inner.chat_stream(request).await?;
            let observed = stream.inspect(move |event| {
                if matches!(event, Ok(ChatEvent::Done(_))) {
                    done.store(true, Ordering::SeqCst);
                }
            });
            Ok(Box::pin(observed) as ChatStream)
        })
    }
}

#[tokio::test]
async fn the_first_item_arrives_while_the_model_is_still_generating() {
    let done = Arc::new(AtomicBool::new(false));
    let llm = Observed {
        inner: model().clone(),
        done: Arc::clone(&done),
    };
    let extractor = Extractor::new(llm).max_tokens(120).max_continuations(0);
    let mut stream = extractor.extract_stream::<OntologyItem>(ONTOLOGY_TEXT);
    let first = stream.next().await.expect("at least one item").unwrap();
    assert!(
        !done.load(Ordering::SeqCst),
        "the answer had already ended when {first:?} arrived"
    );
    assert_valid(&first);
    let mut rest = 0;
    while let Some(item) = stream.next().await {
        assert_valid(&item.unwrap());
        rest += 1;
    }
    let report = stream.report().expect("a report once the stream ended");
    // The ledger holds the answer the items came from (when the extractor stops a looping model early,
    // the cancelled request reports no usage, so only the text is checked).
    let raw = report.last_raw().unwrap_or_default();
    assert!(
        raw.matches('\n').count() > rest,
        "{report:?} ({rest} more items)"
    );
}

#[tokio::test]
async fn prompted_mode_with_repairs_is_valid_or_an_error_with_every_attempt() {
    let result = Extractor::new(model())
        .mode(Mode::Prompted)
        .max_attempts(2)
        .max_tokens(64)
        .extract::<Extracted>(PERSON_AND_COMPANY)
        .await;
    match result {
        Ok(extracted) => {
            assert_valid(&extracted.value);
            assert!(!extracted.attempts.is_empty() && extracted.attempts.len() <= 2);
        }
        Err(err) => {
            let attempts = err.attempts();
            assert_eq!(
                attempts.len(),
                2,
                "every allowed attempt is in the ledger: {err}"
            );
            assert!(attempts.iter().all(|a| a.error.is_some()), "{attempts:?}");
            assert!(
                attempts.iter().all(|a| a.usage.completion_tokens > 0),
                "{attempts:?}"
            );
            assert_eq!(err.usage(), attempts[0].usage + attempts[1].usage);
        }
    }
}

// ---- The HTTP backends, served by the embedded engine ----

#[tokio::test]
async fn ollama_and_openai_backends_extract_from_real_generation() {
    let server = EngineServer::start(model().clone());

    let ollama = Ollama::builder("smollm2")
        .host(server.url())
        .build()
        .unwrap();
    let one = Extractor::new(&ollama)
        .max_tokens(64)
        .extract::<Extracted>(PERSON_AND_COMPANY)
        .await
        .unwrap();
    assert_valid(&one.value);
    assert!(names_nadella_or_microsoft(&one.value), "{:?}", one.value);
    assert!(
        one.usage.prompt_tokens > 0 && one.usage.completion_tokens > 0,
        "{:?}",
        one.usage
    );

    let openai = OpenAiCompatible::new(server.url(), "smollm2").unwrap();
    let many = Extractor::new(&openai)
        .max_tokens(160)
        .max_continuations(0)
        .extract_all::<OntologyItem>(ONTOLOGY_TEXT)
        .await
        .unwrap();
    assert!(!many.value.is_empty(), "{:?}", many.attempts);
    for item in &many.value {
        assert_valid(item);
    }

    // The schemas went over the wire and constrained the real decoding.
    let requests = server.requests();
    let chat = requests.iter().find(|r| r.path == "/api/chat").unwrap();
    assert!(
        chat.json["format"]["properties"]["person"].is_object(),
        "{}",
        chat.json
    );
    let completions = requests
        .iter()
        .find(|r| r.path == "/v1/chat/completions")
        .unwrap();
    let sent = &completions.json["response_format"]["json_schema"]["schema"];
    assert!(
        sent["properties"]["items"]["items"].is_object(),
        "the list schema: {sent}"
    );
    assert!(
        many.attempts[0]
            .raw
            .trim_start()
            .starts_with("{\"items\": ["),
        "{:?}",
        many.attempts[0].raw
    );
}

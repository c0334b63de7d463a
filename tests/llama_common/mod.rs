//! Shared by the real-model tests (`tests/llama/`): the model, loaded once per test binary.
//!
//! The model is the file `LLM_EXTRACT_MODEL` names, else the default model that `scripts/fetch-model.sh`
//! caches. Nothing is downloaded here: without a model these tests fail, saying what to run.
#![allow(dead_code)]

use futures_util::StreamExt;
use llm_extract::llm::llama_cpp::LlamaCpp;
use llm_extract::llm::{BoxFuture, ChatEvent, ChatStream};
use llm_extract::{llm::ChatRequest, schema::Dialect, Llm, LlmError};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

/// The model every real-model test of this binary shares (requests queue on it, one at a time).
pub fn model() -> &'static LlamaCpp {
    static MODEL: OnceLock<LlamaCpp> = OnceLock::new();
    MODEL.get_or_init(|| match LlamaCpp::from_env() {
        Ok(model) => model,
        Err(e) => panic!(
            "the real-model tests need a GGUF model: {e}\n(scripts/test.sh and .ci/run fetch it first; \
             or run scripts/fetch-model.sh, or set LLM_EXTRACT_MODEL to a GGUF file)"
        ),
    })
}

/// A short text naming one person and one company.
pub const PERSON_AND_COMPANY: &str = "Satya Nadella is the chief executive of Microsoft.";

/// A short text with entities, relationships and attributes.
pub const ONTOLOGY_TEXT: &str =
    "Marie Curie was a physicist born in Warsaw. She worked at the University of Paris.";

/// An `Llm` that passes everything through and records when the answer's end went by (so a test can
/// check an item arrived while the model was still generating).
pub struct Observed<L> {
    /// The backend observed.
    pub inner: L,
    /// Set once a `ChatEvent::Done` has passed.
    pub done: Arc<AtomicBool>,
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

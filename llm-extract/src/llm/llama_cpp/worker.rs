//! [`Llm`] for [`LlamaCpp`]: a request is prepared on a blocking thread (prompt, grammar), then queued on
//! the model's scheduler, which streams its text through a channel.

use super::exit::Inside;
use super::generate::Out;
use super::{GrammarEngine, LlamaCpp, LlamaCppError};
use crate::llm::{
    BoxFuture, ChatEvent, ChatRequest, ChatStream, Description, Llm, LlmError, MediaLimits,
    MediaSupport,
};
use crate::schema::Dialect;
use std::sync::Arc;

impl Llm for LlamaCpp {
    /// The full schema: llguidance enforces it, falling back to the gbnf lowering only for what it
    /// refuses (`grammar.rs`).
    fn dialect(&self) -> Dialect {
        Dialect::Generic
    }

    fn constrains_json_lines(&self) -> bool {
        true
    }

    /// The model's own tokenizer, without special tokens; `None` once the process is exiting.
    ///
    /// Tokenizing a chunk of a document takes milliseconds, and a document is counted chunk by chunk:
    /// on a multi-threaded tokio runtime the worker thread hands its other tasks to another thread for
    /// that time ([`tokio::task::block_in_place`]). On a current-thread runtime there is no other thread
    /// to hand them to, and the count runs in place.
    fn count_tokens(&self, text: &str) -> Option<usize> {
        let count = || self.engine.count_tokens(text);
        match tokio::runtime::Handle::try_current().map(|runtime| runtime.runtime_flavor()) {
            Ok(tokio::runtime::RuntimeFlavor::MultiThread) => tokio::task::block_in_place(count),
            _ => count(),
        }
    }

    /// With llguidance (the default grammar engine): a grounded string is a span of the source by
    /// construction (`grounded.rs`). llama.cpp's GBNF sampler has no such lexeme.
    fn constrains_grounding(&self) -> bool {
        self.engine.settings.grammar_engine == GrammarEngine::Guidance
    }

    /// `llama.cpp` and the model's name; no address (the model runs in this process).
    fn describe(&self) -> Option<Description> {
        Some(Description::new("llama.cpp").with_model(self.model_name()))
    }

    /// The embedded engine reads text only: a request with images or PDFs is refused whole, never
    /// run without them.
    fn accepts(&self, request: &ChatRequest) -> Result<(), LlmError> {
        if request.has_media() {
            MediaSupport::none(
                "embedded llama.cpp",
                "the embedded engine reads text only: read the PDF's text and extract from that, \
                 or use a backend with a vision model",
            )
            .check(request, &MediaLimits::none())?;
        }
        Ok(())
    }

    /// The engine scores options itself (`log_likelihood.rs`).
    fn likelihood(&self) -> Option<&dyn crate::llm::Likelihood> {
        Some(self)
    }

    fn chat_stream(&self, request: ChatRequest) -> BoxFuture<'_, Result<ChatStream, LlmError>> {
        let engine = Arc::clone(&self.engine);
        Box::pin(async move {
            self.accepts(&request)?;
            // Unbounded: generation must never wait for a reader (the other sequences of its batch would
            // wait too). Dropping the receiver cancels the generation at its next step.
            let (events, receiver) = tokio::sync::mpsc::unbounded_channel::<Out>();
            let sink = Box::new(move |out: Out| match out {
                Out::Text(text) if text.is_empty() => !events.is_closed(),
                out => events.send(out).is_ok(),
            });
            let (ready, queued) = tokio::sync::oneshot::channel::<Result<(), LlmError>>();
            // Tokenizing and building the grammar take a while (the first grammar of a model, a few
            // hundred milliseconds): not on the async runtime's threads.
            let job = move || {
                let queued = Inside::enter()
                    .and_then(|_inside| engine.submit(&request, sink))
                    .map_err(LlmError::from);
                let _ = ready.send(queued);
            };
            match tokio::runtime::Handle::try_current() {
                Ok(runtime) => drop(runtime.spawn_blocking(job)),
                Err(_) => drop(std::thread::spawn(job)),
            }
            queued.await.map_err(|_| {
                LlamaCppError::engine("the request was dropped before it was queued")
            })??;
            let stream = futures_util::stream::unfold(receiver, |mut receiver| async move {
                let event = match receiver.recv().await? {
                    Out::Text(text) => Ok(ChatEvent::Delta(text)),
                    Out::Done(result) => match *result {
                        Ok(generation) => Ok(ChatEvent::Done(generation.response)),
                        Err(e) => Err(e.into()),
                    },
                };
                Some((event, receiver))
            });
            Ok(Box::pin(stream) as ChatStream)
        })
    }
}

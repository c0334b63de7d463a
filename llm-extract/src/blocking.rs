//! Extraction for callers without an async runtime.
//!
//! Every call runs on one runtime this module owns, created on first use: a tokio runtime with a single
//! worker thread. A single worker rather than a fresh current-thread runtime per call, because a backend's
//! pooled connections belong to the runtime that opened them: with one long-lived runtime they stay usable
//! from call to call and from thread to thread.
//!
//! Calling these functions from inside an async runtime is an error (it would block that runtime's
//! thread); use the async API there.
//!
//! ```
//! use llm_extract::llm::{from_fn, ChatResponse};
//! use llm_extract::{blocking, Extractor, schema::SchemaSet};
//! use serde_json::json;
//!
//! let llm = from_fn(|_request| async { Ok(ChatResponse::new(r#"{"ok": true}"#)) });
//! let schema = SchemaSet::new("Check", json!({
//!     "type": "object", "properties": {"ok": {"type": "boolean"}},
//!     "required": ["ok"], "additionalProperties": false
//! }));
//! let extractor = Extractor::new(llm);
//! let out = blocking::run(extractor.with_schema(&schema).extract("all good?"))?;
//! assert_eq!(out.value, json!({"ok": true}));
//! # Ok::<(), llm_extract::ExtractError>(())
//! ```

use crate::extract::{ExtractError, ExtractErrorKind, ExtractStream, PartialEvent};
use crate::llm::Llm;
use crate::parse::PartialValue;
use crate::report::Report;
use crate::Extract;
use futures_util::StreamExt;
use std::future::Future;
use std::sync::OnceLock;

fn runtime() -> Result<&'static tokio::runtime::Runtime, ExtractError> {
    static RUNTIME: OnceLock<Result<tokio::runtime::Runtime, String>> = OnceLock::new();
    let runtime = RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("llm-extract-blocking")
            .enable_all()
            .build()
            .map_err(|e| format!("cannot start the blocking facade's runtime: {e}"))
    });
    match runtime {
        Ok(runtime) => Ok(runtime),
        Err(message) => Err(runtime_error(message.clone())),
    }
}

fn runtime_error(message: String) -> ExtractError {
    ExtractError::new(ExtractErrorKind::Runtime { message }, Report::default())
}

fn check_not_async() -> Result<(), ExtractError> {
    if tokio::runtime::Handle::try_current().is_ok() {
        return Err(runtime_error(
            "llm_extract::blocking was called from inside an async runtime, which it would block; \
             use the async API (`.await`) there"
                .to_owned(),
        ));
    }
    Ok(())
}

/// Runs any extraction future to completion, e.g. an [`Extractor`](crate::Extractor) call.
pub fn run<T, P>(
    future: impl Future<Output = Result<T, ExtractError<P>>>,
) -> Result<T, ExtractError<P>> {
    let runtime = check_not_async()
        .and_then(|()| runtime())
        .map_err(|err| err.with_kept(Vec::new()))?;
    runtime.block_on(future)
}

/// Blocking [`Extract::extract`].
pub fn extract<T: Extract, L: Llm + ?Sized>(llm: &L, text: &str) -> Result<T, ExtractError> {
    run(T::extract(llm, text))
}

/// Blocking [`Extract::extract_all`].
pub fn extract_all<T: Extract, L: Llm + ?Sized>(
    llm: &L,
    text: &str,
) -> Result<Vec<T>, ExtractError<T>> {
    run(T::extract_all(llm, text))
}

/// Blocking [`Extract::extract_stream`]: an iterator that yields each item as it completes.
pub fn extract_iter<'a, T: Extract, L: Llm + ?Sized>(llm: &'a L, text: &str) -> Iter<'a, T> {
    iter(T::extract_stream(llm, text))
}

/// Blocking [`Extract::extract_partial`]: an iterator of the value as it is written, as
/// [`PartialEvent`]s: snapshots of its partial form ([`Partial<T>`](crate::parse::Partial)) while the
/// answer streams, each value inside it as it completes, and [`PartialEvent::Final`] (the validated
/// value and its ledger) last. On failure the last item is the error.
///
/// Each call to `next` blocks until the next event; a snapshot not read before the next chunk arrives
/// is replaced by the newer one, so a slow reader sees the latest state, never a backlog.
///
/// ```
/// use llm_extract::extract::PartialEvent;
/// use llm_extract::llm::{from_stream_fn, ChatEvent, ChatResponse, ChatStream};
/// use llm_extract::{blocking, Extract};
///
/// #[derive(Extract, serde::Deserialize, Debug)]
/// struct Person {
///     name: String,
///     age: u32,
/// }
///
/// let llm = from_stream_fn(|_request| async {
///     let chunks = [r#"{"name": "Ada"#, r#" Lovelace", "age": 3"#, "6}"];
///     let events = chunks
///         .into_iter()
///         .map(|chunk| Ok(ChatEvent::Delta(chunk.to_owned())))
///         .chain([Ok(ChatEvent::Done(ChatResponse::new("")))]);
///     Ok(Box::pin(futures_util::stream::iter(events)) as ChatStream)
/// });
/// for event in blocking::extract_partial::<Person, _>(&llm, "Ada Lovelace, 36") {
///     match event? {
///         PartialEvent::Snapshot(person) => println!("so far: {person:?}"),
///         PartialEvent::Final { extraction, .. } => assert_eq!(extraction.value.age, 36),
///         _ => {}
///     }
/// }
/// # Ok::<(), llm_extract::ExtractError>(())
/// ```
pub fn extract_partial<'a, T: Extract + PartialValue, L: Llm + ?Sized>(
    llm: &'a L,
    text: &str,
) -> Iter<'a, PartialEvent<T>> {
    iter(T::extract_partial(llm, text))
}

/// Iterates any [`ExtractStream`] without an async runtime (e.g.
/// [`Extractor::extract_partial`](crate::Extractor::extract_partial)'s events).
pub fn iter<O>(stream: ExtractStream<'_, O>) -> Iter<'_, O> {
    Iter {
        stream,
        failed: false,
    }
}

/// A blocking iterator over an [`ExtractStream`]; see [`extract_iter`].
#[derive(Debug)]
pub struct Iter<'a, O> {
    stream: ExtractStream<'a, O>,
    failed: bool,
}

impl<O> Iter<'_, O> {
    /// The ledger, once the iteration has ended without error.
    pub fn report(&self) -> Option<&Report> {
        self.stream.report()
    }
}

impl<O> Iterator for Iter<'_, O> {
    type Item = Result<O, ExtractError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        let next = check_not_async()
            .and_then(|()| runtime())
            .map(|runtime| runtime.block_on(self.stream.next()));
        match next {
            Ok(item) => item,
            Err(err) => {
                self.failed = true;
                Some(Err(err))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::{from_fn, ChatResponse};
    use crate::schema::SchemaSet;
    use serde_json::json;

    fn schema() -> SchemaSet {
        SchemaSet::new(
            "N",
            json!({"type": "object", "properties": {"n": {"type": "integer"}},
                   "required": ["n"], "additionalProperties": false}),
        )
    }

    #[test]
    fn iterates_a_stream_without_a_runtime() {
        let llm = from_fn(|_| async { Ok(ChatResponse::new("{\"n\":1}\n{\"n\":2}\n")) });
        let extractor = crate::Extractor::new(llm);
        let schema = schema();
        let mut items = iter(extractor.with_schema(&schema).extract_stream("x"));
        let values: Vec<_> = items.by_ref().map(Result::unwrap).collect();
        assert_eq!(values, [json!({"n": 1}), json!({"n": 2})]);
        assert!(items.report().is_some());
    }

    #[tokio::test]
    async fn refuses_to_block_inside_a_runtime() {
        let llm = from_fn(|_| async { Ok(ChatResponse::new("{\"n\":1}")) });
        let extractor = crate::Extractor::new(llm);
        let schema = schema();
        let err = run(extractor.with_schema(&schema).extract("x")).unwrap_err();
        assert!(matches!(err.kind(), ExtractErrorKind::Runtime { .. }));
    }
}

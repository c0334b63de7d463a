//! [`ExtractStream`]: the extraction loop driven from `poll_next`, yielding items as they complete.
//!
//! The loop is the same one `extract_all` runs; here its item sink is a queue this stream drains. The loop
//! runs inside `poll_next` (no task is spawned), so the stream may borrow the extractor and needs no
//! `'static` bounds.

use crate::extract::engine::meter::Spent;
use crate::extract::error::ExtractError;
use crate::llm::{BoxFuture, Usage};
use crate::report::Report;
use futures_core::Stream;
use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};

/// A stream of extracted items, each yielded as soon as its line (or array element) is complete.
///
/// An error, if any, is the last item; items yielded before it stay valid. When the stream has ended
/// without error, [`ExtractStream::report`] holds the attempts, usage, finish and skipped lines, and
/// with [`Extractor::confidence`](crate::extract::Extractor::confidence) each item's confidence by the order
/// the items were yielded (`/0/name`; the error's report holds the same on failure). A
/// caller that stops reading early can still read what was spent with [`ExtractStream::usage`]; dropping
/// the stream cancels the request and logs that cost (a `tracing` event at INFO).
///
/// ```
/// use futures_util::StreamExt;
/// use llm_extract::extract::Extractor;
/// use llm_extract::llm::{from_fn, ChatResponse};
/// use llm_extract::schema::SchemaSet;
/// use serde_json::json;
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let llm = from_fn(|_request| async { Ok(ChatResponse::new("{\"n\": 1}\n{\"n\": 2}\n")) });
/// let schema = SchemaSet::new("N", json!({
///     "type": "object", "properties": {"n": {"type": "integer"}},
///     "required": ["n"], "additionalProperties": false
/// }));
/// let extractor = Extractor::new(llm);
/// let mut stream = extractor.with_schema(&schema).extract_stream("two numbers");
/// let mut seen = Vec::new();
/// while let Some(item) = stream.next().await {
///     seen.push(item?);
/// }
/// assert_eq!(seen, [json!({"n": 1}), json!({"n": 2})]);
/// assert_eq!(stream.report().unwrap().attempts.len(), 1);
/// # Ok::<(), llm_extract::extract::ExtractError>(())
/// # }).unwrap();
/// ```
pub struct ExtractStream<'a, O> {
    run: Option<BoxFuture<'a, Result<Report, ExtractError>>>,
    queue: Arc<Mutex<VecDeque<O>>>,
    report: Option<Report>,
    error: Option<ExtractError>,
    spent: Arc<Spent>,
}

/// Where the loop puts the items of a stream.
pub(crate) struct Sink<O> {
    queue: Arc<Mutex<VecDeque<O>>>,
}

impl<O> Sink<O> {
    /// Queues `item` for the stream's caller.
    pub(crate) fn push(&self, item: O) {
        self.queue
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push_back(item);
    }

    /// Takes back the last queued item if the caller has not read it yet and `wanted` says so (a
    /// snapshot a newer one replaces).
    pub(crate) fn take_last_if(&self, wanted: impl FnOnce(&O) -> bool) -> Option<O> {
        let mut queue = self.queue.lock().unwrap_or_else(PoisonError::into_inner);
        match queue.back() {
            Some(last) if wanted(last) => queue.pop_back(),
            _ => None,
        }
    }
}

impl<'a, O: Send + 'a> ExtractStream<'a, O> {
    /// Starts `run` with a sink feeding this stream.
    pub(crate) fn start<F, Fut>(run: F) -> Self
    where
        F: FnOnce(Box<dyn FnMut(O) + Send + 'a>, Arc<Spent>) -> Fut,
        Fut: Future<Output = Result<Report, ExtractError>> + Send + 'a,
    {
        Self::start_with_sink(move |sink, spent| {
            let push: Box<dyn FnMut(O) + Send + 'a> = Box::new(move |item| sink.push(item));
            run(push, spent)
        })
    }

    /// Starts `run` with the sink itself (to take back what the caller has not read yet).
    pub(crate) fn start_with_sink<F, Fut>(run: F) -> Self
    where
        F: FnOnce(Sink<O>, Arc<Spent>) -> Fut,
        Fut: Future<Output = Result<Report, ExtractError>> + Send + 'a,
    {
        let queue = Arc::new(Mutex::new(VecDeque::new()));
        let sink = Sink {
            queue: Arc::clone(&queue),
        };
        let spent = Arc::new(Spent::default());
        ExtractStream {
            run: Some(Box::pin(run(sink, Arc::clone(&spent)))),
            queue,
            report: None,
            error: None,
            spent,
        }
    }
}

impl<O> ExtractStream<'_, O> {
    /// The ledger, once the stream has ended without error (on error, the error carries it).
    pub fn report(&self) -> Option<&Report> {
        self.report.as_ref()
    }

    /// The tokens spent so far: every finished attempt plus the estimate of the answer streaming now
    /// ([`Usage::estimated`]). Once the stream has ended, the same as the report's usage.
    pub fn usage(&self) -> Usage {
        match (&self.report, &self.error) {
            (Some(report), _) => report.usage,
            (None, Some(error)) => error.usage(),
            (None, None) => self.spent.total(),
        }
    }

    fn pop(&self) -> Option<O> {
        self.queue
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop_front()
    }
}

impl<O> Stream for ExtractStream<'_, O> {
    type Item = Result<O, ExtractError>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        loop {
            if let Some(item) = this.pop() {
                return Poll::Ready(Some(Ok(item)));
            }
            let Some(run) = this.run.as_mut() else {
                break;
            };
            match run.as_mut().poll(cx) {
                Poll::Pending => {
                    // Items pushed during this poll must not wait for the next wake-up.
                    return match this.pop() {
                        Some(item) => Poll::Ready(Some(Ok(item))),
                        None => Poll::Pending,
                    };
                }
                Poll::Ready(outcome) => {
                    this.run = None;
                    match outcome {
                        Ok(report) => this.report = Some(report),
                        Err(error) => this.error = Some(error),
                    }
                }
            }
        }
        Poll::Ready(this.error.take().map(Err))
    }
}

impl<O> Drop for ExtractStream<'_, O> {
    fn drop(&mut self) {
        if self.run.is_some() {
            let usage = self.spent.total();
            tracing::info!(
                prompt_tokens = usage.prompt_tokens,
                completion_tokens = usage.completion_tokens,
                estimated = usage.estimated,
                "extraction stream dropped before its end; the request is cancelled"
            );
        }
    }
}

impl<O> std::fmt::Debug for ExtractStream<'_, O> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExtractStream")
            .field("running", &self.run.is_some())
            .field("report", &self.report)
            .field("error", &self.error)
            .finish_non_exhaustive()
    }
}

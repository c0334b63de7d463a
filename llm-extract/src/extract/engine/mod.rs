//! The extraction loop, written once for every target (typed or untyped) and both answer shapes.
//!
//! One value ([`Engine::one`]): ask, parse and validate locally, and on failure ask again with the
//! original conversation plus the bad answer (cut to a bounded size) plus a short turn listing each
//! problem. The history never grows beyond the last bad answer. A cut-off answer is kept only if what
//! arrived validates once closed (a recorded fix); otherwise it is a distinct error.
//!
//! Many items ([`Engine::many`]): stream the answer through the incremental decoder and hand every item
//! on as soon as it completes. Then, in this order: an answer cut off by the token limit is continued
//! after its last complete item (the assistant turn holds the complete items, never the cut answer);
//! broken lines are re-asked, and only they; duplicates of kept items are dropped. While streaming, the
//! same item several times in a row stops the generation (the model is looping), and so does reaching
//! `max_items`.
//!
//! Loops: every answer (one value or many) is streamed through the loop detectors (`extract/loops/`), which also follow the arrays and objects inside it at any depth (the same long element
//! written again and again in one value is a loop, reported with the path of its array); a loop drops
//! the stream, and the next attempt, within `max_attempts`, is a recovery with
//! a repeat penalty (then also a small temperature), for a list continuing after the last good item.
//! Cost: an answer stopped early or broken is counted as it streamed (`meter.rs`).
//!
//! Broken streams: a backend that sends a request again after its stream broke says so
//! ([`ChatEvent::Restart`](crate::llm::ChatEvent::Restart)); the broken part stays in the ledger as an
//! attempt of the same kind, with its cost, and the answer starts over. A list's items handed on before
//! the break stay handed on: the new stream's items that repeat them are skipped, each as many times as
//! it was handed on (a greedy model writes the same answer again), so nothing reaches the caller twice
//! and a document that names the same item twice keeps both.
//!
//! Files: `request.rs` builds the first request, `value.rs` runs the loop for one value, `many.rs` for many
//! items, whose answers `answer.rs` streams through the decoder and `intake.rs` hands on item by item;
//! `unwrap.rs` reads the answer to a root sent wrapped in an object (see
//! [`WRAPPER_KEY`](crate::schema::dialect::WRAPPER_KEY)) as the value it wraps. Every streamed answer,
//! one value's (`watch.rs`) or a list's (`answer.rs`), is read by the one `answer_reader.rs`: the events
//! merged, the loop detector fed, the cost metered (`meter.rs`) and reported, a stream sent again
//! after a break closed as a broken answer. `tokens.rs` says how many tokens a request may spend;
//! `telemetry.rs` is the one place the loop asks the backend, with its spans. `stream.rs` drives the
//! loop from a stream's `poll_next`, and `partial_events.rs` watches one value's answer as it is written.

use super::loops;
use super::setup::config::Config;
use crate::llm::{ChatRequest, Finish, Llm, LlmError, Message, Usage};
use crate::report::{Attempt, AttemptError, AttemptKind, Report, Sampling};
use std::time::Instant;

mod answer;
mod answer_reader;
mod intake;
mod many;
pub(crate) mod meter;
pub(crate) mod partial_events;
mod request;
pub(crate) mod stream;
pub(crate) mod telemetry;
pub(crate) mod tokens;
mod unwrap;
mod value;
pub(crate) mod watch;

use meter::Spent;

/// What a watched extraction of one value reports as it runs.
pub(crate) enum Progress<'a> {
    /// Attempt `number` of this kind starts: its answer replaces the previous one. Numbers are positions
    /// in the ledger: an answer whose stream broke and was sent again counts as one.
    Attempt { number: u32, kind: AttemptKind },
    /// The next piece of the answer.
    Delta(&'a str),
}

/// The loop's view of an extractor: the backend and the settings.
#[derive(Clone, Copy)]
pub(crate) struct Engine<'a> {
    pub llm: &'a dyn Llm,
    pub config: &'a Config,
    /// Where a stream's caller can read the running cost.
    pub spent: Option<&'a Spent>,
}

impl<'a> Engine<'a> {
    /// The same engine, reporting its running cost to `spent`.
    pub fn with_spent(self, spent: &'a Spent) -> Self {
        Engine {
            spent: Some(spent),
            ..self
        }
    }

    /// The request of an attempt: the first one with `turns` added, and after `loops_seen` loops the
    /// recovery's changes (`loops::recover`).
    fn attempt_request(
        &self,
        first: &ChatRequest,
        turns: Vec<Message>,
        loops_seen: u32,
    ) -> ChatRequest {
        let mut request = first.clone();
        request.messages.extend(turns);
        if loops_seen > 0 {
            loops::recover(&mut request, &self.config.recovery, loops_seen);
        }
        request
    }

    /// Whether the attempts' spans carry their messages (`Extractor::trace_content`).
    fn content(&self) -> telemetry::Content {
        telemetry::Content::when(self.config.trace_content)
    }

    /// Adds an attempt to the ledger, and its cost to the running total a stream's caller can read.
    fn push(&self, report: &mut Report, mut attempt: Attempt) {
        attempt.backend = attempt.backend.or_else(crate::llm::take_answered);
        if let Some(spent) = self.spent {
            spent.settled(attempt.usage);
        }
        report.push(attempt);
    }
}

/// The ledger's record of an answer whose stream broke and was sent again, which handed on `items`.
fn broken_attempt(
    kind: AttemptKind,
    broken: answer_reader::Broken,
    items: usize,
    sampling: Sampling,
) -> Attempt {
    Attempt {
        kind,
        raw: broken.raw,
        thinking: Some(broken.thinking).filter(|t| !t.is_empty()),
        error: Some(AttemptError::Llm(broken.error)),
        usage: broken.usage,
        finish: None,
        looped: None,
        sampling,
        items,
        elapsed: broken.elapsed,
        backend: None,
        cached: false,
    }
}

fn failed_attempt(kind: AttemptKind, err: &LlmError, started: Instant) -> Attempt {
    Attempt {
        kind,
        raw: err.received().unwrap_or_default().to_owned(),
        thinking: None,
        error: Some(AttemptError::Llm(err.clone())),
        usage: Usage::default(),
        finish: None,
        looped: None,
        sampling: Sampling::default(),
        items: 0,
        elapsed: started.elapsed(),
        backend: None,
        cached: false,
    }
}

fn attempt_span(llm: &dyn Llm, schema: &str, number: u32, kind: AttemptKind) -> tracing::Span {
    telemetry::attempt_span(llm, schema, number, kind)
}

fn record(span: &tracing::Span, finish: Option<&Finish>, usage: Usage, items: usize) {
    span.record("items", items);
    if let Some(finish) = finish {
        span.record("finish", tracing::field::display(finish));
    }
    span.record("prompt_tokens", usage.prompt_tokens);
    span.record("completion_tokens", usage.completion_tokens);
}

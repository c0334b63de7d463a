//! The one reader of a streamed answer, under both the one-value watch (`watch.rs`) and a list's
//! answer (`answer.rs`): the stream's events merged by the one [`Accumulator`], every text delta fed to
//! the loop detector, the cost counted as it streams (`meter.rs`) and reported to the running total a
//! stream's caller reads ([`Spent`]). A stream the backend sent again after a break
//! ([`ChatEvent::Restart`](crate::llm::ChatEvent::Restart)) ends as a [`Broken`] answer with its cost
//! settled, and the meter and the detector start over on the new one. What the text means (one value
//! watched, items decoded) is the caller's.

use crate::extract::engine::meter::{Meter, Spent};
use crate::extract::engine::telemetry::{self, Content};
use crate::extract::loops::{Bounds, LoopDetector, LoopGuard};
use crate::llm::{
    Accumulator, ChatRequest, ChatResponse, ChatStream, Llm, LlmError, Merged, Usage,
};
use crate::report::Loop;
use futures_util::StreamExt;
use std::time::{Duration, Instant};

/// An answer whose stream broke and whose request the backend sent again
/// ([`ChatEvent::Restart`](crate::llm::ChatEvent::Restart)).
pub(crate) struct Broken {
    /// Why it was dropped.
    pub error: LlmError,
    /// The answer text received before the break.
    pub raw: String,
    /// The reasoning text received before the break.
    pub thinking: String,
    /// What it cost (estimated where the server did not say).
    pub usage: Usage,
    /// How long it streamed.
    pub elapsed: Duration,
}

/// What the next event of the stream did.
pub(crate) enum Read {
    /// Answer text arrived: [`Reader::text`] from byte `from` on. `looped` is the loop the detector saw
    /// in it, if it saw one.
    Text { from: usize, looped: Option<Loop> },
    /// Reasoning text arrived.
    Thinking,
    /// The stream broke and was sent again: the answer before the break, its cost settled and added to
    /// the running total. The answer starts over from nothing.
    Restart(Broken),
    /// The end: the backend's summary, its usage completed by the meter where the server left counts
    /// out. With `text_in_summary`, the whole text arrived only now (it is [`Reader::text`]).
    Done {
        summary: ChatResponse,
        text_in_summary: bool,
    },
    /// The stream failed.
    Failed(LlmError),
}

/// One streamed answer as it is read.
pub(crate) struct Reader<'r> {
    stream: ChatStream,
    answer: Accumulator,
    guard: LoopGuard,
    bounds: &'r Bounds,
    detector: LoopDetector,
    /// The meter of a new stream (the request's prompt estimate, no events).
    fresh: Meter,
    meter: Meter,
    spent: Option<&'r Spent>,
    started: Instant,
}

impl<'r> Reader<'r> {
    /// Sends `request` as a stream, to be read under `guard` against `bounds` (string values bounded
    /// by [`LoopGuard::max_string`], repeats judged against the input), reporting its running cost to
    /// `spent`; `content` says whether the attempt's span records the messages and the answer.
    pub async fn open(
        llm: &dyn Llm,
        request: ChatRequest,
        (guard, content): (LoopGuard, Content),
        bounds: &'r Bounds,
        spent: Option<&'r Spent>,
    ) -> Result<Self, LlmError> {
        let started = Instant::now();
        let fresh = Meter::new(&request);
        let stream = telemetry::chat_stream(llm, request, content).await?;
        Ok(Reader {
            stream,
            answer: Accumulator::new(),
            guard,
            bounds,
            detector: bounds.detector(guard),
            fresh,
            meter: fresh,
            spent,
            started,
        })
    }

    /// The next event, or `None` when the stream ended without its summary.
    pub async fn next(&mut self) -> Option<Read> {
        let event = match self.stream.next().await? {
            Ok(event) => event,
            Err(err) => return Some(Read::Failed(err)),
        };
        let read = match self.answer.merge(event) {
            Merged::Restart {
                error,
                usage,
                text,
                thinking,
            } => {
                let usage = self.meter.settle(usage);
                if let Some(spent) = self.spent {
                    spent.settled(usage);
                }
                let broken = Broken {
                    error,
                    raw: text,
                    thinking,
                    usage,
                    elapsed: self.started.elapsed(),
                };
                self.meter = self.fresh;
                self.detector = self.bounds.detector(self.guard);
                self.started = Instant::now();
                return Some(Read::Restart(broken));
            }
            Merged::Text { from } => {
                self.meter.event();
                let delta = self.answer.text().get(from..).unwrap_or_default();
                let looped = match self.guard.is_on() {
                    true => self.detector.feed(delta.as_bytes()),
                    false => None,
                };
                Read::Text { from, looped }
            }
            Merged::Thinking => {
                self.meter.event();
                Read::Thinking
            }
            Merged::Done {
                mut summary,
                text_in_summary,
            } => {
                summary.usage = self.meter.settle(summary.usage);
                return Some(Read::Done {
                    summary,
                    text_in_summary,
                });
            }
        };
        if let Some(spent) = self.spent {
            spent.streaming(self.meter.estimate());
        }
        Some(read)
    }

    /// The answer text received so far.
    pub fn text(&self) -> &str {
        self.answer.text()
    }

    /// What the answer has cost so far, by the meter.
    pub fn estimate(&self) -> Usage {
        self.meter.estimate()
    }

    /// When the current answer (since the last break) started.
    pub fn started(&self) -> Instant {
        self.started
    }

    /// The finished answer: `summary` (from [`Read::Done`]) with the text and reasoning that streamed.
    pub fn complete(self, summary: ChatResponse) -> ChatResponse {
        self.answer.complete(summary)
    }

    /// The answer so far as a response of its own, the stream dropped (which cancels the generation).
    pub fn into_response(self) -> ChatResponse {
        self.answer.into_response()
    }

    /// The answer text and reasoning received so far, the stream dropped.
    pub fn into_parts(self) -> (String, String) {
        self.answer.into_parts()
    }

    /// The error of a stream that ended without its summary, with the text received so far.
    pub fn unfinished(self) -> LlmError {
        self.answer.unfinished()
    }
}

//! One answer of one value, streamed and watched: every delta goes through the loop detector, and a loop
//! drops the stream at once (the embedded engine stops at its next token, an HTTP backend's connection
//! closes). What the answer cost is counted as it streams, so a stopped or broken answer still has a
//! cost. A stream the backend restarted after a break
//! ([`ChatEvent::Restart`](crate::llm::ChatEvent::Restart)) leaves its broken part as a [`Broken`]
//! answer, with what it cost, and the watch starts over on the new one. The stream's events are merged
//! by the one [`Accumulator`].

use crate::extract::engine::meter::{Meter, Spent};
use crate::extract::engine::telemetry;
use crate::extract::loops::Bounds;
use crate::extract::loops::LoopGuard;
use crate::llm::{Accumulator, ChatRequest, ChatResponse, Finish, Llm, LlmError, Merged, Usage};
use crate::report::Loop;
use futures_util::StreamExt;
use std::time::{Duration, Instant};

/// How one watched answer ended.
pub(crate) struct Watched {
    /// The answer, or the backend's failure.
    pub response: Result<ChatResponse, LlmError>,
    /// The loop that stopped it (then `response` is `Ok` with [`Finish::Loop`]).
    pub looped: Option<Loop>,
    /// What it cost (estimated where the backend did not say).
    pub usage: Usage,
    /// The answers before it whose stream broke and that the backend sent again, in order. Their cost
    /// is already added to the running total.
    pub broken: Vec<Broken>,
}

impl Watched {
    /// A watch that ended with `response`.
    fn ended(
        response: Result<ChatResponse, LlmError>,
        looped: Option<Loop>,
        usage: Usage,
        broken: Vec<Broken>,
    ) -> Self {
        Watched {
            response,
            looped,
            usage,
            broken,
        }
    }
}

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

/// What an observer of a watched answer hears.
pub(crate) enum Heard<'a> {
    /// The next piece of the answer.
    Delta(&'a str),
    /// The stream broke and was sent again: the answer starts over from nothing.
    Restart,
}

/// What sees each piece of the answer as it arrives (a partial extraction's parser).
pub(crate) type Observer<'o> = &'o mut (dyn FnMut(Heard<'_>) + Send);

/// Sends `request` and watches its answer against `bounds` (string values bounded by
/// [`LoopGuard::max_string`], repeats judged against the input), handing each piece to `observer` as
/// it arrives. With the guard off and
/// no observer, the answer is not streamed (the backend's `chat`).
pub(crate) async fn watch(
    llm: &dyn Llm,
    request: ChatRequest,
    guard: LoopGuard,
    bounds: &Bounds,
    spent: Option<&Spent>,
    mut observer: Option<Observer<'_>>,
) -> Watched {
    if !guard.is_on() && observer.is_none() {
        let response = telemetry::chat(llm, request).await;
        let usage = response.as_ref().map(|r| r.usage).unwrap_or_default();
        return Watched::ended(response, None, usage, Vec::new());
    }
    let fresh_meter = Meter::new(&request);
    let mut meter = fresh_meter;
    let mut broken = Vec::new();
    let failed = |err, usage, broken| Watched::ended(Err(err), None, usage, broken);
    let mut stream = match telemetry::chat_stream(llm, request).await {
        Ok(stream) => stream,
        Err(err) => return failed(err, Usage::default(), broken),
    };
    let mut detector = bounds.detector(guard);
    let mut answer = Accumulator::new();
    let mut started = Instant::now();
    while let Some(event) = stream.next().await {
        let event = match event {
            Ok(event) => event,
            Err(err) => return failed(err, meter.estimate(), broken),
        };
        match answer.merge(event) {
            Merged::Restart {
                error,
                usage,
                text,
                thinking,
            } => {
                let usage = meter.settle(usage);
                if let Some(spent) = spent {
                    spent.settled(usage);
                }
                broken.push(Broken {
                    error,
                    raw: text,
                    thinking,
                    usage,
                    elapsed: started.elapsed(),
                });
                meter = fresh_meter;
                detector = bounds.detector(guard);
                started = Instant::now();
                if let Some(observe) = observer.as_mut() {
                    observe(Heard::Restart);
                }
                continue;
            }
            Merged::Text { from } => {
                meter.event();
                let delta = answer.text().get(from..).unwrap_or_default();
                if let Some(observe) = observer.as_mut() {
                    observe(Heard::Delta(delta));
                }
                let found = match guard.is_on() {
                    true => detector.feed(delta.as_bytes()),
                    false => None,
                };
                if let Some(found) = found {
                    // Dropping the stream cancels the generation.
                    drop(stream);
                    let usage = meter.estimate();
                    if let Some(spent) = spent {
                        spent.streaming(usage);
                    }
                    let mut response = answer.into_response();
                    response.usage = usage;
                    response.finish = Finish::Loop;
                    return Watched::ended(Ok(response), Some(found), usage, broken);
                }
            }
            Merged::Thinking => meter.event(),
            Merged::Done {
                summary,
                text_in_summary,
            } => {
                if text_in_summary {
                    // A backend that streamed nothing but the whole answer at the end.
                    if let Some(observe) = observer.as_mut() {
                        observe(Heard::Delta(answer.text()));
                    }
                }
                let mut done = answer.complete(summary);
                done.usage = meter.settle(done.usage);
                let usage = done.usage;
                return Watched::ended(Ok(done), None, usage, broken);
            }
        }
        if let Some(spent) = spent {
            spent.streaming(meter.estimate());
        }
    }
    failed(answer.unfinished(), meter.estimate(), broken)
}

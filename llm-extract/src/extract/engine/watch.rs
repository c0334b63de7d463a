//! One answer of one value, streamed and watched: every delta goes through the loop detector, and a loop
//! drops the stream at once (the embedded engine stops at its next token, an HTTP backend's connection
//! closes). What the answer cost is counted as it streams, so a stopped or broken answer still has a
//! cost. A stream the backend restarted after a break
//! ([`ChatEvent::Restart`](crate::llm::ChatEvent::Restart)) leaves its broken part as a [`Broken`]
//! answer, with what it cost, and the watch starts over on the new one. The stream is read by the one
//! [`Reader`] (`answer_reader.rs`), as a list's answer is.

use crate::extract::engine::answer_reader::{Broken, Read, Reader};
use crate::extract::engine::meter::Spent;
use crate::extract::engine::telemetry::{self, Content};
use crate::extract::loops::{Bounds, LoopGuard};
use crate::llm::{ChatRequest, ChatResponse, Finish, Llm, LlmError, Usage};
use crate::report::Loop;

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
/// it arrives; `content` says whether the attempt's span records the messages and the answer. With the
/// guard off and no observer, the answer is not streamed (the backend's `chat`).
pub(crate) async fn watch(
    llm: &dyn Llm,
    request: ChatRequest,
    (guard, content): (LoopGuard, Content),
    bounds: &Bounds,
    spent: Option<&Spent>,
    mut observer: Option<Observer<'_>>,
) -> Watched {
    if !guard.is_on() && observer.is_none() {
        let response = telemetry::chat(llm, request, content).await;
        let usage = response.as_ref().map(|r| r.usage).unwrap_or_default();
        return Watched::ended(response, None, usage, Vec::new());
    }
    let mut broken = Vec::new();
    let failed = |err, usage, broken| Watched::ended(Err(err), None, usage, broken);
    let mut reader = match Reader::open(llm, request, (guard, content), bounds, spent).await {
        Ok(reader) => reader,
        Err(err) => return failed(err, Usage::default(), broken),
    };
    while let Some(read) = reader.next().await {
        match read {
            Read::Failed(err) => return failed(err, reader.estimate(), broken),
            Read::Restart(answer) => {
                broken.push(answer);
                if let Some(observe) = observer.as_mut() {
                    observe(Heard::Restart);
                }
            }
            Read::Text { from, looped } => {
                if let Some(observe) = observer.as_mut() {
                    observe(Heard::Delta(reader.text().get(from..).unwrap_or_default()));
                }
                if let Some(found) = looped {
                    let usage = reader.estimate();
                    // Dropping the stream cancels the generation.
                    let mut response = reader.into_response();
                    response.usage = usage;
                    response.finish = Finish::Loop;
                    return Watched::ended(Ok(response), Some(found), usage, broken);
                }
            }
            Read::Thinking => {}
            Read::Done {
                summary,
                text_in_summary,
            } => {
                if text_in_summary {
                    // A backend that streamed nothing but the whole answer at the end.
                    if let Some(observe) = observer.as_mut() {
                        observe(Heard::Delta(reader.text()));
                    }
                }
                let done = reader.complete(summary);
                let usage = done.usage;
                return Watched::ended(Ok(done), None, usage, broken);
            }
        }
    }
    let usage = reader.estimate();
    failed(reader.unfinished(), usage, broken)
}

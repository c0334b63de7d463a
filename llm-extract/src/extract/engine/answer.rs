//! One answer of a list, streamed: each piece goes through the loop detector, then the decoder, and
//! every item it completes goes through the [`Intake`] at once. A stream the backend sent again after a
//! break starts the detector and the decoder over; what the broken part handed on stays handed on. The
//! stream is read by the one [`Reader`] (`answer_reader.rs`), as one value's watched answer is.

use super::intake::{Intake, Kept};
use super::Engine;
use crate::check::CheckError;
use crate::extract::engine::answer_reader::{Broken, Read, Reader};
use crate::extract::loops;
use crate::extract::setup::target::{settle_items, Target};
use crate::llm::{ChatRequest, Finish, LlmError, TokenLogprob, Usage};
use crate::parse::{LineDecoder, LineEvent, Skipped, WithJson};
use crate::report::AttemptKind;
use crate::report::{Loop, LoopKind};
use std::time::Instant;

/// One streamed answer.
pub(super) struct Answer {
    pub raw: String,
    pub thinking: String,
    pub usage: Usage,
    pub finish: Option<Finish>,
    pub error: Option<LlmError>,
    /// A check that could not run on an item: the answer stops there.
    pub check: Option<CheckError>,
    pub items: usize,
    pub skipped: Vec<Skipped>,
    pub started: Instant,
    pub looped: Option<Loop>,
    /// The answers before it whose stream broke and was sent again, with the items each handed on.
    pub broken: Vec<(Broken, usize)>,
    /// Its tokens with their log-probabilities, when asked for and given.
    pub logprobs: Option<Vec<TokenLogprob>>,
    /// Whether the backend's summary arrived (with the tokens, when given): the answer was read to its
    /// end, not stopped early (`max_items`, a loop, a failed check) nor broken.
    pub ended: bool,
    /// The answer came from a response cache.
    pub cached: bool,
}

impl Answer {
    fn new() -> Self {
        Answer {
            raw: String::new(),
            thinking: String::new(),
            usage: Usage::default(),
            finish: None,
            error: None,
            check: None,
            items: 0,
            skipped: Vec::new(),
            started: Instant::now(),
            looped: None,
            broken: Vec::new(),
            logprobs: None,
            ended: false,
            cached: false,
        }
    }
}

impl Engine<'_> {
    /// Streams one answer through the decoder, handing complete items on.
    pub(super) async fn answer<G: Target>(
        &self,
        target: &G,
        request: ChatRequest,
        kind: AttemptKind,
        bounds: &loops::Bounds,
        kept: &mut Kept,
        sink: &mut (dyn FnMut(G::Output) + Send + '_),
    ) -> Answer {
        let mut answer = Answer::new();
        let guard = self.config.loop_guard;
        let mut reader = match Reader::open(
            self.llm,
            request,
            (guard, self.content()),
            bounds,
            self.spent,
        )
        .await
        {
            Ok(reader) => reader,
            Err(err) => {
                answer.error = Some(err);
                return answer;
            }
        };
        let mut decoder = target.decoder(self.config.parse);
        // Duplicates are dropped only in follow-up answers, which tend to restate what was kept; within
        // the first answer, only a run of identical items is treated as a loop.
        let dedupe = kind != AttemptKind::First;
        let limits = (guard, &bounds.input_text);
        let mut intake = Intake::new(kept, sink, dedupe, self.config.max_items, limits);
        let mut stopped = None;
        let mut reported = None;
        while let Some(read) = reader.next().await {
            let mut looped = None;
            let chunk = match read {
                Read::Failed(err) => {
                    answer.error = Some(err);
                    break;
                }
                Read::Restart(broken) => {
                    // The stream broke and was sent again: what it handed on stays handed on, and the
                    // new answer's first items that repeat it are not handed on twice.
                    answer.broken.push((broken, intake.items));
                    decoder = target.decoder(self.config.parse);
                    intake.restart(guard);
                    continue;
                }
                Read::Text {
                    from,
                    looped: found,
                } => {
                    let delta = reader.text().get(from..).unwrap_or_default().as_bytes();
                    // Only the bytes before a loop reach the decoder: the items before it are kept.
                    let upto = found
                        .as_ref()
                        .map_or(delta.len(), |l| l.start.saturating_sub(from));
                    looped = found;
                    intake.bytes = from + upto;
                    decoder.feed(delta.get(..upto).unwrap_or_default())
                }
                Read::Thinking => continue,
                Read::Done {
                    summary,
                    text_in_summary,
                } => {
                    reported = Some(summary.usage);
                    answer.logprobs = summary.logprobs;
                    answer.ended = true;
                    answer.cached = summary.cached;
                    answer.finish = Some(summary.finish);
                    if !text_in_summary {
                        break;
                    }
                    // A backend that sent its whole text only in the summary.
                    decoder.feed(reader.text().as_bytes())
                }
            };
            let chunk = match settle_items(target, chunk).await {
                Ok(chunk) => chunk,
                Err(error) => {
                    answer.check = Some(error);
                    break;
                }
            };
            stopped = take(&mut intake, target.vet(chunk), looped, &mut answer);
            if stopped.is_some() || answer.finish.is_some() {
                break;
            }
        }
        answer.usage = reported.unwrap_or_else(|| reader.estimate());
        answer.started = reader.started();
        // Dropping the stream cancels the request when we stopped early.
        (answer.raw, answer.thinking) = reader.into_parts();
        answer.conclude(target, decoder, intake, stopped).await;
        answer
    }
}

/// Takes the decoder's `events` into `intake`; returns why the answer must stop, if it must: a loop of
/// items (the intake's), or the loop `looped` the bytes showed (recorded in `answer`).
fn take<O>(
    intake: &mut Intake<'_, '_, O>,
    events: Vec<LineEvent<WithJson<O>>>,
    looped: Option<Loop>,
    answer: &mut Answer,
) -> Option<Finish> {
    let stopped = intake.take_all(events);
    if stopped == Some(Finish::Loop) {
        answer.looped = Some(Loop {
            kind: LoopKind::Items,
            start: intake.new_item_at,
            detected_at: intake.bytes,
            path: None,
        });
        return stopped;
    }
    match looped.filter(|_| stopped.is_none()) {
        Some(found) => {
            answer.looped = Some(found);
            Some(Finish::Loop)
        }
        None => stopped,
    }
}

impl Answer {
    /// Ends the answer once its stream is over: unless it was stopped or failed, what the decoder
    /// still holds is taken (from the thinking channel when the content is empty: some servers put
    /// the whole answer there); the items the loop guard held back are handed on unless they were a
    /// loop; the counts are recorded.
    async fn conclude<G: Target>(
        &mut self,
        target: &G,
        mut decoder: LineDecoder<'_, WithJson<G::Output>>,
        mut intake: Intake<'_, '_, G::Output>,
        mut stopped: Option<Finish>,
    ) {
        if stopped.is_none() && self.error.is_none() && self.check.is_none() {
            if self.raw.trim().is_empty() && !self.thinking.trim().is_empty() {
                let events = decoder.feed(self.thinking.as_bytes());
                match settle_items(target, events).await {
                    Ok(events) => stopped = intake.take_all(target.vet(events)),
                    Err(error) => self.check = Some(error),
                }
            }
            if stopped.is_none() && self.check.is_none() {
                match settle_items(target, decoder.finish()).await {
                    Ok(events) => stopped = intake.take_all(target.vet(events)),
                    Err(error) => self.check = Some(error),
                }
            }
        }
        if stopped != Some(Finish::Loop) {
            intake.flush();
        }
        if let Some(stop) = stopped {
            self.finish = Some(stop);
        }
        self.items = intake.items;
        self.skipped = intake.skipped;
    }
}

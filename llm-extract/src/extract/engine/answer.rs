//! One answer of a list, streamed: each piece goes through the loop detector, then the decoder, and
//! every item it completes goes through the [`Intake`] at once. A stream the backend sent again after a
//! break starts the detector and the decoder over; what the broken part handed on stays handed on.

use super::intake::{Intake, Kept};
use super::Engine;
use crate::check::CheckError;
use crate::extract::engine::meter::Meter;
use crate::extract::engine::{telemetry, watch};
use crate::extract::loops;
use crate::extract::loops::LoopDetector;
use crate::extract::setup::target::{settle_items, Target};
use crate::llm::{Accumulator, ChatRequest, Finish, LlmError, Merged, TokenLogprob, Usage};
use crate::parse::{LineDecoder, LineEvent, Skipped, WithJson};
use crate::report::AttemptKind;
use crate::report::{Loop, LoopKind};
use futures_util::StreamExt;
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
    pub broken: Vec<(watch::Broken, usize)>,
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

/// What one stream of an answer is read with; a stream sent again after a break starts them over.
struct Reading<'t, O> {
    meter: Meter,
    detector: LoopDetector,
    decoder: LineDecoder<'t, WithJson<O>>,
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
        let fresh = Meter::new(&request);
        let start = || Reading {
            meter: fresh,
            detector: bounds.detector(guard),
            decoder: target.decoder(self.config.parse),
        };
        let mut stream = match telemetry::chat_stream(self.llm, request).await {
            Ok(stream) => stream,
            Err(err) => {
                answer.error = Some(err);
                return answer;
            }
        };
        let mut reading = start();
        // Duplicates are dropped only in follow-up answers, which tend to restate what was kept; within
        // the first answer, only a run of identical items is treated as a loop.
        let dedupe = kind != AttemptKind::First;
        let limits = (guard, &bounds.source);
        let mut intake = Intake::new(kept, sink, dedupe, self.config.max_items, limits);
        let mut text = Accumulator::new();
        let mut stopped = None;
        let mut reported = None;
        while let Some(event) = stream.next().await {
            let event = match event {
                Ok(event) => event,
                Err(err) => {
                    answer.error = Some(err);
                    break;
                }
            };
            let mut looped = None;
            let chunk = match text.merge(event) {
                Merged::Restart {
                    error,
                    usage,
                    text: raw,
                    thinking,
                } => {
                    // The stream broke and was sent again: what it handed on stays handed on, and the
                    // new answer's first items that repeat it are not handed on twice.
                    let usage = reading.meter.settle(usage);
                    if let Some(spent) = self.spent {
                        spent.settled(usage);
                    }
                    answer.restart(error, (raw, thinking), usage, intake.items);
                    reading = start();
                    intake.restart(guard);
                    continue;
                }
                Merged::Text { from } => {
                    reading.meter.event();
                    let delta = text.text().get(from..).unwrap_or_default().as_bytes();
                    looped = reading.detector.feed(delta);
                    // Only the bytes before a loop reach the decoder: the items before it are kept.
                    let upto = looped
                        .as_ref()
                        .map_or(delta.len(), |l| l.start.saturating_sub(from));
                    intake.bytes = from + upto;
                    reading.decoder.feed(delta.get(..upto).unwrap_or_default())
                }
                Merged::Thinking => {
                    reading.meter.event();
                    self.streaming(&reading.meter);
                    continue;
                }
                Merged::Done {
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
                    reading.decoder.feed(text.text().as_bytes())
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
            self.streaming(&reading.meter);
            if stopped.is_some() || answer.finish.is_some() {
                break;
            }
        }
        answer.usage = reported.map_or_else(
            || reading.meter.estimate(),
            |usage| reading.meter.settle(usage),
        );
        // Dropping the stream cancels the request when we stopped early.
        drop(stream);
        (answer.raw, answer.thinking) = text.into_parts();
        answer
            .conclude(target, reading.decoder, intake, stopped)
            .await;
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
    /// The stream broke and was sent again: what it received (its text and thinking), what it cost and
    /// the items it handed on are kept as a broken answer, and the answer starts over.
    fn restart(
        &mut self,
        error: LlmError,
        (raw, thinking): (String, String),
        usage: Usage,
        items: usize,
    ) {
        let broken = watch::Broken {
            error,
            raw,
            thinking,
            usage,
            elapsed: self.started.elapsed(),
        };
        self.broken.push((broken, items));
        self.started = Instant::now();
    }

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

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
//! broken lines are re-asked, and only they; repeats of kept items are dropped. While streaming, the
//! same item several times in a row stops the generation (the model is looping), and so does reaching
//! `max_items`.
//!
//! Loops: every answer (one value or many) is streamed through the loop detectors (`parse::repetition`,
//! `loops.rs`); a loop drops the stream, and the next attempt, within `max_attempts`, is a recovery with
//! a repeat penalty (then also a small temperature), for a list continuing after the last good item.
//! Cost: an answer stopped early or broken is counted as it streamed (`meter.rs`).
//!
//! Broken streams: a backend that sends a request again after its stream broke says so
//! ([`ChatEvent::Restart`]); the broken part stays in the ledger as an attempt of the same kind, with its
//! cost, and the answer starts over. A list's items handed on before the break stay handed on: the new
//! stream's items that repeat them are skipped, each as many times as it was handed on (a greedy model
//! writes the same answer again), so nothing reaches the caller twice and a document that names the
//! same item twice keeps both.

use super::config::{Config, Input, Mode};
use super::error::{ExtractError, ExtractErrorKind};
use super::example_turns;
use super::loops::{self, ItemGuard, Verdict};
use super::meter::{Meter, Spent};
use super::target::{Found, Target};
use super::wording::{self, AnswerShape};
use super::{tokens, watch};
use crate::llm::{ChatEvent, ChatRequest, ChatResponse, Finish, Llm, LlmError, Message, Usage};
use crate::parse::{
    Fix, LineEvent, Loop, LoopGuard, LoopKind, ParseError, Repeats, SkipReason, Skipped, WithJson,
};
use crate::report::{Attempt, AttemptError, AttemptKind, Extraction, Report, Sampling};
use crate::schema::Shape;
use futures_util::StreamExt;
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Instant;
use tracing::Instrument;

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

    /// The first request: system prompt with format instructions, the filled template, and in
    /// constrained mode the schema rendered for the backend's dialect; with the shape of the answer, the
    /// longest string value it may hold (from the input's length, `loops::max_string`), and what the
    /// backend will not enforce of the schema sent (for [`Report::unenforced`]).
    fn first_request(
        &self,
        target: &impl Target,
        input: Input,
        many: bool,
    ) -> Result<(ChatRequest, AnswerShape, Option<usize>, Option<String>), ExtractError> {
        let fail = |kind| ExtractError::new(kind, Report::default());
        let config = self.config;
        let vars = input
            .into_vars()
            .map_err(|e| fail(ExtractErrorKind::Template(e)))?;
        let user = wording::render(&config.template, &vars)
            .map_err(|e| fail(ExtractErrorKind::Template(e)))?;
        let set = target.schema();
        let constrained = matches!(config.mode, Mode::Constrained | Mode::Tool);
        let (shape, schema_shape) = match (many, constrained) {
            (false, _) => (AnswerShape::One, Shape::One),
            (true, true) if !self.llm.constrains_json_lines() => (AnswerShape::List, Shape::List),
            (true, _) => (AnswerShape::Lines, Shape::Line),
        };
        let definitions = if many {
            set.line_format_instructions()
        } else {
            set.format_instructions()
        };
        let max_items = if many { config.max_items } else { None };
        let examples = example_turns::turns(config, target, shape, &vars)
            .map_err(|kind| ExtractError::new(kind, Report::default()))?;
        let mut system =
            wording::system_prompt(&config.instructions, shape, definitions, max_items);
        example_turns::note(&mut system, examples.len() / 2);
        let mut request = ChatRequest::new(user).with_system(system);
        request.messages = examples.into_iter().chain(request.messages).collect();
        let mut unenforced = None;
        if constrained {
            // A backend that grounds while decoding gets the source and the schema with its marks.
            let grounding = target
                .grounding()
                .filter(|_| self.llm.constrains_grounding() && config.mode == Mode::Constrained);
            let lowering = match grounding {
                Some(_) => set.lowering_grounded(self.llm.dialect(), schema_shape),
                None => set.lowering(self.llm.dialect(), schema_shape),
            }
            .map_err(|e| fail(ExtractErrorKind::Schema(e)))?;
            let mut schema = lowering.schema().clone();
            request.grounding = grounding.map(Arc::from);
            if let (AnswerShape::List, Some(n), true) =
                (shape, max_items, self.llm.dialect().carries_max_items())
            {
                if let Some(items) = schema
                    .pointer_mut("/properties/items")
                    .and_then(Value::as_object_mut)
                {
                    items.insert("maxItems".into(), Value::from(n));
                }
            }
            request = request.with_schema(set.name(), schema);
            request.schema_relaxed = !lowering.strict();
            unenforced = lowering.notice(self.llm.dialect());
            request.json_lines = shape == AnswerShape::Lines;
            request.tool_call = config.mode == Mode::Tool;
        }
        request.max_tokens = Some(config.max_tokens.unwrap_or_else(|| {
            if many {
                tokens::for_list(set.generic(), max_items)
            } else {
                tokens::for_one(set.generic())
            }
        }));
        // Greedy and seeded unless the caller says otherwise: the same request gets the same answer on
        // every backend, and a loop is recovered from deliberately (`loops::recover`).
        request.temperature = Some(config.temperature.unwrap_or(0.0));
        request.seed = Some(config.seed.unwrap_or(0));
        let max_string = loops::max_string(&config.loop_guard, &vars, set.generic());
        Ok((request, shape, max_string, unenforced))
    }

    /// Checks the token budget before a request and lowers its `max_tokens` to what is left.
    fn within_budget(
        &self,
        report: &Report,
        request: &mut ChatRequest,
    ) -> Result<(), ExtractErrorKind> {
        let Some(budget) = self.config.token_budget else {
            return Ok(());
        };
        let spent = report.usage.total();
        if spent >= budget {
            return Err(ExtractErrorKind::Budget { budget, spent });
        }
        let left = u32::try_from(budget - spent).unwrap_or(u32::MAX);
        request.max_tokens = Some(request.max_tokens.map_or(left, |n| n.min(left)));
        Ok(())
    }

    /// Extracts one value.
    pub async fn one<G: Target>(
        &self,
        target: &G,
        input: Input,
    ) -> Result<Extraction<G::Output>, ExtractError> {
        self.one_watched(target, input, None).await
    }

    /// Extracts one value, telling `progress` when each attempt starts and each piece of its answer as
    /// it arrives (a partial extraction, `partial.rs`).
    pub async fn one_watched<G: Target>(
        &self,
        target: &G,
        input: Input,
        mut progress: Option<&mut (dyn FnMut(Progress<'_>) + Send)>,
    ) -> Result<Extraction<G::Output>, ExtractError> {
        let (first, _, max_string, unenforced) = self.first_request(target, input, false)?;
        let name = target.schema().name();
        let mut report = Report {
            unenforced,
            ..Report::default()
        };
        let mut follow_up: Vec<Message> = Vec::new();
        let mut last_error = None;
        let mut loops_seen: u32 = 0;
        let mut last_loop = None;
        let mut rejected = loops::Rejected::default();
        let max_attempts = self.config.max_attempts.max(1);
        let mut kind = AttemptKind::First;
        for number in 1..=max_attempts {
            let mut request = first.clone();
            request.messages.append(&mut follow_up);
            if loops_seen > 0 {
                loops::recover(&mut request, &self.config.loop_guard, loops_seen);
            }
            loops::unstick(&mut request, &self.config.loop_guard, rejected.repeats);
            if let Err(kind) = self.within_budget(&report, &mut request) {
                return Err(ExtractError::new(kind, report));
            }
            let sampling = Sampling::of(&request);
            let span = attempt_span(name, number, kind);
            let started = Instant::now();
            let guard = self.config.loop_guard;
            let mut forward;
            let observer: Option<watch::Observer<'_>> = match progress.as_mut() {
                Some(progress) => {
                    // Numbered as in the ledger, where a broken answer sent again is an attempt too.
                    let mut position = ledger_position(&report);
                    progress(Progress::Attempt {
                        number: position,
                        kind,
                    });
                    forward = move |heard: watch::Heard<'_>| match heard {
                        watch::Heard::Delta(delta) => progress(Progress::Delta(delta)),
                        watch::Heard::Restart => {
                            position += 1;
                            progress(Progress::Attempt {
                                number: position,
                                kind,
                            });
                        }
                    };
                    Some(&mut forward)
                }
                None => None,
            };
            let watched = watch::watch(self.llm, request, guard, max_string, self.spent, observer)
                .instrument(span.clone())
                .await;
            for broken in watched.broken {
                // Its cost is in the running total already.
                report.push(broken_attempt(kind, broken, 0, sampling));
            }
            let response = match watched.response {
                Ok(response) => response,
                Err(err) => {
                    let mut attempt = failed_attempt(kind, &err, started);
                    attempt.usage = watched.usage;
                    attempt.sampling = sampling;
                    self.push(&mut report, attempt);
                    return Err(ExtractError::new(ExtractErrorKind::Llm(err), report));
                }
            };
            let text = answer_text(&response);
            let cut_off = response.finish == Finish::Length;
            let options = self
                .config
                .parse
                .with_salvage(cut_off || self.config.parse.salvage);
            let parsed = match watched.repetition {
                // A loop: a complete valid value before it (the model closed its answer, then kept
                // on writing and looped in what followed) is the answer. On the last attempt, a value
                // cut by the loop is salvaged like a cut answer. Otherwise recover.
                Some(found) => {
                    let before = text.get(..found.start).unwrap_or(text);
                    match target.parse_one(before, &options) {
                        Ok(parsed) => Ok(Ok(parsed)),
                        Err(_) if number == max_attempts => {
                            match target.parse_one(before, &options.with_salvage(true)) {
                                Ok(parsed) => Ok(Ok(parsed)),
                                Err(_) => Err(found),
                            }
                        }
                        Err(_) => Err(found),
                    }
                }
                None => Ok(target.parse_one(text, &options)),
            };
            let valid = matches!(parsed, Ok(Ok(_)));
            record(
                &span,
                Some(&response.finish),
                watched.usage,
                usize::from(valid),
            );
            let mut attempt = Attempt {
                kind,
                raw: response.text.clone(),
                thinking: response.thinking.clone(),
                error: None,
                usage: watched.usage,
                finish: Some(response.finish.clone()),
                repetition: watched.repetition,
                sampling,
                items: usize::from(valid),
                elapsed: started.elapsed(),
            };
            let parsed = match parsed {
                Ok(parsed) => parsed,
                Err(found) => {
                    attempt.error = Some(AttemptError::Repetition(found));
                    self.push(&mut report, attempt);
                    loops_seen += 1;
                    last_loop = Some(found);
                    kind = AttemptKind::Recovery;
                    continue;
                }
            };
            kind = AttemptKind::Repair;
            match parsed {
                Ok(parsed) => {
                    self.push(&mut report, attempt);
                    report.fixes = parsed.fixes;
                    return Ok(Extraction::new(parsed.value, report));
                }
                Err(error) => {
                    attempt.error = Some(AttemptError::Parse(error.clone()));
                    self.push(&mut report, attempt);
                    match error {
                        ParseError::InvalidSchema { source, .. } => {
                            return Err(ExtractError::new(ExtractErrorKind::Schema(source), report))
                        }
                        error if cut_off => {
                            return Err(ExtractError::new(
                                ExtractErrorKind::Truncated(error),
                                report,
                            ))
                        }
                        error => {
                            rejected.note(text);
                            follow_up = vec![
                                Message::assistant(wording::cut(text, self.config.max_echo_chars)),
                                Message::user(wording::repair_one(&error)),
                            ];
                            last_error = Some(error);
                        }
                    }
                }
            }
        }
        if report.finish == Some(Finish::Repetition) {
            if let Some(found) = last_loop {
                return Err(ExtractError::new(
                    ExtractErrorKind::Repetition(found),
                    report,
                ));
            }
        }
        let error = last_error.unwrap_or(ParseError::NoJson { raw: String::new() });
        Err(ExtractError::new(ExtractErrorKind::Invalid(error), report))
    }

    /// The answer streaming now has cost what `meter` counted so far.
    fn streaming(&self, meter: &Meter) {
        if let Some(spent) = self.spent {
            spent.streaming(meter.estimate());
        }
    }

    /// Adds an attempt to the ledger, and its cost to the running total a stream's caller can read.
    fn push(&self, report: &mut Report, attempt: Attempt) {
        if let Some(spent) = self.spent {
            spent.settled(attempt.usage);
        }
        report.push(attempt);
    }

    /// Extracts many items, handing each to `sink` as soon as it is complete.
    pub async fn many<G: Target>(
        &self,
        target: &G,
        input: Input,
        sink: &mut (dyn FnMut(G::Output) + Send + '_),
    ) -> Result<Report, ExtractError> {
        let (first, shape, max_string, unenforced) = self.first_request(target, input, true)?;
        let name = target.schema().name();
        let mut kept = Kept::default();
        let mut report = Report {
            unenforced,
            ..Report::default()
        };
        // Broken lines not yet repaired, with the number of the answer they came from.
        let mut unresolved: Vec<(u32, Skipped)> = Vec::new();
        let mut cut_item: Option<Skipped> = None;
        let mut repairs_used = 1;
        let mut continuations_used = 0;
        let mut next = Some((AttemptKind::First, Vec::new()));
        let mut number: u32 = 0;
        let mut loops_seen: u32 = 0;
        while let Some((kind, turns)) = next.take() {
            number += 1;
            let mut request = first.clone();
            request.messages.extend(turns);
            if loops_seen > 0 {
                loops::recover(&mut request, &self.config.loop_guard, loops_seen);
            }
            let sampling = Sampling::of(&request);
            if let Err(budget) = self.within_budget(&report, &mut request) {
                if kind == AttemptKind::First {
                    return Err(ExtractError::new(budget, report));
                }
                break; // spent: keep what we have
            }
            let span = attempt_span(name, number, kind);
            let mut answer = self
                .answer(target, request, kind, max_string, &mut kept, sink)
                .instrument(span.clone())
                .await;
            for (broken, items) in std::mem::take(&mut answer.broken) {
                // Its cost is in the running total already.
                report.push(broken_attempt(kind, broken, items, sampling));
            }

            // Sort what the answer skipped: a cut-off last item is for continuation, prose is ignored
            // unless the whole answer was prose, everything else is re-asked.
            let cut = answer.finish == Some(Finish::Length) || answer.error.is_some();
            let mut broken = Vec::new();
            let mut prose = Vec::new();
            cut_item = None;
            for skipped in answer.skipped {
                match skipped.reason {
                    SkipReason::Truncated if cut => cut_item = Some(skipped),
                    SkipReason::NotJson => prose.push(skipped),
                    _ => broken.push(skipped),
                }
            }
            let no_json =
                answer.items == 0 && broken.is_empty() && cut_item.is_none() && !prose.is_empty();
            let error = match (&answer.error, no_json) {
                (Some(err), _) => Some(AttemptError::Llm(err.clone())),
                (None, true) => Some(AttemptError::Lines(prose)),
                (None, false) if !broken.is_empty() => Some(AttemptError::Lines(broken.clone())),
                _ => None,
            };
            let error = match (error, answer.repetition) {
                (None, Some(found)) if answer.items == 0 => Some(AttemptError::Repetition(found)),
                (error, _) => error,
            };
            record(&span, answer.finish.as_ref(), answer.usage, answer.items);
            self.push(
                &mut report,
                Attempt {
                    kind,
                    raw: answer.raw.clone(),
                    thinking: Some(answer.thinking).filter(|t| !t.is_empty()),
                    error,
                    usage: answer.usage,
                    finish: answer.finish.clone(),
                    repetition: answer.repetition,
                    sampling,
                    items: answer.items,
                    elapsed: answer.started.elapsed(),
                },
            );
            if let Some(err) = answer.error {
                report.skipped = unresolved.into_iter().map(|(_, s)| s).collect();
                return Err(
                    ExtractError::new(ExtractErrorKind::Llm(err), report).with_partial(kept.json)
                );
            }
            // A repair answer that is only prose addressed none of the broken lines: they stay unresolved.
            if kind == AttemptKind::Repair && !no_json {
                unresolved.clear();
            }
            unresolved.extend(broken.into_iter().map(|s| (number, s)));

            let finish = answer.finish.unwrap_or_default();
            if finish == Finish::MaxItems {
                break;
            }
            if finish == Finish::Repetition {
                if repairs_used >= self.config.max_attempts {
                    break;
                }
                // Recover: ask again with the sampling changed, continuing after the items kept.
                repairs_used += 1;
                loops_seen += 1;
                let turns = if kept.json.is_empty() {
                    Vec::new()
                } else {
                    vec![
                        Message::assistant(wording::items_turn(
                            &kept.json,
                            shape,
                            self.config.max_echo_chars,
                        )),
                        Message::user(wording::continue_after_loop(kept.json.len())),
                    ]
                };
                next = Some((AttemptKind::Recovery, turns));
                continue;
            }
            if finish == Finish::Length
                && continuations_used < self.config.max_continuations
                && !kept.json.is_empty()
            {
                continuations_used += 1;
                next = Some((
                    AttemptKind::Continuation,
                    vec![
                        Message::assistant(wording::items_turn(
                            &kept.json,
                            shape,
                            self.config.max_echo_chars,
                        )),
                        Message::user(wording::continue_after(kept.json.len())),
                    ],
                ));
            } else if (!unresolved.is_empty() || no_json) && repairs_used < self.config.max_attempts
            {
                repairs_used += 1;
                let (bad_answer, broken) = if unresolved.iter().all(|(n, _)| *n == number) {
                    let broken: Vec<Skipped> = unresolved.iter().map(|(_, s)| s.clone()).collect();
                    (
                        wording::cut(&answer.raw, self.config.max_echo_chars),
                        broken,
                    )
                } else {
                    // Broken lines of several answers (e.g. before a continuation): the assistant turn
                    // is those lines alone, numbered afresh, so the feedback's line numbers fit it.
                    let broken: Vec<Skipped> = unresolved
                        .iter()
                        .enumerate()
                        .map(|(i, (_, s))| Skipped {
                            line: i + 1,
                            ..s.clone()
                        })
                        .collect();
                    let lines: Vec<&str> = broken.iter().map(|s| s.raw.trim()).collect();
                    (
                        wording::cut(&lines.join("\n"), self.config.max_echo_chars),
                        broken,
                    )
                };
                next = Some((
                    AttemptKind::Repair,
                    vec![
                        Message::assistant(bad_answer),
                        Message::user(wording::repair_lines(&broken, shape)),
                    ],
                ));
            }
        }
        report.skipped = unresolved.into_iter().map(|(_, s)| s).collect();
        report.skipped.extend(cut_item);
        report.fixes = kept.fixes;
        Ok(report)
    }

    /// Streams one answer through the decoder, handing complete items on.
    async fn answer<G: Target>(
        &self,
        target: &G,
        request: ChatRequest,
        kind: AttemptKind,
        max_string: Option<usize>,
        kept: &mut Kept,
        sink: &mut (dyn FnMut(G::Output) + Send + '_),
    ) -> Answer {
        let mut answer = Answer {
            raw: String::new(),
            thinking: String::new(),
            usage: Usage::default(),
            finish: None,
            error: None,
            items: 0,
            skipped: Vec::new(),
            started: Instant::now(),
            repetition: None,
            broken: Vec::new(),
        };
        let fresh_meter = Meter::new(&request);
        let mut meter = fresh_meter;
        let mut repeats = Repeats::new(self.config.loop_guard).max_string(max_string);
        let mut stream = match self.llm.chat_stream(request).await {
            Ok(stream) => stream,
            Err(err) => {
                answer.error = Some(err);
                return answer;
            }
        };
        let mut decoder = target.decoder(self.config.parse);
        let mut intake = Intake {
            kept,
            sink,
            // Repeats are dropped only in follow-up answers, which tend to restate what was kept; within
            // the first answer, only a run of identical items is treated as a loop.
            dedupe: kind != AttemptKind::First,
            max_items: self.config.max_items,
            guard: ItemGuard::new(self.config.loop_guard),
            items: 0,
            skipped: Vec::new(),
            bytes: 0,
            new_item_at: 0,
            emitted: Vec::new(),
            owed: HashMap::new(),
        };
        let mut stopped = None;
        let mut reported = None;
        while let Some(event) = stream.next().await {
            let mut looped = None;
            let chunk = match event {
                Ok(ChatEvent::Restart { error, usage }) => {
                    // The stream broke and was sent again: what it handed on stays handed on, and the
                    // new answer's first items that repeat it are not handed on twice.
                    let usage = meter.settle(usage);
                    if let Some(spent) = self.spent {
                        spent.settled(usage);
                    }
                    let broken = watch::Broken {
                        error,
                        raw: std::mem::take(&mut answer.raw),
                        thinking: std::mem::take(&mut answer.thinking),
                        usage,
                        elapsed: answer.started.elapsed(),
                    };
                    answer.broken.push((broken, intake.items));
                    answer.started = Instant::now();
                    meter = fresh_meter;
                    repeats = Repeats::new(self.config.loop_guard).max_string(max_string);
                    decoder = target.decoder(self.config.parse);
                    intake.restart(self.config.loop_guard);
                    continue;
                }
                Ok(ChatEvent::Delta(delta)) => {
                    meter.event();
                    let before = answer.raw.len();
                    answer.raw.push_str(&delta);
                    looped = repeats.feed(delta.as_bytes());
                    // Only the bytes before a loop reach the decoder: the items before it are kept.
                    let upto = looped.map_or(delta.len(), |l| l.start.saturating_sub(before));
                    intake.bytes = before + upto;
                    decoder.feed(delta.as_bytes().get(..upto).unwrap_or_default())
                }
                Ok(ChatEvent::Thinking(thinking)) => {
                    meter.event();
                    answer.thinking.push_str(&thinking);
                    self.streaming(&meter);
                    continue;
                }
                Ok(ChatEvent::Done(done)) => {
                    reported = Some(done.usage);
                    answer.finish = Some(done.finish.clone());
                    if answer.raw.is_empty() && !done.text.is_empty() {
                        // A backend that sent its whole text only in the summary.
                        answer.raw = done.text;
                        decoder.feed(answer.raw.as_bytes())
                    } else {
                        break;
                    }
                }
                Err(err) => {
                    answer.error = Some(err);
                    break;
                }
            };
            stopped = intake.take_all(target.vet(chunk));
            if stopped == Some(Finish::Repetition) {
                answer.repetition = Some(Loop {
                    kind: LoopKind::Items,
                    start: intake.new_item_at,
                    detected_at: intake.bytes,
                });
            } else if let Some(found) = looped.filter(|_| stopped.is_none()) {
                answer.repetition = Some(found);
                stopped = Some(Finish::Repetition);
            }
            self.streaming(&meter);
            if stopped.is_some() || answer.finish.is_some() {
                break;
            }
        }
        answer.usage = reported.map_or_else(|| meter.estimate(), |usage| meter.settle(usage));
        // Dropping the stream cancels the request when we stopped early.
        drop(stream);
        if stopped.is_none() && answer.error.is_none() {
            if answer.raw.trim().is_empty() && !answer.thinking.trim().is_empty() {
                // Some servers put the whole answer in the thinking channel.
                let events = decoder.feed(answer.thinking.as_bytes());
                stopped = intake.take_all(target.vet(events));
            }
            if stopped.is_none() {
                stopped = intake.take_all(target.vet(decoder.finish()));
            }
        }
        if stopped != Some(Finish::Repetition) {
            intake.flush();
        }
        if let Some(stop) = stopped {
            answer.finish = Some(stop);
        }
        answer.items = intake.items;
        answer.skipped = intake.skipped;
        answer
    }
}

/// One streamed answer.
struct Answer {
    raw: String,
    thinking: String,
    usage: Usage,
    finish: Option<Finish>,
    error: Option<LlmError>,
    items: usize,
    skipped: Vec<Skipped>,
    started: Instant,
    repetition: Option<Loop>,
    /// The answers before it whose stream broke and was sent again, with the items each handed on.
    broken: Vec<(watch::Broken, usize)>,
}

/// The items kept so far, across every answer of one extraction.
#[derive(Default)]
struct Kept {
    json: Vec<Value>,
    seen: HashSet<String>,
    fixes: Vec<Fix>,
}

/// Takes the decoder's events of one answer: holds back repeats, drops duplicates of kept items in
/// follow-up answers, counts, and hands items on.
struct Intake<'k, 's, O> {
    kept: &'k mut Kept,
    sink: &'k mut (dyn FnMut(O) + Send + 's),
    dedupe: bool,
    max_items: Option<usize>,
    guard: ItemGuard<O>,
    items: usize,
    skipped: Vec<Skipped>,
    /// Bytes of the answer fed to the decoder so far.
    bytes: usize,
    /// Where the last item that repeated nothing ended (about: the end of its delta).
    new_item_at: usize,
    /// The keys of the items this stream of the answer delivered (handed on, or owed and met again).
    emitted: Vec<String>,
    /// Items a broken stream of this answer handed on before it was sent again, by key, with how many
    /// times each: the new stream's first matching items are already with the caller.
    owed: HashMap<String, usize>,
}

impl<O> Intake<'_, '_, O> {
    /// Takes events; returns why generation must stop, if it must.
    fn take_all(&mut self, events: Vec<LineEvent<WithJson<O>>>) -> Option<Finish> {
        for event in events {
            let item = match event {
                LineEvent::Skipped(skipped) => {
                    self.skipped.push(skipped);
                    continue;
                }
                LineEvent::Item(item) => item,
            };
            let key = canonical(&item.value.json);
            match self.guard.offer(item, &key) {
                Verdict::Hold => {}
                Verdict::Loop => return Some(Finish::Repetition),
                Verdict::Emit(items) => {
                    self.new_item_at = self.bytes;
                    for item in items {
                        if let Some(stop) = self.emit(item) {
                            return Some(stop);
                        }
                    }
                }
            }
        }
        None
    }

    /// The stream starts over (it broke and was sent again): what was handed on becomes owed, and the
    /// count of this answer's items and skipped lines starts from nothing.
    fn restart(&mut self, guard: LoopGuard) {
        for key in self.emitted.drain(..) {
            *self.owed.entry(key).or_insert(0) += 1;
        }
        self.guard = ItemGuard::new(guard);
        self.items = 0;
        self.skipped.clear();
        self.bytes = 0;
        self.new_item_at = 0;
    }

    /// Hands on the items the guard still holds (they were not a loop after all).
    fn flush(&mut self) {
        for item in self.guard.release() {
            if self.emit(item).is_some() {
                break;
            }
        }
    }

    fn emit(&mut self, item: Found<O>) -> Option<Finish> {
        let key = canonical(&item.value.json);
        if let Some(owed) = self.owed.get_mut(&key).filter(|n| **n > 0) {
            // With the caller already; owed again if this stream breaks too.
            *owed -= 1;
            self.emitted.push(key);
            return None;
        }
        // Stop at the first item past the maximum, not at the last one allowed: an answer with exactly
        // `max_items` items then ends normally, with its usage.
        if self
            .max_items
            .is_some_and(|max| self.kept.json.len() >= max)
        {
            return Some(Finish::MaxItems);
        }
        if self.kept.seen.contains(&key) && self.dedupe {
            return None;
        }
        self.emitted.push(key.clone());
        self.kept.seen.insert(key);
        self.kept.json.push(item.value.json);
        self.kept.fixes.extend(item.fixes);
        self.items += 1;
        (self.sink)(item.value.value);
        None
    }
}

/// A string equal for equal JSON values whatever their key order, for deduplication.
fn canonical(value: &Value) -> String {
    fn write(value: &Value, out: &mut String) {
        match value {
            Value::Object(map) => {
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort();
                out.push('{');
                for (i, key) in keys.into_iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(&Value::String(key.clone()).to_string());
                    out.push(':');
                    if let Some(v) = map.get(key) {
                        write(v, out);
                    }
                }
                out.push('}');
            }
            Value::Array(items) => {
                out.push('[');
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    write(v, out);
                }
                out.push(']');
            }
            scalar => out.push_str(&scalar.to_string()),
        }
    }
    let mut out = String::new();
    write(value, &mut out);
    out
}

/// The text to parse: the content, or the thinking channel when the content is empty (some servers put
/// a constrained answer there).
fn answer_text(response: &ChatResponse) -> &str {
    match &response.thinking {
        Some(thinking) if response.text.trim().is_empty() => thinking,
        _ => &response.text,
    }
}

/// The position the next attempt takes in the ledger (1 for the first).
fn ledger_position(report: &Report) -> u32 {
    u32::try_from(report.attempts.len())
        .unwrap_or(u32::MAX)
        .saturating_add(1)
}

/// The ledger's record of an answer whose stream broke and was sent again, which handed on `items`.
fn broken_attempt(
    kind: AttemptKind,
    broken: watch::Broken,
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
        repetition: None,
        sampling,
        items,
        elapsed: broken.elapsed,
    }
}

fn failed_attempt(kind: AttemptKind, err: &LlmError, started: Instant) -> Attempt {
    Attempt {
        kind,
        raw: err.partial().unwrap_or_default().to_owned(),
        thinking: None,
        error: Some(AttemptError::Llm(err.clone())),
        usage: Usage::default(),
        finish: None,
        repetition: None,
        sampling: Sampling::default(),
        items: 0,
        elapsed: started.elapsed(),
    }
}

fn attempt_span(schema: &str, number: u32, kind: AttemptKind) -> tracing::Span {
    tracing::info_span!(
        "extract_attempt",
        schema,
        number,
        kind = %kind,
        items = tracing::field::Empty,
        finish = tracing::field::Empty,
        prompt_tokens = tracing::field::Empty,
        completion_tokens = tracing::field::Empty,
    )
}

fn record(span: &tracing::Span, finish: Option<&Finish>, usage: Usage, items: usize) {
    span.record("items", items);
    if let Some(finish) = finish {
        span.record("finish", tracing::field::display(finish));
    }
    span.record("prompt_tokens", usage.prompt_tokens);
    span.record("completion_tokens", usage.completion_tokens);
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn canonical_ignores_key_order() {
        assert_eq!(
            canonical(&json!({"a": 1, "b": [true, {"d": null, "c": "x"}]})),
            canonical(&json!({"b": [true, {"c": "x", "d": null}], "a": 1}))
        );
        assert_ne!(canonical(&json!({"a": 1})), canonical(&json!({"a": "1"})));
    }
}

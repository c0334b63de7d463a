//! One value: ask, parse and validate locally, and on failure ask again with the original conversation
//! plus the bad answer (cut to a bounded size) plus a short turn listing each problem. A loop is
//! recovered from with changed sampling; a cut-off answer is kept only if what arrived validates once
//! closed.

use super::unwrap::{unwrap, Unwrap};
use super::{attempt_span, broken_attempt, failed_attempt, record, Engine, Progress};
use crate::check::{Issue, Severity};
use crate::extract::confidence::logprobs as confidence;
use crate::extract::engine::{telemetry, watch};
use crate::extract::error::{ExtractError, ExtractErrorKind};
use crate::extract::loops;
use crate::extract::prompts::wording;
use crate::extract::setup::config::Input;
use crate::extract::setup::target::{settle, Target};
use crate::llm::{ChatRequest, ChatResponse, Finish, Message};
use crate::parse::{ParseError, ParseOptions, Parsed};
use crate::report::Loop;
use crate::report::{Attempt, AttemptError, AttemptKind, Extraction, Report, Sampling};
use std::time::Instant;
use tracing::Instrument;

/// After this many loops, an extraction that has a value cut at a loop (`loops::salvage`) stops
/// recovering and ends with it, marked: the worst document then costs two prompts, not one per
/// attempt.
const MAX_LOOPS_WITH_A_VALUE: u32 = 2;

/// Where `progress` hears of each attempt and each piece of its answer.
type Listener<'p> = &'p mut (dyn FnMut(Progress<'_>) + Send);

impl Engine<'_> {
    /// Extracts one value.
    pub async fn one<G: Target>(
        &self,
        target: &G,
        input: Input,
    ) -> Result<Extraction<G::Output>, ExtractError> {
        let span = telemetry::extraction_span(self.llm, target.schema().name());
        let watched = self.one_watched(target, input, None);
        let result = crate::llm::noting_who_answers(watched.instrument(span.clone())).await;
        telemetry::ended(&span, result.as_ref().map(|done| &done.report));
        result
    }

    /// Extracts one value, telling `progress` when each attempt starts and each piece of its answer as
    /// it arrives (a partial extraction, `partial_events.rs`).
    pub async fn one_watched<G: Target>(
        &self,
        target: &G,
        input: Input,
        mut progress: Option<Listener<'_>>,
    ) -> Result<Extraction<G::Output>, ExtractError> {
        let (first, _, bounds, unenforced) = self.first_request(target, input, false)?;
        let wrapped = self.wrapped(target);
        let name = target.schema().name();
        let mut report = Report {
            unenforced,
            ..Report::default()
        };
        let mut follow_up: Vec<Message> = Vec::new();
        let mut last_error = None;
        let mut loops_seen: u32 = 0;
        let mut last_loop = None;
        // What the answer that went furthest before its loop held, as a value, with its loop.
        let mut best: Option<(String, Loop)> = None;
        let mut rejected = loops::Rejected::default();
        let max_attempts = self.config.max_attempts.max(1);
        let mut kind = AttemptKind::First;
        for number in 1..=max_attempts {
            let turns = std::mem::take(&mut follow_up);
            let mut request = self.attempt_request(&first, turns, loops_seen);
            loops::unstick(&mut request, &self.config.recovery, rejected.copies);
            if let Err(kind) = self.within_budget(&report, &mut request) {
                return Err(ExtractError::new(kind, report));
            }
            let sampling = Sampling::of(&request);
            let span = attempt_span(self.llm, name, number, kind);
            let started = Instant::now();
            // Numbered as in the ledger, where a broken answer sent again is an attempt too.
            let position = ledger_position(&report);
            let listener = progress.as_mut();
            crate::llm::discard_answer();
            let watched = self
                .watch_attempt(request, (&bounds, wrapped), (position, kind), listener)
                .instrument(span.clone())
                .await;
            for broken in watched.broken {
                // Its cost is in the running total already.
                report.push(broken_attempt(kind, broken, 0, sampling));
            }
            let response = match watched.response {
                Ok(response) if wrapped => unwrapped(response),
                Ok(response) => response,
                Err(err) => {
                    let mut attempt = failed_attempt(kind, &err, started);
                    attempt.usage = watched.usage;
                    attempt.sampling = sampling;
                    self.push(&mut report, attempt);
                    return Err(ExtractError::new(ExtractErrorKind::Llm(err), report));
                }
            };
            let parsed = self.parse_answer(target, &response, watched.looped.clone());
            let items = usize::from(matches!(parsed, Ok(Ok(_))));
            record(&span, Some(&response.finish), watched.usage, items);
            let mut attempt = Attempt {
                usage: watched.usage,
                looped: watched.looped,
                sampling,
                items,
                elapsed: started.elapsed(),
                ..answered(kind, &response)
            };
            let parsed = match parsed {
                Ok(parsed) => parsed,
                Err(found) => {
                    attempt.error = Some(AttemptError::Loop(found.clone()));
                    let options = self.config.parse.with_salvage(true);
                    if let Some(prefix) =
                        loops::salvage(target, answer_text(&response), &found, &options)
                    {
                        // The answer that went furthest before its loop.
                        if best
                            .as_ref()
                            .is_none_or(|(_, kept)| found.start > kept.start)
                        {
                            best = Some((prefix, found.clone()));
                        }
                    }
                    self.push(&mut report, attempt);
                    loops_seen += 1;
                    last_loop = Some(found);
                    kind = AttemptKind::Recovery;
                    // A recovery that looped too, with a value cut at a loop in hand: another
                    // attempt costs a whole prompt again for what is seldom better; keep that value.
                    if loops_seen >= MAX_LOOPS_WITH_A_VALUE && best.is_some() {
                        break;
                    }
                    continue;
                }
            };
            kind = AttemptKind::Repair;
            let parsed = match parsed {
                Ok(parsed) => match settle(target, parsed, answer_text(&response)).await {
                    Ok(settled) => settled,
                    Err(error) => {
                        self.push(&mut report, attempt);
                        let raw = answer_text(&response).to_owned();
                        return Err(ExtractError::new(
                            ExtractErrorKind::Check { error, raw },
                            report,
                        ));
                    }
                },
                Err(error) => Err(error),
            };
            match parsed {
                Ok(parsed) => {
                    // The answer validated and passed its checks: a response cache may keep it.
                    crate::llm::accept_answer();
                    self.push(&mut report, attempt);
                    report.fixes = parsed.fixes;
                    report.issues = target.issues();
                    if let Some(rule) = self.config.confidence {
                        let scored = match &response.logprobs {
                            Some(tokens) => Some(confidence::of_value(confidence::scored(
                                answer_text(&response),
                                tokens,
                                rule,
                            ))),
                            // Stopped at a loop before its end, the answer never got its tokens.
                            None if response.finish == Finish::Loop => Some(Default::default()),
                            None => None,
                        };
                        confidence::record(&mut report, scored, self.config.min_confidence, false);
                    }
                    return Ok(Extraction::new(parsed.value, report));
                }
                Err(error) => {
                    attempt.error = Some(AttemptError::Parse(error.clone()));
                    self.push(&mut report, attempt);
                    let cut_off = response.finish == Finish::Length;
                    let text = answer_text(&response);
                    match self.repair_turns(error, text, cut_off, &mut rejected) {
                        Ok((turns, error)) => {
                            follow_up = turns;
                            last_error = Some(error);
                        }
                        Err(kind) => return Err(ExtractError::new(kind, report)),
                    }
                }
            }
        }
        if report.finish == Some(Finish::Loop) {
            if let Some(found) = last_loop {
                // Every attempt looped: the most complete value seen before a loop, marked.
                if let Some(value) = self.best_seen(target, best, &mut report).await {
                    return Ok(Extraction::new(value, report));
                }
                return Err(ExtractError::new(ExtractErrorKind::Loop(found), report));
            }
        }
        // The attempts are spent on a value its checks reject: kept as doubtful, if asked.
        if self.config.keep_doubtful && matches!(last_error, Some(ParseError::Check { .. })) {
            if let Some((parsed, doubts)) = target.take_doubtful() {
                report.fixes = parsed.fixes;
                report.issues = doubts;
                return Ok(Extraction::new(parsed.value, report));
            }
        }
        let error = last_error.unwrap_or(ParseError::NoJson { raw: String::new() });
        Err(ExtractError::new(ExtractErrorKind::Invalid(error), report))
    }

    /// The value of `best` (the longest answer text before a loop that validated once closed), after
    /// its checks, with its fixes and issues in `report` and a soft issue at the root saying the model
    /// looped on every attempt and the value was cut at the loop; `None` when there is none, or it no
    /// longer passes.
    async fn best_seen<G: Target>(
        &self,
        target: &G,
        best: Option<(String, Loop)>,
        report: &mut Report,
    ) -> Option<G::Output> {
        let (prefix, found) = best?;
        let options = self.config.parse.with_salvage(true);
        let parsed = target.parse_one(&prefix, &options).ok()?;
        let parsed = settle(target, parsed, &prefix).await.ok()?.ok()?;
        report.fixes = parsed.fixes;
        report.issues = target.issues();
        report.issues.push(Issue::new(
            "",
            format!(
                "the model looped on every attempt ({found}); this is the most complete value it \
                 wrote before a loop, cut there: check it"
            ),
            Severity::Soft,
        ));
        Some(parsed.value)
    }

    /// Parses an answer (see [`parse_watched`]): the content, or the thinking channel when the content
    /// is empty; a cut-off answer is salvaged if what arrived validates once closed.
    fn parse_answer<G: Target>(
        &self,
        target: &G,
        response: &ChatResponse,
        looped: Option<Loop>,
    ) -> Result<Result<Parsed<G::Output>, ParseError>, Loop> {
        let cut_off = response.finish == Finish::Length;
        let parse = self.config.parse;
        let options = parse.with_salvage(cut_off || parse.salvage);
        parse_watched(target, answer_text(response), &options, looped)
    }

    /// Sends `request` and watches its answer, telling `listener` (if any) that attempt `position` of
    /// `kind` starts and each piece of its answer (of a `wrapped` schema, the pieces of the value it
    /// wraps); a stream sent again after a break is the next attempt, as in the ledger.
    async fn watch_attempt(
        &self,
        request: ChatRequest,
        (bounds, wrapped): (&loops::Bounds, bool),
        (mut position, kind): (u32, AttemptKind),
        listener: Option<&mut Listener<'_>>,
    ) -> watch::Watched {
        let mut forward;
        let observer: Option<watch::Observer<'_>> = match listener {
            Some(progress) => {
                progress(Progress::Attempt {
                    number: position,
                    kind,
                });
                let mut reader = Unwrap::default();
                forward = move |heard: watch::Heard<'_>| match heard {
                    watch::Heard::Delta(delta) if wrapped => {
                        let piece = reader.push(delta);
                        if !piece.is_empty() {
                            progress(Progress::Delta(&piece));
                        }
                    }
                    watch::Heard::Delta(delta) => progress(Progress::Delta(delta)),
                    watch::Heard::Restart => {
                        reader = Unwrap::default();
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
        let guard = self.config.loop_guard;
        let content = self.content();
        watch::watch(
            self.llm,
            request,
            (guard, content),
            bounds,
            self.spent,
            observer,
        )
        .await
    }

    /// What follows an answer that did not parse: the turns asking for a repair (the answer cut to a
    /// bounded size, then the problems), with the error; or why there is no repair (a schema the
    /// validator cannot compile, an answer cut off by the token limit).
    fn repair_turns(
        &self,
        error: ParseError,
        text: &str,
        cut_off: bool,
        rejected: &mut loops::Rejected,
    ) -> Result<(Vec<Message>, ParseError), ExtractErrorKind> {
        match error {
            ParseError::InvalidSchema { source, .. } => Err(ExtractErrorKind::Schema(source)),
            error if cut_off => Err(ExtractErrorKind::Truncated(error)),
            error => {
                rejected.note(text);
                let turns = vec![
                    Message::assistant(wording::cut(text, self.config.max_echo_chars)),
                    Message::user(wording::repair_one(&error)),
                ];
                Ok((turns, error))
            }
        }
    }
}

/// Parses a watched answer. After a loop, a complete valid value before it (the model closed its
/// answer, then kept on writing and looped in what followed) is the answer; otherwise the loop is the
/// outcome (`Err`): the next attempt recovers from it, and after the last one the most complete value
/// cut at a loop is kept, marked (`loops::salvage`, `Engine::best_seen`).
fn parse_watched<G: Target>(
    target: &G,
    text: &str,
    options: &ParseOptions,
    looped: Option<Loop>,
) -> Result<Result<Parsed<G::Output>, ParseError>, Loop> {
    let Some(found) = looped else {
        return Ok(target.parse_one(text, options));
    };
    let before = text.get(..found.start).unwrap_or(text);
    match target.parse_one(before, options) {
        Ok(parsed) => Ok(Ok(parsed)),
        Err(_) => Err(found),
    }
}

/// `response` to a wrapped schema as the answer to the schema itself: `{"value": X}` read as `X`.
fn unwrapped(mut response: ChatResponse) -> ChatResponse {
    response.text = unwrap(&response.text);
    if let Some(thinking) = &mut response.thinking {
        *thinking = unwrap(thinking);
    }
    response
}

/// The ledger's record of `response` as attempt `kind`, before its cost, timing and verdict are known.
fn answered(kind: AttemptKind, response: &ChatResponse) -> Attempt {
    Attempt {
        kind,
        raw: response.text.clone(),
        thinking: response.thinking.clone(),
        error: None,
        usage: Default::default(),
        finish: Some(response.finish.clone()),
        looped: None,
        sampling: Sampling::default(),
        items: 0,
        elapsed: Default::default(),
        backend: None,
        cached: response.cached,
    }
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

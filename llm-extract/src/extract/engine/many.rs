//! Many items: stream each answer through the decoder (`answer.rs`), then, in this order, continue an
//! answer cut off by the token limit after its last complete item, re-ask the broken lines (and only
//! them), recover from a loop with changed sampling after the items kept.

use super::answer::Answer;
use super::intake::Kept;
use super::{attempt_span, broken_attempt, record, Engine};
use crate::extract::confidence::logprobs as confidence;
use crate::extract::engine::telemetry;
use crate::extract::error::{ExtractError, ExtractErrorKind};
use crate::extract::prompts::wording;
use crate::extract::setup::config::Input;
use crate::extract::setup::target::Target;
use crate::llm::{Finish, Message};
use crate::parse::{SkipReason, Skipped};
use crate::report::{Attempt, AttemptError, AttemptKind, Report, Sampling};
use crate::schema::Shape;
use tracing::Instrument;

/// What one answer's skipped lines are: a cut-off last item (for continuation), prose (ignored unless
/// the whole answer was prose), and broken lines (re-asked).
struct Sorted {
    cut_item: Option<Skipped>,
    prose: Vec<Skipped>,
    broken: Vec<Skipped>,
}

impl Sorted {
    fn of(answer: &mut Answer) -> Self {
        let cut = answer.finish == Some(Finish::Length) || answer.error.is_some();
        let mut sorted = Sorted {
            cut_item: None,
            prose: Vec::new(),
            broken: Vec::new(),
        };
        for skipped in std::mem::take(&mut answer.skipped) {
            match skipped.reason {
                SkipReason::Truncated if cut => sorted.cut_item = Some(skipped),
                SkipReason::NotJson => sorted.prose.push(skipped),
                _ => sorted.broken.push(skipped),
            }
        }
        sorted
    }

    /// The answer held nothing but prose.
    fn no_json(&self, answer: &Answer) -> bool {
        answer.items == 0
            && self.broken.is_empty()
            && self.cut_item.is_none()
            && !self.prose.is_empty()
    }

    /// The ledger's error for the answer.
    fn error(self, answer: &Answer, no_json: bool) -> Option<AttemptError> {
        let error = match (&answer.error, no_json) {
            (Some(err), _) => Some(AttemptError::Llm(err.clone())),
            (None, true) => Some(AttemptError::Lines(self.prose)),
            (None, false) if !self.broken.is_empty() => Some(AttemptError::Lines(self.broken)),
            _ => None,
        };
        match (error, &answer.looped) {
            (None, Some(found)) if answer.items == 0 => Some(AttemptError::Loop(found.clone())),
            (error, _) => error,
        }
    }
}

/// Where an extraction of many items stands between its answers.
struct Tally {
    /// The number of the answer (1 for the first).
    number: u32,
    /// Attempts spent on repairs and recoveries, the first answer included.
    repairs_used: u32,
    continuations_used: u32,
    loops_seen: u32,
    /// Broken lines not yet repaired, with the number of the answer they came from.
    unresolved: Vec<(u32, Skipped)>,
}

impl Default for Tally {
    fn default() -> Self {
        Tally {
            number: 0,
            repairs_used: 1,
            continuations_used: 0,
            loops_seen: 0,
            unresolved: Vec::new(),
        }
    }
}

/// The ledger's record of a streamed answer.
fn ledger_entry(
    kind: AttemptKind,
    answer: &mut Answer,
    sorted: Sorted,
    no_json: bool,
    sampling: Sampling,
) -> Attempt {
    Attempt {
        kind,
        raw: answer.raw.clone(),
        thinking: Some(std::mem::take(&mut answer.thinking)).filter(|t| !t.is_empty()),
        error: sorted.error(answer, no_json),
        usage: answer.usage,
        finish: answer.finish.clone(),
        looped: answer.looped.clone(),
        sampling,
        items: answer.items,
        elapsed: answer.started.elapsed(),
        backend: None,
        cached: answer.cached,
    }
}

impl Engine<'_> {
    /// Extracts many items, handing each to `sink` as soon as it is complete.
    pub async fn many<G: Target>(
        &self,
        target: &G,
        input: Input,
        sink: &mut (dyn FnMut(G::Output) + Send + '_),
    ) -> Result<Report, ExtractError> {
        let span = telemetry::extraction_span(self.llm, target.schema().name());
        let items = self.many_items(target, input, sink);
        let result = crate::llm::noting_who_answers(items.instrument(span.clone())).await;
        telemetry::ended(&span, result.as_ref());
        result
    }

    async fn many_items<G: Target>(
        &self,
        target: &G,
        input: Input,
        sink: &mut (dyn FnMut(G::Output) + Send + '_),
    ) -> Result<Report, ExtractError> {
        let (first, shape, bounds, unenforced) = self.first_request(target, input, true)?;
        let name = target.schema().name();
        let mut kept = Kept::default();
        let mut report = Report {
            unenforced,
            ..Report::default()
        };
        let mut tally = Tally::default();
        let mut cut_item: Option<Skipped> = None;
        let mut next = Some((AttemptKind::First, Vec::new()));
        // Each answer's scored items, when confidence is asked for; `None` once an answer had no
        // log-probabilities.
        let mut scored = Some(Vec::new());
        while let Some((kind, turns)) = next.take() {
            tally.number += 1;
            let mut request = self.attempt_request(&first, turns, tally.loops_seen);
            let sampling = Sampling::of(&request);
            if let Err(budget) = self.within_budget(&report, &mut request) {
                if kind == AttemptKind::First {
                    return Err(ExtractError::new(budget, report));
                }
                break; // spent: keep what we have
            }
            let span = attempt_span(self.llm, name, tally.number, kind);
            crate::llm::discard_answer();
            let mut answer = self
                .answer(target, request, kind, &bounds, &mut kept, sink)
                .instrument(span.clone())
                .await;
            for (broken, items) in std::mem::take(&mut answer.broken) {
                // Its cost is in the running total already.
                report.push(broken_attempt(kind, broken, items, sampling));
            }
            // An answer stopped before its end never got its tokens: its items have no confidence, and
            // the others keep theirs. One read to its end without tokens: the backend gives none.
            if let (Some(rule), true) = (self.config.confidence, answer.ended) {
                scored = scored.zip(answer.logprobs.take()).map(|(mut all, tokens)| {
                    all.extend(confidence::as_items(confidence::scored(
                        &answer.raw,
                        &tokens,
                        rule,
                    )));
                    all
                });
            }
            let sorted = Sorted::of(&mut answer);
            let no_json = sorted.no_json(&answer);
            cut_item = sorted.cut_item.clone();
            let broken = sorted.broken.clone();
            record(&span, answer.finish.as_ref(), answer.usage, answer.items);
            let attempt = ledger_entry(kind, &mut answer, sorted, no_json, sampling);
            // Read to its end with every line an item: a response cache may keep it.
            if attempt.error.is_none()
                && answer.check.is_none()
                && answer.finish == Some(Finish::Stop)
            {
                crate::llm::accept_answer();
            }
            self.push(&mut report, attempt);
            if let Some(err) = answer.error {
                report.skipped = tally.unresolved.into_iter().map(|(_, s)| s).collect();
                self.items_confidence(&mut report, scored, &kept.json);
                return Err(
                    ExtractError::new(ExtractErrorKind::Llm(err), report).with_kept(kept.json)
                );
            }
            if let Some(error) = answer.check {
                report.skipped = tally.unresolved.into_iter().map(|(_, s)| s).collect();
                self.items_confidence(&mut report, scored, &kept.json);
                let raw = answer.raw;
                return Err(
                    ExtractError::new(ExtractErrorKind::Check { error, raw }, report)
                        .with_kept(kept.json),
                );
            }
            // A repair answer that is only prose addressed none of the broken lines: they stay unresolved.
            if kind == AttemptKind::Repair && !no_json {
                tally.unresolved.clear();
            }
            let number = tally.number;
            tally
                .unresolved
                .extend(broken.into_iter().map(|s| (number, s)));
            let finish = answer.finish.unwrap_or_default();
            next = self.next_attempt(finish, &mut tally, &kept, shape, no_json, &answer.raw);
        }
        report.skipped = tally.unresolved.into_iter().map(|(_, s)| s).collect();
        report.skipped.extend(cut_item);
        report.fixes = kept.fixes;
        report.issues = target.issues();
        self.items_confidence(&mut report, scored, &kept.json);
        Ok(report)
    }

    /// With confidence on, puts the confidence of the items `kept` into `report`, from the answers'
    /// `scored` items (`None`: an answer had no log-probabilities); also when the extraction fails, for
    /// the items handed on before it did. The items' positions change when they are merged on their
    /// keys (`setup/keyed.rs`): the doubts under `min_confidence` are found there.
    fn items_confidence(
        &self,
        report: &mut Report,
        scored: Option<Vec<confidence::Item>>,
        kept: &[serde_json::Value],
    ) {
        if self.config.confidence.is_some() {
            let matched = scored.map(|items| confidence::match_items(kept, items));
            confidence::record(report, matched, None, true);
        }
    }

    /// What follows an answer that ended with `finish`: nothing after `max_items` or when the attempts
    /// are spent; after a loop, a recovery continuing after the items kept; after a cut-off answer, a
    /// continuation; after broken lines or an answer of prose alone, a repair of those lines.
    fn next_attempt(
        &self,
        finish: Finish,
        tally: &mut Tally,
        kept: &Kept,
        shape: Shape,
        no_json: bool,
        raw: &str,
    ) -> Option<(AttemptKind, Vec<Message>)> {
        let config = self.config;
        if finish == Finish::MaxItems {
            return None;
        }
        if finish == Finish::Loop {
            if tally.repairs_used >= config.max_attempts {
                return None;
            }
            // Recover: ask again with the sampling changed, continuing after the items kept.
            tally.repairs_used += 1;
            tally.loops_seen += 1;
            let turns = match kept.json.is_empty() {
                true => Vec::new(),
                false => self.after_items(kept, shape, wording::continue_after_loop),
            };
            return Some((AttemptKind::Recovery, turns));
        }
        if finish == Finish::Length
            && tally.continuations_used < config.max_continuations
            && !kept.json.is_empty()
        {
            tally.continuations_used += 1;
            let turns = self.after_items(kept, shape, wording::continue_after);
            return Some((AttemptKind::Continuation, turns));
        }
        if (!tally.unresolved.is_empty() || no_json) && tally.repairs_used < config.max_attempts {
            tally.repairs_used += 1;
            let turns = self.repair_lines(&tally.unresolved, tally.number, raw, shape);
            return Some((AttemptKind::Repair, turns));
        }
        None
    }

    /// The turns that ask to go on after the items kept: the items as the assistant's answer, then
    /// `ask` (given how many there are).
    fn after_items(&self, kept: &Kept, shape: Shape, ask: fn(usize) -> String) -> Vec<Message> {
        vec![
            Message::assistant(wording::items_turn(
                &kept.json,
                shape,
                self.config.max_echo_chars,
            )),
            Message::user(ask(kept.json.len())),
        ]
    }

    /// The turns that re-ask the broken lines: the bad answer (cut to a bounded size), then the
    /// problems of each line. When the lines come from several answers (answer `number`'s, and those
    /// before a continuation), the assistant turn is those lines alone, numbered afresh, so the
    /// feedback's line numbers fit it.
    fn repair_lines(
        &self,
        unresolved: &[(u32, Skipped)],
        number: u32,
        raw: &str,
        shape: Shape,
    ) -> Vec<Message> {
        let max_echo = self.config.max_echo_chars;
        let (bad_answer, broken) = if unresolved.iter().all(|(n, _)| *n == number) {
            let broken: Vec<Skipped> = unresolved.iter().map(|(_, s)| s.clone()).collect();
            (wording::cut(raw, max_echo), broken)
        } else {
            let broken: Vec<Skipped> = unresolved
                .iter()
                .enumerate()
                .map(|(i, (_, s))| Skipped {
                    line: i + 1,
                    ..s.clone()
                })
                .collect();
            let lines: Vec<&str> = broken.iter().map(|s| s.raw.trim()).collect();
            (wording::cut(&lines.join("\n"), max_echo), broken)
        };
        vec![
            Message::assistant(bad_answer),
            Message::user(wording::repair_lines(&broken, shape)),
        ]
    }
}

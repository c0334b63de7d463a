//! Self-consistency ([`Extractor::samples`](crate::extract::Extractor::samples)): several answers to one request,
//! merged by vote (`vote.rs`).
//!
//! Answer 0 is the extractor's own (its temperature and seed: greedy by default); answer `i` is sampled
//! at the extractor's temperature when one above 0 is set, else [`SAMPLE_TEMPERATURE`], with seed
//! `seed + i`. The answers are asked for at once (the embedded engine decodes them in one batch when
//! it has a sequence for each; an HTTP backend gets one request each), each through the whole loop (repairs, recovery, checks), each
//! within the attempt cap and the token budget. Their validated JSON is voted on, and the vote is
//! read again through the target (schema, checks, the type): a vote that does not pass gives way to
//! the answer sharing the most leaves with it. The report holds every answer's attempts and their
//! summed cost, and the agreement of each leaf.

use crate::check::Issue;
use crate::extract::confidence::vote::{agreement_at_places, shared_leaves, vote, vote_items};
use crate::extract::engine::Engine;
use crate::extract::error::{ExtractError, ExtractErrorKind};
use crate::extract::setup::config::{Config, Input};
use crate::extract::setup::keyed::{self, Handing};
use crate::extract::setup::target::Target;
use crate::parse::{self, Item, LineEvent, ParseError, ParseOptions, Parsed, WithJson};
use crate::report::{Extraction, Report};
use futures_util::future::join_all;
use serde_json::Value;

/// The temperature of the answers after the first when the extractor sets none above 0.
pub const SAMPLE_TEMPERATURE: f32 = 0.3;

/// The settings of answer `i`.
fn settings(config: &Config, i: usize) -> Config {
    let mut settings = config.clone();
    settings.samples = 1;
    if i > 0 {
        let temperature = config.temperature.filter(|t| *t > 0.0);
        settings.temperature = Some(temperature.unwrap_or(SAMPLE_TEMPERATURE));
        settings.seed = Some(config.seed.unwrap_or(0).wrapping_add(i as u64));
    }
    settings
}

/// A target whose values and items are its validated JSON: the target's own checks and reading run
/// on each, and the JSON is what the vote reads.
struct Json<G>(G);

impl<G: Target> Target for Json<G> {
    type Output = Value;

    crate::extract::setup::target::as_inner!();

    fn parse_one(&self, text: &str, options: &ParseOptions) -> Result<Parsed<Value>, ParseError> {
        let typed = self.0.parse_one(text, options)?;
        let json = parse::from_str_value(text, self.0.schema(), options)?;
        Ok(Parsed {
            value: json.value,
            fixes: typed.fixes,
        })
    }

    fn vet(&self, events: Vec<LineEvent<WithJson<Value>>>) -> Vec<LineEvent<WithJson<Value>>> {
        let typed = events.into_iter().map(|event| match event {
            LineEvent::Item(found) => match parse::typed_item(&found.value.json, found.line) {
                Ok(value) => LineEvent::Item(Item {
                    value: WithJson {
                        value,
                        json: found.value.json,
                    },
                    line: found.line,
                    fixes: found.fixes,
                }),
                Err(skipped) => LineEvent::Skipped(skipped),
            },
            LineEvent::Skipped(skipped) => LineEvent::Skipped(skipped),
        });
        self.0
            .vet(typed.collect())
            .into_iter()
            .map(|event| match event {
                LineEvent::Item(found) => LineEvent::Item(Item {
                    value: WithJson {
                        value: found.value.json.clone(),
                        json: found.value.json,
                    },
                    line: found.line,
                    fixes: found.fixes,
                }),
                LineEvent::Skipped(skipped) => LineEvent::Skipped(skipped),
            })
            .collect()
    }

    fn issues(&self) -> Vec<Issue> {
        self.0.issues()
    }
}

/// Every answer's ledger in one: their attempts in answer order (so their cost summed), what they
/// skipped, fixed and set aside.
fn combined(reports: Vec<Report>) -> Report {
    let mut out = Report::default();
    for report in reports {
        for attempt in report.attempts {
            out.push(attempt);
        }
        out.skipped.extend(report.skipped);
        out.fixes.extend(report.fixes);
        out.conflicts.extend(report.conflicts);
        out.unenforced = out.unenforced.or(report.unenforced);
    }
    out
}

/// The answers in the order they are tried after the vote: most leaves shared with `merged` first
/// (ties in answer order).
fn by_agreement(merged: &Value, answers: &[Value]) -> Vec<usize> {
    let mut order: Vec<(usize, usize)> = answers
        .iter()
        .enumerate()
        .map(|(i, answer)| (i, shared_leaves(merged, answer)))
        .collect();
    order.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    order.into_iter().map(|(i, _)| i).collect()
}

/// One value, `engine.config.samples` answers merged by vote; `make` makes the target (one per
/// answer, and one that reads the vote).
pub(crate) async fn one<G: Target>(
    engine: Engine<'_>,
    make: impl Fn() -> G,
    input: Input,
) -> Result<Extraction<G::Output>, ExtractError> {
    let n = engine.config.samples.max(1);
    let configs: Vec<Config> = (0..n).map(|i| settings(engine.config, i)).collect();
    let targets: Vec<Json<G>> = (0..n).map(|_| Json(make())).collect();
    let runs = configs.iter().zip(&targets).map(|(config, target)| {
        let engine = Engine { config, ..engine };
        let input = input.clone();
        async move { engine.one(target, input).await }
    });
    let mut answers = Vec::new();
    let mut reports = Vec::new();
    let mut first_error = None;
    for result in join_all(runs).await {
        match result {
            Ok(extraction) => {
                answers.push(extraction.value);
                reports.push(extraction.report);
            }
            Err(mut error) => {
                reports.push(std::mem::take(error.report_mut()));
                first_error.get_or_insert(error);
            }
        }
    }
    let mut report = combined(reports);
    let reader = make();
    let root = reader.schema().generic();
    let merged = vote(&answers, root);
    let candidates = std::iter::once(&merged.value).chain(
        by_agreement(&merged.value, &answers)
            .into_iter()
            .filter_map(|i| answers.get(i)),
    );
    let mut last_error = None;
    for (tried, candidate) in candidates.enumerate() {
        match reader.parse_one(&candidate.to_string(), &engine.config.parse) {
            Ok(parsed) => {
                report.issues = reader.issues();
                report.agreement = if tried == 0 {
                    merged.agreement
                } else {
                    agreement_at_places(candidate, &answers)
                };
                return Ok(Extraction::new(parsed.value, report));
            }
            Err(error) => last_error = Some(error),
        }
    }
    let error = match (first_error, last_error) {
        (Some(mut error), _) => {
            *error.report_mut() = report;
            return Err(error);
        }
        (None, Some(error)) => ExtractErrorKind::Invalid(error),
        (None, None) => ExtractErrorKind::Invalid(ParseError::NoJson { raw: String::new() }),
    };
    Err(ExtractError::new(error, report))
}

/// Every item, `engine.config.samples` answers (each merged on its keys and grounded as
/// [`keyed::items`] does) merged by vote; the items go to `sink` once the vote is read.
pub(crate) async fn items<G: Target>(
    engine: Engine<'_>,
    make: impl Fn() -> G,
    input: Input,
    sink: &mut (dyn FnMut(G::Output) + Send + '_),
) -> Result<Report, ExtractError> {
    let n = engine.config.samples.max(1);
    let configs: Vec<Config> = (0..n).map(|i| settings(engine.config, i)).collect();
    let runs = configs.iter().map(|config| {
        let engine = Engine { config, ..engine };
        let target = Json(make());
        let input = input.clone();
        async move {
            let mut items = Vec::new();
            let mut push = |item: Value| items.push(item);
            let result = keyed::items(engine, target, input, Handing::Merged, &mut push).await;
            (result, items)
        }
    });
    let mut answers = Vec::new();
    let mut reports = Vec::new();
    let mut first_error = None;
    for (result, items) in join_all(runs).await {
        match result {
            Ok(report) => {
                answers.push(items);
                reports.push(report);
            }
            Err(mut error) => {
                reports.push(std::mem::take(error.report_mut()));
                first_error.get_or_insert(error);
            }
        }
    }
    let mut report = combined(reports);
    if answers.is_empty() {
        if let Some(mut error) = first_error {
            *error.report_mut() = report;
            return Err(error);
        }
        return Ok(report);
    }
    let merged = vote_items(&answers, make().schema().generic());
    // A fresh reader for each try, so the soft issues counted are those of the items kept.
    let (items, issues, agreement) = match read_items(make(), &merged.value) {
        Some((items, issues)) => (items, issues, merged.agreement),
        None => {
            // Every answer's items passed on their own: the one closest to the vote stands.
            let merged_list = Value::Array(merged.value);
            let lists: Vec<Value> = answers.into_iter().map(Value::Array).collect();
            let best = by_agreement(&merged_list, &lists)
                .into_iter()
                .find_map(|i| {
                    let list = lists.get(i)?;
                    let (items, issues) = read_items(make(), list.as_array()?)?;
                    Some((items, issues, agreement_at_places(list, &lists)))
                });
            best.unwrap_or_default()
        }
    };
    report.issues = issues;
    report.agreement = agreement;
    for item in items {
        sink(item);
    }
    Ok(report)
}

/// The items `json` holds, read and vetted by `reader`, with their soft issues; `None` when one of
/// them does not pass.
fn read_items<G: Target>(reader: G, json: &[Value]) -> Option<(Vec<G::Output>, Vec<Issue>)> {
    let mut events = Vec::with_capacity(json.len());
    for (i, item) in json.iter().enumerate() {
        let value = parse::typed_item(item, i + 1).ok()?;
        events.push(LineEvent::Item(Item {
            value: WithJson {
                value,
                json: item.clone(),
            },
            line: i + 1,
            fixes: Vec::new(),
        }));
    }
    let items = reader
        .vet(events)
        .into_iter()
        .map(|event| match event {
            LineEvent::Item(found) => Some(found.value.value),
            LineEvent::Skipped(_) => None,
        })
        .collect::<Option<Vec<_>>>()?;
    Some((items, reader.issues()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_answer_keeps_the_settings_and_the_others_sample() {
        let greedy = Config::default();
        assert_eq!(settings(&greedy, 0).temperature, None);
        assert_eq!(settings(&greedy, 0).samples, 1);
        let second = settings(&greedy, 2);
        assert_eq!(second.temperature, Some(SAMPLE_TEMPERATURE));
        assert_eq!(second.seed, Some(2));
        let warm = Config {
            temperature: Some(0.7),
            seed: Some(40),
            ..Config::default()
        };
        assert_eq!(settings(&warm, 1).temperature, Some(0.7));
        assert_eq!(settings(&warm, 1).seed, Some(41));
    }
}

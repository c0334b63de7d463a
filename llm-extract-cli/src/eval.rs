//! `llm-extract eval`: every text of a gold file extracted as `batch` extracts a document, each value
//! scored against the gold (`llm_extract::eval`), the table printed, the run written as JSON and HTML.

use crate::args::EvalArgs;
use crate::error::{exit_for, one_line, CliError, Exit};
use crate::output::progress_bar;
use crate::output::Printer;
use crate::schema;
use llm_extract::batch::{Record, RecordResult};
use llm_extract::eval::{
    compare, html, mark_doubts, read_gold, read_pair, score_document, score_document_with_signals,
    DocumentRun, EvalReport, GoldCase, ScoreOptions,
};
use llm_extract::ground::{has_grounded, Source, Span};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

pub async fn run(args: EvalArgs) -> Result<Exit, CliError> {
    let schema = schema::load(&args.source)?;
    let cases = gold_cases(&args)?;
    let earlier = match &args.compare {
        Some(path) => Some(read_run(path)?),
        None => None,
    };
    if let Some(min) = args.min_accuracy {
        if !(0.0..=100.0).contains(&min) {
            return Err(CliError::usage(format!(
                "--min-accuracy {min} is not a percentage from 0 to 100"
            )));
        }
    }
    let batch = crate::batch_command::build(
        &schema,
        &args.template,
        &args.extract,
        &args.check,
        &args.backend,
        args.concurrency.max(1),
        args.concurrency.max(1),
        args.jsonl,
    )?;

    let bar = progress_bar(cases.len());
    let mut results: Vec<Option<RecordResult>> = cases.iter().map(|_| None).collect();
    let documents = cases
        .iter()
        .map(|case| Record::new(case.id.clone(), case.text.clone()));
    batch
        .for_each(schema.schema_set(), documents, |result, progress| {
            bar.set_position(progress.done as u64);
            bar.set_message(format!(
                "{} valid, {} failed, {} tokens",
                progress.succeeded,
                progress.failed,
                progress.usage.total()
            ));
            let index = result.index;
            if let Some(slot) = results.get_mut(index) {
                *slot = Some(result);
            }
        })
        .await;
    bar.finish_and_clear();

    let options = ScoreOptions::default()
        .tolerance(args.relative_tolerance, args.absolute_tolerance)
        .span_overlap(args.span_overlap);
    let generic = schema.schema_set().generic();
    let mut reached = false;
    let runs: Vec<DocumentRun> = cases
        .iter()
        .zip(results)
        .map(|(case, result)| {
            let checked = args.check.check_command.is_some();
            let run = score(case, result, generic, (args.jsonl, checked), &options);
            reached |= run.1;
            run.0
        })
        .collect();
    let report = EvalReport::new(runs);
    let comparison = earlier.as_ref().map(|earlier| compare(earlier, &report));

    let printer = Printer::new(false);
    printer.text(&report.to_string())?;
    if let Some(comparison) = &comparison {
        printer.text(&format!(
            "\nagainst {}:\n{comparison}",
            shown(args.compare.as_deref())
        ))?;
    }
    if let Some(path) = &args.json {
        let json = serde_json::to_string_pretty(&report)
            .map_err(|e| CliError::io(format!("cannot serialize the run: {e}")))?;
        write(path, "--json", &json)?;
    }
    if let Some(path) = &args.html {
        let title = format!("llm-extract eval: {}", gold_name(&args));
        write(path, "--html", &html(&report, &title, comparison.as_ref()))?;
    }
    Ok(exit(&report, reached, args.min_accuracy))
}

/// The exit code of a measured run: 3 when no document reached the backend, 1 below --min-accuracy.
fn exit(report: &EvalReport, reached: bool, min: Option<f64>) -> Exit {
    if !reached && report.documents > 0 {
        Exit::Backend
    } else if min.is_some_and(|min| 100.0 * report.overall.accuracy < min) {
        Exit::ExtractionFailed
    } else {
        Exit::Success
    }
}

/// One document scored (of a list of `items` or not; with its checks' doubts marked, when `checked`),
/// and whether it reached the backend (a value, or a failure other than the backend's).
fn score(
    case: &GoldCase,
    result: Option<RecordResult>,
    schema: &Value,
    (items, checked): (bool, bool),
    options: &ScoreOptions,
) -> (DocumentRun, bool) {
    let Some(result) = result else {
        let leaves = score_document(case, None, &[], Some(schema), options);
        let error = Some("not run".to_owned());
        return (
            DocumentRun::new(case, None, error, 0, Duration::ZERO, leaves),
            false,
        );
    };
    let tokens = result.usage().total();
    let mut confidence = BTreeMap::new();
    let mut agreement = Default::default();
    let mut issues = Vec::new();
    let (predicted, error, attempts, reached) = match result.outcome {
        Ok(extraction) => {
            confidence = extraction.report.confidence;
            agreement = extraction.report.agreement;
            issues = extraction.report.issues;
            (
                Some(extraction.value),
                None,
                extraction.report.attempts,
                true,
            )
        }
        Err(error) => {
            let reached = exit_for(&error) != Exit::Backend;
            let message = one_line(&error.to_string());
            (None, Some(message), error.attempts().to_vec(), reached)
        }
    };
    let elapsed = attempts.iter().map(|a| a.elapsed).sum();
    let spans = match &predicted {
        Some(value) if !case.spans.is_empty() && has_grounded(schema) => {
            grounded(&case.text, schema, value, items)
        }
        _ => Vec::new(),
    };
    let mut leaves = score_document_with_signals(
        case,
        predicted.as_ref(),
        &spans,
        Some(schema),
        options,
        &confidence,
        &agreement,
    );
    if checked && predicted.is_some() {
        mark_doubts(&mut leaves, &issues);
    }
    (
        DocumentRun::new(case, predicted, error, tokens, elapsed, leaves).with_agreement(agreement),
        reached,
    )
}

/// Where the grounded values of `value` are in `text` (with `items`, of each item of the list, their
/// paths under the item's index).
fn grounded(text: &str, schema: &Value, value: &Value, items: bool) -> Vec<Span> {
    let source = Source::new(text);
    match value {
        Value::Array(list) if items => list
            .iter()
            .enumerate()
            .flat_map(|(i, item)| {
                source
                    .ground(schema, item)
                    .into_iter()
                    .map(move |mut span| {
                        span.path = format!("/{i}{}", span.path);
                        span
                    })
            })
            .collect(),
        _ => source.ground(schema, value),
    }
}

fn gold_cases(args: &EvalArgs) -> Result<Vec<GoldCase>, CliError> {
    let read = match (&args.gold, &args.texts, &args.values) {
        (Some(gold), _, _) => read_gold(gold),
        (None, Some(texts), Some(values)) => read_pair(texts, values),
        _ => {
            return Err(CliError::usage(
                "give the gold: --gold FILE.jsonl, or --texts FILE with --values FILE",
            ))
        }
    };
    read.map_err(|e| CliError::usage(e.to_string()))
}

/// A run written earlier with --json.
fn read_run(path: &Path) -> Result<EvalReport, CliError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| CliError::usage(format!("--compare {}: {e}", path.display())))?;
    serde_json::from_str(&text).map_err(|e| {
        CliError::usage(format!(
            "--compare {}: not a run written by `llm-extract eval --json`: {e}",
            path.display()
        ))
    })
}

fn write(path: &Path, flag: &str, content: &str) -> Result<(), CliError> {
    std::fs::write(path, content)
        .map_err(|e| CliError::io(format!("{flag} {}: {e}", path.display())))
}

fn gold_name(args: &EvalArgs) -> String {
    shown(args.gold.as_deref().or(args.values.as_deref()))
}

fn shown(path: Option<&Path>) -> String {
    path.map_or_else(String::new, |p| p.display().to_string())
}

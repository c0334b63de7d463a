//! `llm-extract run`: one extraction from standard input, printed as a value or as JSON Lines.

use crate::args::RunArgs;
use crate::backend;
use crate::error::{CliError, Exit};
use crate::input::{self, template};
use crate::output::{save_raw, Printer};
use crate::schema;
use futures_util::StreamExt;
use llm_extract::check::Issue;
use llm_extract::extract::{Input, PartialEvent, BYTES_PER_TOKEN};
use llm_extract::parse::Skipped;
use llm_extract::Report;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

pub async fn run(args: RunArgs) -> Result<Exit, CliError> {
    let schema = schema::load(&args.source)?;
    let mut vars = input::variables(&args.vars)?;
    input::stdin_as_text(&mut vars)?;
    let template = template(&args.template, schema.inputs())?;
    require_inputs(&vars, schema.inputs(), &template)?;

    let llm = backend::single(&args.backend, &args.extract)?;
    crate::notice::unenforced(&*llm, schema.schema_set(), args.jsonl, &args.extract);
    let long_text = chunk_budget(&args, llm.is_embedded(), &vars, &template);
    let check = crate::check_command::from_args(&args.check)?;
    let extractor = backend::extractor(llm, &args.extract).template(template);
    let mut extractor = crate::check_command::attach(extractor, check.as_ref());
    for example in crate::examples::load(&args.template.example, schema.schema_set(), args.jsonl)? {
        extractor = extractor.with_example(example);
    }
    if let Some(system) = &args.template.system {
        extractor = extractor.instructions(input::text_or_file("--system", system)?);
    }
    let input = Input::context(&vars);
    let set = schema.schema_set();
    let printer = Printer::new(args.pretty);
    let save_dir = args.extract.save_raw.as_deref();
    let confidence = crate::backend::confidence_rule(&args.extract).is_some();

    if args.partial {
        return partial(&extractor, set, input, &printer, save_dir, confidence).await;
    }

    if !args.jsonl {
        return match extractor.with_schema(set).extract(input).await {
            Ok(extraction) => {
                printer.value(&extraction.value)?;
                save_raw(save_dir, "run", &extraction.report.attempts);
                show_confidence(&extraction.report, &extraction.value, confidence);
                warn_about_issues(&extraction.report.issues);
                Ok(Exit::Success)
            }
            Err(error) => {
                save_raw(save_dir, "run", error.attempts());
                Err(error.into())
            }
        };
    }

    if let Some(text) = long_text {
        let extractor = extractor.chunk_tokens(crate::doc::EMBEDDED_CHUNK_TOKENS);
        return crate::doc::run_chunked(extractor, set, &text, &printer, save_dir).await;
    }

    // Several answers are voted on once all have ended: there is nothing to stream.
    if args.no_streaming || args.extract.samples > 1 {
        return match extractor.with_schema(set).extract_all(input).await {
            Ok(extraction) => {
                for item in &extraction.value {
                    printer.value(item)?;
                }
                save_raw(save_dir, "run", &extraction.report.attempts);
                warn_about_items(extraction.value.len(), &extraction.report.skipped);
                let items = Value::Array(extraction.value);
                show_confidence(&extraction.report, &items, confidence);
                warn_about_issues(&extraction.report.issues);
                Ok(Exit::Success)
            }
            Err(error) => {
                save_raw(save_dir, "run", error.attempts());
                Err(error.into())
            }
        };
    }

    let mut stream = extractor.with_schema(set).extract_stream(input);
    let mut printed = Vec::new();
    while let Some(item) = stream.next().await {
        match item {
            Ok(value) => {
                printer.value(&value)?;
                printed.push(value);
            }
            Err(error) => {
                save_raw(save_dir, "run", error.attempts());
                return Err(error.into());
            }
        }
    }
    if let Some(report) = stream.report() {
        save_raw(save_dir, "run", &report.attempts);
        warn_about_items(printed.len(), &report.skipped);
        show_confidence(report, &Value::Array(printed), confidence);
        warn_about_issues(&report.issues);
    }
    Ok(Exit::Success)
}

/// `--partial`: each snapshot as one compact JSON line as the answer streams, the validated value last.
/// A retry (the model asked again) is said on standard error; its snapshots start over. With
/// `--confidence` (`confidence`), the final value's is printed as for `run`.
async fn partial<L: llm_extract::Llm>(
    extractor: &llm_extract::Extractor<L>,
    set: &llm_extract::schema::SchemaSet,
    input: Input,
    printer: &Printer,
    save_dir: Option<&std::path::Path>,
    confidence: bool,
) -> Result<Exit, CliError> {
    let lines = Printer::new(false);
    let mut stream = extractor.with_schema(set).extract_partial(input);
    while let Some(event) = stream.next().await {
        match event {
            Ok(PartialEvent::Snapshot(snapshot)) => lines.value(&snapshot)?,
            Ok(PartialEvent::Retry { attempt, kind }) => {
                eprintln!("llm-extract: attempt {attempt} ({kind:?}): the value starts over");
            }
            Ok(PartialEvent::Final { extraction, .. }) => {
                printer.value(&extraction.value)?;
                save_raw(save_dir, "run", &extraction.report.attempts);
                show_confidence(&extraction.report, &extraction.value, confidence);
                warn_about_issues(&extraction.report.issues);
            }
            Ok(_) => {}
            Err(error) => {
                save_raw(save_dir, "run", error.attempts());
                return Err(error.into());
            }
        }
    }
    Ok(Exit::Success)
}

/// With `--jsonl` on the embedded engine (`embedded`: the backend built is, whether `--embedded` or
/// the default chose it), a text too long for its context is extracted chunk by chunk (see `doc.rs`):
/// the text, when it is longer than two chunks. Only for the default template over the text alone,
/// where a chunk can stand in for the text.
fn chunk_budget(
    args: &RunArgs,
    embedded: bool,
    vars: &Map<String, Value>,
    template: &str,
) -> Option<String> {
    let chunk_bytes = crate::doc::EMBEDDED_CHUNK_TOKENS * BYTES_PER_TOKEN;
    let text = vars.get("text")?.as_str()?;
    let chunked = args.jsonl
        && embedded
        && template == "{{text}}"
        && vars.len() == 1
        && text.len() > 2 * chunk_bytes;
    chunked.then(|| text.to_owned())
}

/// Fails early, with what to pass, when the text or an input the signature names is missing.
fn require_inputs(
    vars: &Map<String, Value>,
    inputs: &[String],
    template: &str,
) -> Result<(), CliError> {
    let wants_text = template.contains("{{text}}") || template.contains("{{ text }}");
    if wants_text && !vars.contains_key("text") {
        return Err(CliError::usage(
            "no input text: pipe it on standard input (llm-extract run ... < file.txt) or pass text=@file.txt",
        ));
    }
    if let Some(missing) = inputs.iter().find(|name| !vars.contains_key(name.as_str())) {
        return Err(CliError::usage(format!(
            "the signature takes `{missing}`: pass {missing}=VALUE or {missing}=@FILE"
        )));
    }
    Ok(())
}

/// With `--confidence` (`asked`), prints on standard error each field's confidence with its value
/// (`value`: the value, or the items as an array), most doubtful first; or that the backend gave none.
pub fn show_confidence(report: &Report, value: &Value, asked: bool) {
    if !asked {
        return;
    }
    if report.no_logprobs {
        eprintln!(
            "llm-extract: warning: the backend gives no token log-probabilities: no confidence"
        );
        return;
    }
    for line in confidence_lines(&report.confidence, value) {
        eprintln!("llm-extract: confidence {line}");
    }
}

/// `0.42 /name "Ada"` for each scored field, the least confident first.
fn confidence_lines(confidence: &BTreeMap<String, f32>, value: &Value) -> Vec<String> {
    let mut fields: Vec<(&String, &f32)> = confidence.iter().collect();
    fields.sort_by(|a, b| a.1.total_cmp(b.1));
    fields
        .into_iter()
        .map(|(pointer, c)| match value.pointer(pointer) {
            Some(found) => format!("{c:.2} {pointer} {found}"),
            None => format!("{c:.2} {pointer}"),
        })
        .collect()
}

/// The confidence of each field as a JSON object for an output record (`None` when there is none).
pub fn confidence_json(confidence: &BTreeMap<String, f32>) -> Option<Value> {
    (!confidence.is_empty()).then(|| {
        Value::Object(
            confidence
                .iter()
                .map(|(pointer, c)| (pointer.clone(), Value::from(f64::from(*c))))
                .collect(),
        )
    })
}

/// Tells on standard error about the soft issues the checks found (values kept, but doubtful).
pub fn warn_about_issues(issues: &[Issue]) {
    for issue in issues {
        eprintln!(
            "llm-extract: doubtful: {}",
            crate::error::one_line(&issue.to_string())
        );
    }
}

/// The soft issues as a JSON list for an output record (`None` when there are none): each with its
/// `path`, `message` and, for an item of a list, its position as `item`.
pub fn issues_json(issues: &[Issue]) -> Option<serde_json::Value> {
    if issues.is_empty() {
        return None;
    }
    let list = issues
        .iter()
        .map(|issue| {
            let mut one = serde_json::json!({"path": issue.path, "message": issue.message});
            if let Some(item) = issue.item {
                one["item"] = item.into();
            }
            one
        })
        .collect();
    Some(serde_json::Value::Array(list))
}

/// Tells on standard error about lines left out, and about an answer without any item.
pub fn warn_about_items(items: usize, skipped: &[Skipped]) {
    if !skipped.is_empty() {
        let lines: Vec<String> = skipped
            .iter()
            .take(3)
            .map(|s| format!("line {}: {}", s.line, s.reason))
            .collect();
        eprintln!(
            "llm-extract: warning: {} line(s) of the answer never validated and were left out ({})",
            skipped.len(),
            crate::error::one_line(&lines.join("; "))
        );
    }
    if items == 0 {
        eprintln!("llm-extract: warning: the answer held no valid item");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn confidence_is_listed_least_confident_first_with_its_value() {
        let confidence: BTreeMap<String, f32> =
            [("/name".to_owned(), 0.9), ("/age".to_owned(), 0.25)].into();
        let value = json!({"name": "Ada", "age": 36});
        assert_eq!(
            confidence_lines(&confidence, &value),
            vec!["0.25 /age 36", "0.90 /name \"Ada\""]
        );
        assert_eq!(confidence_json(&BTreeMap::new()), None);
        assert_eq!(
            confidence_json(&confidence),
            Some(json!({"/age": 0.25, "/name": 0.8999999761581421}))
        );
    }

    #[test]
    fn soft_issues_become_a_json_list_with_their_item() {
        assert_eq!(issues_json(&[]), None);
        let mut issues = llm_extract::check::Issues::new();
        issues.soft("/total", "looks high");
        let list = issues_json(issues.as_slice()).unwrap();
        assert_eq!(list, json!([{"path": "/total", "message": "looks high"}]));
    }

    #[test]
    fn missing_inputs_are_named() {
        let vars = json!({"text": "x"}).as_object().cloned().unwrap();
        let err = require_inputs(&vars, &["text".into(), "lang".into()], "{{text}}").unwrap_err();
        assert!(err.message.contains("lang=VALUE"), "{}", err.message);
        let err = require_inputs(&Map::new(), &[], "{{text}}").unwrap_err();
        assert!(err.message.contains("no input text"), "{}", err.message);
    }
}

//! `llm-extract run`: one extraction from standard input (with the images and PDFs of `--image` and
//! `--pdf`), printed as a value or as JSON Lines.

use crate::args::RunArgs;
use crate::backends;
use crate::doubts::{show_confidence, warn_about_issues, warn_about_items};
use crate::error::{CliError, Exit};
use crate::input::{self, template};
use crate::output::{media_manifest, save_media, save_raw, Printer};
use crate::schema;
use futures_util::StreamExt;
use llm_extract::extract::{Input, PartialEvent, BYTES_PER_TOKEN};
use llm_extract::report::Attempt;
use serde_json::{Map, Value};

pub async fn run(args: RunArgs) -> Result<Exit, CliError> {
    let schema = schema::load(&args.source)?;
    let mut vars = input::variables(&args.vars)?;
    input::stdin_as_text(&mut vars)?;
    let media = input::read_media(&input::media_files(&args.media)).map_err(CliError::usage)?;
    if !media.is_empty() && !vars.contains_key("text") {
        // The files alone are the input: the text is empty, and no part of it is sent.
        vars.insert("text".into(), Value::String(String::new()));
    }
    let template = template(&args.template, schema.inputs())?;
    require_inputs(&vars, schema.inputs(), &template)?;

    let llm = backends::single(&args.backend, &args.extract)?;
    crate::notice::unenforced(&*llm, schema.schema_set(), args.jsonl, &args.extract);
    // A text sent with files is never cut into chunks: each chunk would need them all again.
    let long_text =
        chunk_budget(&args, llm.is_embedded(), &vars, &template).filter(|_| media.is_empty());
    let check = crate::check_command::from_args(&args.check, &args.backend)?;
    let extractor = backends::extractor(llm, &args.extract).template(template);
    let mut extractor = crate::check_command::attach(extractor, &check);
    for example in crate::examples::load(&args.template.example, schema.schema_set(), args.jsonl)? {
        extractor = extractor.with_example(example);
    }
    if let Some(system) = &args.template.system {
        extractor = extractor.instructions(input::text_or_file("--system", system)?);
    }
    let save_dir = args.extract.save_raw.as_deref();
    let manifest = (save_dir.is_some() && !media.is_empty()).then(|| media_manifest(&media));
    let input = input::with_media(Input::context(&vars), media);
    let set = schema.schema_set();
    let printer = Printer::new(args.pretty);
    // The failed raw answers, and the files they were read from, when --save-raw asks.
    let save = |attempts: &[Attempt]| {
        save_raw(save_dir, "run", attempts);
        if let Some(manifest) = &manifest {
            save_media(save_dir, "run", attempts, manifest);
        }
    };
    let confidence = crate::backends::confidence_rule(&args.extract).is_some();

    if args.partial {
        return partial(&extractor, set, input, &printer, &save, confidence).await;
    }

    if !args.jsonl {
        return match extractor.with_schema(set).extract(input).await {
            Ok(extraction) => {
                printer.value(&extraction.value)?;
                save(&extraction.report.attempts);
                show_confidence(&extraction.report, &extraction.value, confidence);
                warn_about_issues(&extraction.report.issues);
                Ok(Exit::Success)
            }
            Err(error) => {
                save(error.attempts());
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
                save(&extraction.report.attempts);
                warn_about_items(extraction.value.len(), &extraction.report.skipped);
                let items = Value::Array(extraction.value);
                show_confidence(&extraction.report, &items, confidence);
                warn_about_issues(&extraction.report.issues);
                Ok(Exit::Success)
            }
            Err(error) => {
                save(error.attempts());
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
                save(error.attempts());
                return Err(error.into());
            }
        }
    }
    if let Some(report) = stream.report() {
        save(&report.attempts);
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
    save: &dyn Fn(&[Attempt]),
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
                save(&extraction.report.attempts);
                show_confidence(&extraction.report, &extraction.value, confidence);
                warn_about_issues(&extraction.report.issues);
            }
            Ok(_) => {}
            Err(error) => {
                save(error.attempts());
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn missing_inputs_are_named() {
        let vars = json!({"text": "x"}).as_object().cloned().unwrap();
        let err = require_inputs(&vars, &["text".into(), "lang".into()], "{{text}}").unwrap_err();
        assert!(err.message.contains("lang=VALUE"), "{}", err.message);
        let err = require_inputs(&Map::new(), &[], "{{text}}").unwrap_err();
        assert!(err.message.contains("no input text"), "{}", err.message);
    }
}

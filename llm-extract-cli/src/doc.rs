//! `llm-extract doc`: every item of a long document, chunked, grounded and merged, as JSON Lines with
//! spans, with a progress bar by chunk on a terminal, resumable (`doc_state.rs`); optionally the review
//! page. The document is streamed from its file (`doc_input.rs`), never held whole in memory but for
//! the review page and a PDF (read page by page to its text first; each record then also names the
//! page of each span, `"pages"`) or a web page (read to its main text; each record then names the
//! nearest heading above each span, `"headings"`). With `--one`, one value from the whole document
//! rather than its items (each property from the chunk that grounds it best, `"sources"`). `run --jsonl` comes here too when the text does not fit the
//! embedded model's context.

use crate::args::DocArgs;
use crate::backends::{self, Backend};
use crate::doc_input::DocumentFile;
use crate::doc_state::State;
use crate::error::{exit_for, CliError, Exit};
use crate::output::{progress_bar, save_raw, Printer};
use crate::{review, schema};
use llm_extract::check::Issue;
use llm_extract::extract::{
    ChunkReport, Document, DocumentSource, DocumentValue, DoneChunk, Extractor, BYTES_PER_TOKEN,
};
use llm_extract::ground::{has_grounded, mark_grounded, Conflict, Grounded, GROUNDED, KEY};
use llm_extract::schema::SchemaSet;
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// The chunk size for the embedded engine's default 4,096-token context: 1,024 tokens of text (counted
/// with the model's tokenizer) leave room for the instructions (a few hundred tokens) and the answer.
pub const EMBEDDED_CHUNK_TOKENS: usize = 1024;

/// The chunk size for a server, whose context the command cannot ask: the library's default.
pub const SERVER_CHUNK_TOKENS: usize = llm_extract::extract::DEFAULT_CHUNK_BYTES / BYTES_PER_TOKEN;

pub async fn run(args: DocArgs) -> Result<Exit, CliError> {
    let schema = schema::load(&args.source)?;
    let set = with_fields(schema.schema_set(), &args.grounded, &args.key)?;
    let mut document = DocumentFile::open(args.path.as_deref())?;
    let llm = backends::single_parallel(&args.backend, &args.extract, args.concurrency)?;
    crate::notice::unenforced(&*llm, &set, true, &args.extract);
    // What the prompt says: every chunk fills the template's {{text}}; what comes before it is sent
    // with every chunk, and a provider's prompt cache keeps it.
    let template = crate::input::template(&args.template, &[])?;
    let system = args
        .template
        .system
        .as_deref()
        .map(|system| crate::input::text_or_file("--system", system))
        .transpose()?;
    let examples = crate::examples::load(&args.template.example, &set, true)?;
    let prompt = prompt_settings(&args, &template, system.as_deref());
    let chunk_tokens = args.chunk_tokens.unwrap_or(if llm.is_embedded() {
        EMBEDDED_CHUNK_TOKENS
    } else {
        SERVER_CHUNK_TOKENS
    });
    let mut settings = settings(&args, chunk_tokens);
    if !prompt.is_empty() {
        settings.push('\n');
        settings.push_str(&prompt);
    }
    let state = State::open(
        &[
            document.hash.as_slice(),
            set.generic().to_string().as_bytes(),
            llm.identity().as_slice(),
            settings.as_bytes(),
        ],
        !args.no_resume,
    );
    let check = crate::check_command::from_args(&args.check, &args.backend)?;
    let mut extractor = backends::extractor(llm, &args.extract).template(template);
    if let Some(system) = system {
        extractor = extractor.instructions(system);
    }
    for example in examples {
        extractor = extractor.with_example(example);
    }
    let extractor = crate::check_command::attach(extractor, &check)
        .chunk_tokens(chunk_tokens)
        .passes(args.passes)
        .concurrency(args.concurrency)
        .require_grounding(args.require_grounding);
    // The length is known once the document has been split (the first chunk to finish says it).
    let bar = progress_bar(0);
    let mut failed = 0;
    let mut unsaved = false;
    let source = DocumentSource::reader(&mut document.file)
        .resume(state.load())
        .on_chunk(|chunk, items, done, total| {
            failed += usize::from(chunk.error.is_some());
            if chunk.error.is_none() && !chunk.resumed && !unsaved {
                if let Err(e) = state.save(&DoneChunk::new(chunk, items)) {
                    eprintln!("llm-extract: warning: {e}; a rerun will ask every chunk again");
                    unsaved = true;
                }
            }
            bar.set_length(total as u64);
            bar.set_position(done as u64);
            bar.set_message(format!("chunks, {failed} failed"));
        });
    if args.one {
        let doc = extractor
            .with_schema(&set)
            .extract_document_one(source)
            .await;
        bar.finish_and_clear();
        let doc = doc.map_err(|e| document.error(e))?;
        print_one(&doc, &document, args.extract.save_raw.as_deref())?;
        if doc.failed().next().is_none() {
            state.clear();
        }
        return Ok(exit(&doc.chunks));
    }
    let doc = extractor.with_schema(&set).extract_document(source).await;
    bar.finish_and_clear();
    let doc = doc.map_err(|e| document.error(e))?;
    let printer = Printer::new(false);
    let confidence = doc.confidence_by_item();
    for (item, fields) in doc.items.iter().zip(&confidence) {
        printer.value(&record(item, fields, &document))?;
    }
    if doc.no_logprobs {
        eprintln!(
            "llm-extract: warning: the backend gives no token log-probabilities: no confidence"
        );
    }
    finish(&doc, args.extract.save_raw.as_deref());
    if let Some(path) = &args.html {
        let title = args
            .path
            .as_deref()
            .and_then(|p| p.file_name())
            .map_or("standard input".to_owned(), |n| {
                n.to_string_lossy().into_owned()
            });
        // The page holds the whole document: the one step that reads it into memory.
        let text = document.read_all()?;
        std::fs::write(path, review::page(&title, &text, &doc))
            .map_err(|e| CliError::io(format!("--html: cannot write {}: {e}", path.display())))?;
    }
    // Only once everything is written: a run whose output failed keeps its chunks for the next one.
    if doc.failed().next().is_none() {
        state.clear();
    }
    Ok(exit(&doc.chunks))
}

/// The record of one item or value: its spans, with their pages (a PDF) or headings (a web page),
/// and its confidence.
fn record(
    item: &Grounded<Value>,
    fields: &BTreeMap<String, f32>,
    document: &DocumentFile,
) -> Value {
    let mut record = json!({ "value": item.value, "spans": item.spans });
    if let Some(pages) = &document.pages {
        // Per span, its page and its offsets within that page's text (null: not found).
        let located: Vec<_> = item.spans.iter().map(|span| pages.locate(span)).collect();
        record["pages"] = json!(located);
    }
    if let Some(page) = &document.html {
        // Per span, the text of the nearest heading above it (null: none, or not found).
        let headings: Vec<_> = item
            .spans
            .iter()
            .map(|span| page.heading_of(span).map(|h| h.text.as_str()))
            .collect();
        record["headings"] = json!(headings);
    }
    if let Some(fields) = crate::doubts::confidence_json(fields) {
        record["confidence"] = fields;
    }
    record
}

/// `doc --one`: the one value's record (with the source of each property), or nothing when no chunk
/// found anything; then what the chunks did, as [`finish`] tells it.
fn print_one(
    doc: &DocumentValue<Value>,
    document: &DocumentFile,
    save_dir: Option<&std::path::Path>,
) -> Result<(), CliError> {
    if let Some(value) = &doc.value {
        let mut record = record(value, &doc.confidence, document);
        record["sources"] = json!(doc.sources);
        Printer::new(false).value(&record)?;
    }
    if doc.no_logprobs {
        eprintln!(
            "llm-extract: warning: the backend gives no token log-probabilities: no confidence"
        );
    }
    let summary = format!(
        "llm-extract: one value from {} item(s) of {} chunks",
        doc.found,
        doc.chunks.len()
    );
    tell(
        &doc.chunks,
        &doc.conflicts,
        &doc.issues,
        summary,
        save_dir,
        doc.usage.total(),
    );
    Ok(())
}

/// The version of the [`settings`] list: raised when a line is added, removed or written otherwise, so
/// that chunks saved under another list are never read back as this one's.
const SETTINGS_VERSION: u32 = 1;

/// What, besides the document, the schema (the `--grounded` and `--key` fields included) and the
/// backend's identity (`identity.rs`), changes what a chunk returns, as `name=value` lines under
/// [`SETTINGS_VERSION`], each named and written out here (never a type's `Debug`, so a new flag or
/// another release keeps the saved chunks): the extraction settings, the chunk size, grounding, and
/// the check command with the content of each file it names (an edited check program asks every
/// chunk again). Not what only carries or shows the answers: where raw answers are saved, the backend
/// flags and the model (the identity says which model answers, whether a flag or the environment
/// chose it), keys, retries and timeouts of the transport, warnings, concurrency. Not the number of
/// passes: a chunk is saved under its pass, and a pass's chunks do not depend on how many passes
/// follow, so a rerun with more passes keeps the passes an earlier run finished.
fn settings(args: &DocArgs, chunk_tokens: usize) -> String {
    let extract = &args.extract;
    let check = &args.check;
    let optional = |value: Option<String>| value.unwrap_or_default();
    let mut lines = vec![
        format!("llm-extract doc settings {SETTINGS_VERSION}"),
        format!("chunk_tokens={chunk_tokens}"),
        format!("require_grounding={}", args.require_grounding),
        format!("max_attempts={}", extract.max_attempts),
        format!(
            "max_tokens={}",
            optional(extract.max_tokens.map(|n| n.to_string()))
        ),
        format!("mode={}", value_name(extract.mode)),
        format!(
            "temperature={}",
            optional(extract.temperature.map(|t| t.to_string()))
        ),
        format!("samples={}", extract.samples),
        format!("confidence={}", extract.confidence),
        format!(
            "confidence_rule={}",
            optional(extract.confidence_rule.map(value_name))
        ),
        format!(
            "min_confidence={}",
            optional(extract.min_confidence.map(|x| x.to_string()))
        ),
        format!("tool_choice_required={}", args.backend.tool_choice_required),
        format!("keep_doubtful={}", check.keep_doubtful),
        format!("check_timeout={}", check.check_timeout.as_secs_f64()),
        format!("check_with_keys={}", check.check_with_keys),
    ];
    if extract.strategy != crate::args::StrategyArg::OneAnswer {
        // Only where it is not the default, so the settings of earlier runs still match.
        lines.push(format!("strategy={}", value_name(extract.strategy)));
    }
    if let Some(line) = &check.check_command {
        lines.push(crate::check_command::fingerprint(line));
    }
    lines.join("\n")
}

/// What `--template`, `--system` and `--example` make the prompt say, as `name=value` lines beside
/// [`settings`], each only when given (so that the chunks of a run without them still match): the
/// template and the instructions as read, and the content of each examples file.
fn prompt_settings(args: &DocArgs, template: &str, system: Option<&str>) -> String {
    let mut lines = Vec::new();
    if args.template.template.is_some() {
        lines.push(format!("template={template}"));
    }
    if let Some(system) = system {
        lines.push(format!("system={system}"));
    }
    for path in &args.template.example {
        let content = std::fs::read_to_string(path).unwrap_or_default();
        lines.push(format!("example={content}"));
    }
    lines.join("\n")
}

/// The name a value of a flag is written with on the command line.
fn value_name(value: impl clap::ValueEnum) -> String {
    value
        .to_possible_value()
        .map_or_else(String::new, |v| v.get_name().to_owned())
}

/// `run --jsonl` on a text longer than a chunk: the items of every chunk, merged, values only.
pub async fn run_chunked(
    extractor: Extractor<Backend>,
    set: &SchemaSet,
    text: &str,
    printer: &Printer,
    save_dir: Option<&std::path::Path>,
) -> Result<Exit, CliError> {
    let doc = extractor
        .with_schema(set)
        .extract_document(text)
        .await
        .map_err(|e| CliError::io(format!("cannot read the text: {e}")))?;
    for item in &doc.items {
        printer.value(&item.value)?;
    }
    // With --confidence (asked: there is some, or the backend said it has none), as `run` prints it.
    if !doc.confidence.is_empty() || doc.no_logprobs {
        let mut report = llm_extract::report::Report::default();
        report.confidence = doc.confidence.clone();
        report.no_logprobs = doc.no_logprobs;
        let items = doc.items.iter().map(|item| item.value.clone()).collect();
        crate::doubts::show_confidence(&report, &Value::Array(items), true);
    }
    finish(&doc, save_dir);
    Ok(exit(&doc.chunks))
}

/// Saves raw answers and tells on standard error what the chunks did.
fn finish(doc: &Document<Value>, save_dir: Option<&std::path::Path>) {
    let summary = format!(
        "llm-extract: {} items ({} before merging) from {} chunks",
        doc.items.len(),
        doc.found,
        doc.chunks.len()
    );
    tell(
        &doc.chunks,
        &doc.conflicts,
        &doc.issues,
        summary,
        save_dir,
        doc.usage.total(),
    );
}

/// Saves the chunks' raw answers and tells on standard error what they did, after `summary`: the
/// failures, the lines left out, the tokens, each failed chunk, each conflict and each issue.
fn tell(
    chunks: &[ChunkReport],
    conflicts: &[Conflict],
    issues: &[Issue],
    summary: String,
    save_dir: Option<&std::path::Path>,
    tokens: u64,
) {
    for chunk in chunks {
        let prefix = format!("pass{}-chunk{}", chunk.pass + 1, chunk.index + 1);
        save_raw(save_dir, &prefix, &chunk.report.attempts);
    }
    let failed: Vec<_> = chunks.iter().filter(|c| c.error.is_some()).collect();
    let left_out: usize = chunks.iter().map(|c| c.report.skipped.len()).sum();
    eprintln!(
        "{summary}, {} failed; {left_out} answer line(s) left out (invalid, or ungrounded with \
         --require-grounding); {tokens} tokens",
        failed.len(),
    );
    for chunk in failed {
        let error = chunk
            .error
            .as_ref()
            .map_or(String::new(), |e| crate::error::one_line(&e.to_string()));
        eprintln!(
            "llm-extract: warning: pass {} chunk {} (bytes {}..{}) failed: {error}",
            chunk.pass + 1,
            chunk.index + 1,
            chunk.bytes.start,
            chunk.bytes.end
        );
    }
    for conflict in conflicts {
        eprintln!(
            "llm-extract: note: {} at {}: kept {} over {}",
            conflict.key, conflict.path, conflict.kept, conflict.other
        );
    }
    crate::doubts::warn_about_issues(issues);
}

/// 0 when every chunk gave an answer; 3 when none did and each failed for the backend (it could not be
/// reached, refused, ...: as `batch`); else 1 (the failed chunks' items are missing, the others printed).
fn exit(chunks: &[ChunkReport]) -> Exit {
    let mut failed = 0;
    let mut backend = 0;
    for chunk in chunks.iter().filter(|c| c.error.is_some()) {
        failed += 1;
        backend += usize::from(chunk.error.as_ref().map(exit_for) == Some(Exit::Backend));
    }
    if failed == 0 {
        Exit::Success
    } else if failed == chunks.len() && backend == failed {
        Exit::Backend
    } else {
        Exit::ExtractionFailed
    }
}

/// The schema with `"x-grounded"` on each `--grounded` property and `"x-key"` on each `--key` one
/// (properties of the item, or of every variant that has them).
pub fn with_fields(
    set: &SchemaSet,
    grounded: &[String],
    keys: &[String],
) -> Result<SchemaSet, CliError> {
    let mut generic = set.generic().clone();
    for (flag, names, keyword) in [("--grounded", grounded, GROUNDED), ("--key", keys, KEY)] {
        for name in names {
            let mut marked = 0;
            for properties in object_properties(&mut generic) {
                if let Some(property) = properties.get_mut(name) {
                    if keyword == GROUNDED {
                        mark_grounded(property);
                        if !has_grounded(property) {
                            return Err(CliError::usage(format!(
                                "{flag} {name}: the property is not a string or a list of strings"
                            )));
                        }
                    } else if let Value::Object(map) = property {
                        map.insert(KEY.into(), Value::Bool(true));
                    }
                    marked += 1;
                }
            }
            if marked == 0 {
                return Err(CliError::usage(format!(
                    "{flag} {name}: the schema's items have no property `{name}`"
                )));
            }
        }
    }
    Ok(SchemaSet::new(set.name(), generic))
}

/// The `properties` maps of the item schema: its own, or each variant's.
fn object_properties(schema: &mut Value) -> Vec<&mut serde_json::Map<String, Value>> {
    let Value::Object(map) = schema else {
        return Vec::new();
    };
    if map.contains_key("properties") {
        return map
            .get_mut("properties")
            .and_then(Value::as_object_mut)
            .into_iter()
            .collect();
    }
    let keyword = if map.contains_key("oneOf") {
        "oneOf"
    } else {
        "anyOf"
    };
    match map.get_mut(keyword) {
        Some(Value::Array(branches)) => branches
            .iter_mut()
            .filter_map(|branch| branch.get_mut("properties").and_then(Value::as_object_mut))
            .collect(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The arguments of `doc` with `flags` (separated by spaces).
    fn doc_args(flags: &str) -> DocArgs {
        doc_argv(&flags.split_whitespace().collect::<Vec<_>>())
    }

    /// The arguments of `doc` with the arguments `flags`.
    fn doc_argv(flags: &[&str]) -> DocArgs {
        use clap::Parser;
        let argv = ["llm-extract", "doc", "--signature", "{a :int}"];
        let cli = crate::args::Cli::try_parse_from(argv.iter().chain(flags)).unwrap();
        match cli.command {
            crate::args::Command::Doc(args) => args,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_settings_are_a_versioned_list_of_what_changes_an_answer() {
        assert_eq!(
            settings(&doc_args(""), 1024),
            "llm-extract doc settings 1\nchunk_tokens=1024\nrequire_grounding=false\n\
             max_attempts=3\nmax_tokens=\nmode=constrained\ntemperature=\nsamples=1\n\
             confidence=false\nconfidence_rule=\nmin_confidence=\ntool_choice_required=false\n\
             keep_doubtful=false\ncheck_timeout=30\ncheck_with_keys=false"
        );
        let base = settings(&doc_args(""), 1024);
        // What only carries, shows or schedules the answers.
        for flags in [
            "--quiet",
            "--save-raw raw",
            "--retries 7 --idle-timeout 5",
            "--passes 3 --concurrency 4",
            "--no-resume --html page.html",
            "--ollama http://localhost:1 --model other",
            "--openai http://localhost:1/v1 --api-key-env K --allow-insecure-key",
        ] {
            assert_eq!(settings(&doc_args(flags), 1024), base, "{flags}");
        }
        // What changes them.
        let mut seen = vec![base];
        for flags in [
            "--max-attempts 2",
            "--max-tokens 100",
            "--mode prompted",
            "--temperature 0.5",
            "--samples 2",
            "--confidence",
            "--confidence-rule allowed-sum",
            "--min-confidence 0.5",
            "--require-grounding",
            "--tool-choice-required",
            "--keep-doubtful",
            "--check-command true",
            "--check-command false",
            "--check-command true --check-timeout 5",
            "--check-command true --check-with-keys",
        ] {
            let changed = settings(&doc_args(flags), 1024);
            assert!(!seen.contains(&changed), "{flags}: {changed}");
            seen.push(changed);
        }
        assert!(!seen.contains(&settings(&doc_args(""), 512)));
    }

    #[test]
    fn the_settings_change_with_the_check_program() {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("checks.sh");
        std::fs::write(&script, "exit 0\n").unwrap();
        let line = format!("sh '{}'", script.display());
        let args = doc_argv(&["--check-command", &line]);
        let before = settings(&args, 1024);
        assert_eq!(settings(&args, 1024), before);
        std::fs::write(&script, "echo '{\"message\": \"m\"}'\n").unwrap();
        assert_ne!(settings(&args, 1024), before);
    }

    #[test]
    fn flags_mark_properties_and_name_mistakes() {
        let set = SchemaSet::new(
            "P",
            json!({"type": "object", "properties": {
                "name": {"type": "string"}, "aliases": {"type": "array", "items": {"type": "string"}},
                "age": {"type": "integer"}
            }, "required": ["name"], "additionalProperties": false}),
        );
        let marked =
            with_fields(&set, &["name".into(), "aliases".into()], &["name".into()]).unwrap();
        let g = marked.generic();
        assert_eq!(g["properties"]["name"]["x-grounded"], json!(true));
        assert_eq!(g["properties"]["name"]["x-key"], json!(true));
        assert_eq!(
            g["properties"]["aliases"]["items"]["x-grounded"],
            json!(true)
        );
        let err = with_fields(&set, &["age".into()], &[]).unwrap_err();
        assert!(err.message.contains("not a string"), "{}", err.message);
        let err = with_fields(&set, &[], &["nope".into()]).unwrap_err();
        assert!(
            err.message.contains("no property `nope`"),
            "{}",
            err.message
        );
    }
}

//! `llm-extract batch`: many documents, bounded concurrency, a progress bar, resumable output; or,
//! with --provider-batch, the documents through the provider's batch API, resumable through its
//! manifest beside the output.

use crate::args::{BackendArgs, BatchArgs, CheckArgs, ExtractArgs, TemplateArgs};
use crate::backends;
use crate::error::{exit_for, CliError, Exit};
use crate::input::{media_files, read_media, template, with_media, Documents, MediaFile, Source};
use crate::output::{media_manifest, progress_bar, save_media, save_raw};
use crate::schema;
use indicatif::ProgressBar;
use llm_extract::batch::{
    Batch, JobProgress, Progress, ProviderBatch, ProviderBatchError, Record, RecordResult, Repairs,
};
use llm_extract::extract::{ExtractError, ExtractErrorKind, Input};
use llm_extract::llm::{Media, MediaType};
use llm_extract::schema::DynamicSchema;
use serde_json::{json, Value};
use std::cell::{Cell, RefCell};
use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// How many documents are extracted at the same time when --concurrency does not say.
const DEFAULT_CONCURRENCY: usize = 4;

/// How many sequences the embedded engine decodes together: one unless --concurrency asks for more, as
/// a sequence decoded beside others is computed in another floating-point order (a near-tie can then
/// change a greedy answer).
fn engine_parallel(args: &BatchArgs) -> usize {
    args.concurrency.unwrap_or(1)
}

/// The batch a run's documents go through: one extractor per backend the flags build (`parallel`
/// sequences for the embedded engine), each with the template, the worked examples and the system
/// instructions and the check command, `concurrency` documents at a time (`jsonl`: every item of
/// each document).
#[allow(clippy::too_many_arguments)]
pub(crate) fn build(
    schema: &DynamicSchema,
    template_args: &TemplateArgs,
    extract: &ExtractArgs,
    check: &CheckArgs,
    backends: &BackendArgs,
    parallel: usize,
    concurrency: usize,
    jsonl: bool,
) -> Result<Batch<backends::Backend>, CliError> {
    let make = || backends::backends(backends, extract, parallel);
    build_on(
        schema,
        template_args,
        extract,
        check,
        backends,
        make,
        concurrency,
        jsonl,
    )
}

/// [`build`] on the backends `make` builds (after the template, examples, system instructions and
/// check command are read, so that their errors come first).
#[allow(clippy::too_many_arguments)]
fn build_on(
    schema: &DynamicSchema,
    template_args: &TemplateArgs,
    extract: &ExtractArgs,
    check: &CheckArgs,
    backend_args: &BackendArgs,
    make: impl FnOnce() -> Result<Vec<backends::Backend>, CliError>,
    concurrency: usize,
    jsonl: bool,
) -> Result<Batch<backends::Backend>, CliError> {
    let template = template(template_args, schema.inputs())?;
    let examples = crate::examples::load(&template_args.example, schema.schema_set(), jsonl)?;
    let system = match &template_args.system {
        Some(system) => Some(crate::input::text_or_file("--system", system)?),
        None => None,
    };
    let check = crate::check_command::from_args(check, backend_args)?;
    let backends = make()?;
    let mut backends = backends.into_iter();
    let configure = |llm| {
        let extractor = backends::extractor(llm, extract).template(template.clone());
        let mut extractor = crate::check_command::attach(extractor, &check);
        for example in &examples {
            extractor = extractor.with_example(example.clone());
        }
        if let Some(system) = &system {
            extractor = extractor.instructions(system.clone());
        }
        extractor
    };
    let first = backends.next().ok_or_else(|| {
        CliError::usage("no backend: pass --ollama URL, --openai URL or --embedded")
    })?;
    crate::notice::unenforced(&*first, schema.schema_set(), jsonl, extract);
    let mut batch = Batch::new(configure(first))
        .concurrency(concurrency)
        .all_items(jsonl);
    for llm in backends {
        batch = batch.with_extractor(configure(llm));
    }
    Ok(batch)
}

pub async fn run(args: BatchArgs) -> Result<Exit, CliError> {
    let schema = schema::load(&args.source)?;
    let documents = Documents::open(&args.input)?;
    let done = recorded_ids(&args.out, args.retry_failed)?;
    let pending: Vec<usize> = documents
        .ids()
        .iter()
        .enumerate()
        .filter(|(_, id)| !done.contains(**id))
        .map(|(i, _)| i)
        .collect();
    let skipped = documents.total - pending.len();
    if pending.is_empty() {
        eprintln!(
            "llm-extract: nothing to do: all {} document(s) are already in {}",
            documents.total,
            args.out.display()
        );
        return Ok(Exit::Success);
    }

    let concurrency = args.concurrency.unwrap_or(DEFAULT_CONCURRENCY);
    let mut provider = None;
    let batch = if args.provider_batch.provider_batch {
        let make = || {
            let (llm, api) = provider_batch(&args)?;
            provider = Some(api);
            Ok(vec![llm])
        };
        build_on(
            &schema,
            &args.template,
            &args.extract,
            &args.check,
            &args.backend,
            make,
            concurrency,
            args.jsonl,
        )?
    } else {
        build(
            &schema,
            &args.template,
            &args.extract,
            &args.check,
            &args.backend,
            engine_parallel(&args),
            concurrency,
            args.jsonl,
        )?
    };

    let mut out = Output::open(&args.out)?;
    let bar = progress_bar(pending.len());
    if skipped > 0 {
        bar.println(format!(
            "llm-extract: resuming: {skipped} document(s) already in {}",
            args.out.display()
        ));
    }
    let save_dir = args.extract.save_raw.as_deref();
    let stop = Cell::new(false);
    let unreadable: RefCell<Vec<Unreadable>> = RefCell::new(Vec::new());
    let mut backend_failures = 0;
    let mut from_cache = 0;
    let mut write_error: Option<CliError> = None;

    let shared = media_files(&args.media);
    let manifests = RefCell::new(HashMap::new());
    let inputs = pending_documents(
        documents.source,
        &pending,
        &shared,
        &unreadable,
        save_dir.map(|_| &manifests),
    )
    .take_while(|_| !stop.get());
    let batch_priced = provider.is_some();
    let status = Status::default();
    let mut on_result = |result: RecordResult, progress: Progress| {
        if matches!(&result.outcome, Err(e) if exit_for(e) == Exit::Backend) {
            backend_failures += 1;
        }
        if matches!(&result.outcome, Ok(e) if e.report.from_cache()) {
            from_cache += 1;
        }
        let mut line = record(&result);
        if batch_priced {
            line["batch_tokens"] = json!(result.batch_usage.total());
        }
        if let Err(e) = out.write(&line) {
            write_error.get_or_insert(e);
            stop.set(true);
        }
        let attempts = match &result.outcome {
            Ok(extraction) => &extraction.report.attempts,
            Err(error) => error.attempts(),
        };
        save_raw(save_dir, &result.id, attempts);
        if let Some(manifest) = manifests.borrow_mut().remove(&result.id) {
            save_media(save_dir, &result.id, attempts, &manifest);
        }
        status.documents(&bar, progress);
    };
    let summary = match &provider {
        None => {
            batch
                .for_each(schema.schema_set(), inputs, &mut on_result)
                .await
        }
        Some(api) => {
            // A round holds every document's request: the documents are all read first.
            let records: Vec<Record> = inputs.collect();
            bar.println(format!(
                "llm-extract: {} batch API; jobs recorded in {}",
                api.api().name(),
                api.manifest().display()
            ));
            let shown = |jobs: JobProgress| status.jobs(&bar, jobs);
            let run = batch.for_each_on(api, schema.schema_set(), records, &mut on_result, shown);
            run.await.map_err(|e| provider_error(api, e))?
        }
    };

    let unreadable = unreadable.into_inner();
    for Unreadable { id, message } in &unreadable {
        let line = json!({"id": id, "ok": false, "kind": "input", "error": message});
        if let Err(e) = out.write(&line) {
            write_error.get_or_insert(e);
        }
    }
    bar.finish_and_clear();
    if let Some(error) = write_error {
        return Err(error);
    }
    let failed = summary.failed + unreadable.len();
    let mut priced = match batch_priced {
        true => format!(" ({} at the batch price)", summary.batch_usage.total()),
        false => String::new(),
    };
    priced.push_str(&cache_totals(&summary.usage, from_cache));
    eprintln!(
        "llm-extract: batch done: {} extracted, {failed} failed{}; {} tokens{} in {:.1}s; results in {}",
        summary.succeeded,
        if skipped > 0 {
            format!(", {skipped} skipped (already done)")
        } else {
            String::new()
        },
        summary.usage.total(),
        priced,
        summary.elapsed.as_secs_f64(),
        args.out.display()
    );
    Ok(if failed == 0 {
        Exit::Success
    } else if summary.succeeded == 0 && backend_failures == failed {
        Exit::Backend
    } else {
        Exit::ExtractionFailed
    })
}

/// What the caches saved, for the summary line: prompt tokens read from (and written to) the
/// provider's prompt cache, documents answered from the response cache; empty when neither was used.
fn cache_totals(usage: &llm_extract::llm::Usage, from_cache: usize) -> String {
    let mut parts = Vec::new();
    if usage.cache_read_tokens > 0 || usage.cache_write_tokens > 0 {
        parts.push(format!(
            "{} prompt tokens read from the prompt cache, {} written to it",
            usage.cache_read_tokens, usage.cache_write_tokens
        ));
    }
    if from_cache > 0 {
        parts.push(format!("{from_cache} answered from the response cache"));
    }
    match parts.is_empty() {
        true => String::new(),
        false => format!(" ({})", parts.join("; ")),
    }
}

/// The documents still to do, read lazily (a directory's files are read as the batch reaches them),
/// each with the files it names and then `shared` (the files of `--image` and `--pdf`, sent with every
/// document). A document or a file that cannot be read is set aside in `unreadable` and recorded as
/// failed. With `manifests`, the files sent with each document are described there by its id (for
/// `--save-raw`).
fn pending_documents<'a>(
    source: Source,
    pending: &'a [usize],
    shared: &'a [MediaFile],
    unreadable: &'a RefCell<Vec<Unreadable>>,
    manifests: Option<&'a RefCell<HashMap<String, Value>>>,
) -> impl Iterator<Item = Record> + 'a {
    let mut wanted = pending.iter().copied().peekable();
    let all: Box<dyn Iterator<Item = (usize, Lazy)>> = match source {
        Source::Files(files) => Box::new(
            files
                .into_iter()
                .map(|(id, path)| Lazy::File(id, path))
                .enumerate(),
        ),
        Source::Lines(lines) => Box::new(
            lines
                .into_iter()
                .map(|(record, files)| Lazy::Line(record, files))
                .enumerate(),
        ),
    };
    all.filter(move |(i, _)| {
        if wanted.peek() == Some(i) {
            wanted.next();
            true
        } else {
            false
        }
    })
    .filter_map(move |(_, document)| match document.read(shared) {
        Ok(document) => {
            if let Some(manifests) = manifests.filter(|_| !document.input.media().is_empty()) {
                let manifest = media_manifest(document.input.media());
                manifests.borrow_mut().insert(document.id.clone(), manifest);
            }
            Some(document)
        }
        Err(failure) => {
            unreadable.borrow_mut().push(failure);
            None
        }
    })
}

/// A document not read yet.
enum Lazy {
    /// A file of a directory: its id and path.
    File(String, PathBuf),
    /// A line of a JSON Lines file, with the files it names.
    Line(Record, Vec<MediaFile>),
}

impl Lazy {
    /// The document, with its own files and then `shared` read and attached.
    fn read(self, shared: &[MediaFile]) -> Result<Record, Unreadable> {
        let (record, own) = match self {
            Lazy::File(id, path) => (read_document(id, &path)?, Vec::new()),
            Lazy::Line(record, files) => (record, files),
        };
        let files: Vec<MediaFile> = own.into_iter().chain(shared.iter().cloned()).collect();
        if files.is_empty() {
            return Ok(record);
        }
        match read_media(&files) {
            Ok(media) => Ok(Record {
                input: with_media(record.input, media),
                ..record
            }),
            Err(message) => Err(Unreadable {
                id: record.id,
                message,
            }),
        }
    }
}

/// A document file that could not be read.
struct Unreadable {
    id: String,
    message: String,
}

/// A file of a directory: an image or a PDF (by its first bytes) is sent as itself, with an empty
/// text; any other file is read as text.
fn read_document(id: String, path: &Path) -> Result<Record, Unreadable> {
    let unreadable = |message: String| Unreadable {
        id: id.clone(),
        message,
    };
    let bytes = std::fs::read(path)
        .map_err(|e| unreadable(format!("cannot read {}: {e}", path.display())))?;
    if let Some(media_type) = MediaType::sniff(&bytes) {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
        let media = Media::bytes(media_type, bytes);
        let media = match name {
            Some(name) => media.with_name(name),
            None => media,
        };
        return Ok(Record::new(id, Input::text("").with_media(media)));
    }
    match String::from_utf8(bytes) {
        Ok(text) => Ok(Record::new(id, text)),
        Err(e) => Err(unreadable(format!(
            "cannot read {}: it is neither UTF-8 text ({e}) nor an image or a PDF",
            path.display()
        ))),
    }
}

/// One line of the output for one document.
fn record(result: &RecordResult) -> Value {
    match &result.outcome {
        Ok(extraction) => {
            let mut line = json!({
                "id": result.id,
                "ok": true,
                "value": extraction.value,
                "attempts": extraction.report.attempts.len(),
                "tokens": extraction.report.usage.total(),
            });
            cache_fields(&mut line, &extraction.report);
            if let Some(issues) = crate::doubts::issues_json(&extraction.report.issues) {
                line["issues"] = issues;
            }
            if let Some(confidence) = crate::doubts::confidence_json(&extraction.report.confidence)
            {
                line["confidence"] = confidence;
            }
            if !extraction.report.agreement.is_empty() {
                line["agreement"] = json!(extraction.report.agreement);
            }
            if let Some(backend) = crate::backend_layers::answered_by(&extraction.report.attempts) {
                line["backend"] = backend;
            }
            line
        }
        Err(error) => {
            let mut line = json!({
                "id": result.id,
                "ok": false,
                "kind": kind_name(error),
                "error": crate::error::one_line(&error.to_string()),
                "raw": error.raw(),
                "attempts": error.attempts().len(),
                "tokens": error.usage().total(),
            });
            cache_fields(&mut line, error.report());
            if let Some(backend) = crate::backend_layers::answered_by(error.attempts()) {
                line["backend"] = backend;
            }
            line
        }
    }
}

/// Adds to a record what the caches did: `cached` when every answer came from the response cache
/// (--cache), `cache_read_tokens` and `cache_write_tokens` when the provider's prompt cache was used.
fn cache_fields(line: &mut Value, report: &llm_extract::Report) {
    if report.from_cache() {
        line["cached"] = json!(true);
    }
    if report.usage.cache_read_tokens > 0 {
        line["cache_read_tokens"] = json!(report.usage.cache_read_tokens);
    }
    if report.usage.cache_write_tokens > 0 {
        line["cache_write_tokens"] = json!(report.usage.cache_write_tokens);
    }
}

fn kind_name(error: &ExtractError) -> &'static str {
    match error.kind() {
        ExtractErrorKind::Llm(_) => "backend",
        ExtractErrorKind::Invalid(_) => "invalid",
        ExtractErrorKind::Truncated(_) => "truncated",
        ExtractErrorKind::Loop(_) => "loop",
        ExtractErrorKind::Budget { .. } => "budget",
        ExtractErrorKind::Template(_) => "template",
        ExtractErrorKind::Schema(_) => "schema",
        ExtractErrorKind::Check { .. } => "check",
        _ => "other",
    }
}

/// The ids an earlier run recorded in `path` (only the successful ones with `retry_failed`). A record
/// is a line with its newline: a last line without one was cut off by a killed run (even when its
/// JSON happens to be whole, the run may have died between writing it and its newline), so its
/// document is not done; [`Output::open`] removes that line before the run appends, and the document
/// is asked again. Lines that do not parse are ignored. With `retry_failed`, the records of the failed
/// documents leave the file first (it is rewritten without them, then renamed over it), so that a
/// document done again is in the output once.
fn recorded_ids(path: &Path, retry_failed: bool) -> Result<HashSet<String>, CliError> {
    let file = match File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(HashSet::new()),
        Err(e) => return Err(CliError::usage(format!("--out {}: {e}", path.display()))),
    };
    let unreadable = |e: std::io::Error| CliError::usage(format!("--out {}: {e}", path.display()));
    let mut ids = HashSet::new();
    let mut kept = Vec::new();
    let mut dropped = false;
    let mut reader = BufReader::new(file);
    let mut line = Vec::new();
    loop {
        line.clear();
        if reader.read_until(b'\n', &mut line).map_err(unreadable)? == 0 {
            break;
        }
        let Some(record) = line.strip_suffix(b"\n") else {
            // The last line, cut off: not a record.
            dropped = true;
            break;
        };
        let record = record.strip_suffix(b"\r").unwrap_or(record);
        let Ok(parsed) = serde_json::from_slice::<Value>(record) else {
            dropped |= !record.trim_ascii().is_empty();
            continue;
        };
        let ok = parsed.get("ok").and_then(Value::as_bool).unwrap_or(false);
        if let Some(id) = parsed.get("id").and_then(Value::as_str) {
            if ok || !retry_failed {
                ids.insert(id.to_owned());
                kept.push(String::from_utf8_lossy(record).into_owned());
            } else {
                dropped = true;
            }
        }
    }
    if retry_failed && dropped {
        rewrite(path, &kept)?;
    }
    Ok(ids)
}

/// Replaces the file at `path` with `lines`, through a file beside it renamed over it, so that a run
/// killed meanwhile leaves either the old file or the new one.
fn rewrite(path: &Path, lines: &[String]) -> Result<(), CliError> {
    let fail = |e: std::io::Error| CliError::io(format!("--out {}: {e}", path.display()));
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let mut file = tempfile::NamedTempFile::new_in(dir).map_err(fail)?;
    for line in lines {
        writeln!(file, "{line}").map_err(fail)?;
    }
    file.as_file().sync_all().map_err(fail)?;
    file.persist(path).map_err(|e| fail(e.error))?;
    Ok(())
}

/// The results file, appended to one flushed line at a time, so a killed run loses at most the line it
/// was writing (which the next run removes).
struct Output {
    file: File,
    shown: String,
}

impl Output {
    fn open(path: &Path) -> Result<Self, CliError> {
        let shown = path.display().to_string();
        let fail = |e: std::io::Error| CliError::io(format!("--out {shown}: {e}"));
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .read(true)
            .open(path)
            .map_err(fail)?;
        // A run killed mid-line leaves a line without its newline: it is no record (`recorded_ids`
        // did not count its document as done), so it goes, and the file ends after its last
        // complete line.
        let length = file.metadata().map_err(fail)?.len();
        let complete = complete_length(&mut file, length).map_err(fail)?;
        if complete < length {
            file.set_len(complete).map_err(fail)?;
        }
        Ok(Output { file, shown })
    }

    fn write(&mut self, record: &Value) -> Result<(), CliError> {
        // One write for the whole line: a run killed now leaves the line whole or absent (or, at
        // worst, cut, which the next run removes).
        let line = format!("{record}\n");
        self.file
            .write_all(line.as_bytes())
            .and_then(|()| self.file.flush())
            .map_err(|e| CliError::io(format!("--out {}: {e}", self.shown)))
    }
}

/// The length of the file up to and including its last newline (0 when it has none), read back from
/// the end in blocks.
fn complete_length(file: &mut File, length: u64) -> std::io::Result<u64> {
    let mut end = length;
    let mut block = [0u8; 4096];
    while end > 0 {
        let start = end.saturating_sub(block.len() as u64);
        let size = usize::try_from(end - start).unwrap_or(block.len());
        let buffer = block.get_mut(..size).unwrap_or_default();
        file.seek(SeekFrom::Start(start))?;
        file.read_exact(buffer)?;
        if let Some(newline) = buffer.iter().rposition(|&b| b == b'\n') {
            return Ok(start + newline as u64 + 1);
        }
        end = start;
    }
    Ok(0)
}

/// The manifest of a run on a provider's batch API whose results go to `out`: beside it.
pub(crate) fn manifest_path(out: &Path) -> PathBuf {
    let mut name = out.as_os_str().to_owned();
    name.push(".batch-manifest.jsonl");
    PathBuf::from(name)
}

/// The provider's batch API the flags select: the one hosted backend (--openai, --anthropic or
/// --gemini), which also makes the online requests of re-asks sent online.
fn provider_batch(args: &BatchArgs) -> Result<(backends::Backend, ProviderBatch), CliError> {
    let flags = &args.backend;
    let hosted = flags.openai.len() + flags.anthropic.len() + flags.gemini.len();
    if hosted != 1 || !flags.ollama.is_empty() || flags.embedded.is_some() {
        return Err(CliError::usage(
            "--provider-batch takes one backend with a batch API: one --openai URL, --anthropic or \
             --gemini, and no other",
        ));
    }
    let manifest = manifest_path(&args.out);
    let hook = crate::backend_layers::dump_hook(flags.dump_exchanges.as_deref())?;
    let hook = hook.as_ref();
    let (llm, api): (backends::Backend, ProviderBatch) = if let Some(url) = flags.openai.first() {
        let llm = backends::openai_llm(flags, 0, url, hook)?;
        let api = ProviderBatch::openai(&llm, &manifest);
        (std::sync::Arc::new(llm), api)
    } else if let Some(url) = flags.anthropic.first() {
        let llm = backends::anthropic_llm(flags, 0, url, hook)?;
        let api = ProviderBatch::anthropic(&llm, &manifest);
        (std::sync::Arc::new(llm), api)
    } else {
        let url = flags.gemini.first().map_or("", String::as_str);
        let llm = backends::gemini_llm(flags, 0, url, hook)?;
        let api = ProviderBatch::gemini(&llm, &manifest);
        (std::sync::Arc::new(llm), api)
    };
    let settings = &args.provider_batch;
    let poll = settings.poll.unwrap_or(30.0);
    let poll = std::time::Duration::try_from_secs_f64(poll).map_err(|_| {
        CliError::usage(format!(
            "--poll {poll}: give a number of seconds, 0 or more"
        ))
    })?;
    let mut api = api.poll_interval(poll);
    if settings.reask_online {
        api = api.repairs(Repairs::Online);
    }
    if let Some(requests) = settings.job_requests {
        let (_, bytes) = api.api().limits();
        api = api.job_limits(requests, bytes);
    }
    Ok((llm, api))
}

/// A run on a provider's batch API that stopped: what to do about it.
fn provider_error(api: &ProviderBatch, error: ProviderBatchError) -> CliError {
    let exit = match &error {
        ProviderBatchError::Manifest { .. } => Exit::Output,
        _ => Exit::Backend,
    };
    CliError::new(
        exit,
        format!(
            "{error}; the documents done are in the output and the jobs in {}: run the same command \
             again to resume",
            api.manifest().display()
        ),
    )
}

/// What the bar says: the documents' progress and, on a provider's batch API, the jobs'.
#[derive(Default)]
struct Status {
    documents: Cell<Progress>,
    jobs: Cell<Option<JobProgress>>,
}

impl Status {
    /// After a document.
    fn documents(&self, bar: &ProgressBar, progress: Progress) {
        self.documents.set(progress);
        bar.set_position(progress.done as u64);
        bar.set_message(self.message());
    }

    /// After a change in the jobs.
    fn jobs(&self, bar: &ProgressBar, jobs: JobProgress) {
        self.jobs.set(Some(jobs));
        bar.set_message(self.message());
    }

    fn message(&self) -> String {
        let progress = self.documents.get();
        let documents = format!(
            "{} ok, {} failed, {} tokens",
            progress.succeeded,
            progress.failed,
            progress.usage.total()
        );
        match self.jobs.get() {
            None => documents,
            Some(jobs) => format!(
                "{documents}; jobs: {} submitted, {} running ({}/{} requests done), {} ended; {} \
                 requests resubmitted",
                jobs.jobs,
                jobs.jobs - jobs.jobs_ended,
                jobs.running_done,
                jobs.running_total,
                jobs.jobs_ended,
                jobs.resubmitted
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn batch_args(extra: &[&str]) -> BatchArgs {
        use clap::Parser;
        let argv = ["llm-extract", "batch", "--signature", "{a :int}"];
        let argv = argv.iter().chain(["--input", "in", "--out", "out"].iter());
        let cli = crate::args::Cli::try_parse_from(argv.chain(extra)).unwrap();
        match cli.command {
            crate::args::Command::Batch(args) => args,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_bar_tells_documents_and_jobs() {
        let status = Status::default();
        let bar = ProgressBar::hidden();
        status.documents(&bar, Progress::default());
        assert_eq!(status.message(), "0 ok, 0 failed, 0 tokens");
        let jobs = JobProgress::default();
        status.jobs(&bar, jobs);
        assert!(status
            .message()
            .starts_with("0 ok, 0 failed, 0 tokens; jobs: 0 submitted"));
        assert_eq!(
            manifest_path(Path::new("a/out.jsonl")),
            Path::new("a/out.jsonl.batch-manifest.jsonl")
        );
    }

    #[test]
    fn the_embedded_engine_decodes_sequences_together_only_when_asked() {
        assert_eq!(engine_parallel(&batch_args(&["--embedded"])), 1);
        assert_eq!(engine_parallel(&batch_args(&[])), 1);
        let asked = batch_args(&["--embedded", "--concurrency", "4"]);
        assert_eq!(engine_parallel(&asked), 4);
    }

    #[test]
    fn recorded_ids_skip_broken_lines_and_failed_ones_on_retry() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.jsonl");
        std::fs::write(
            &path,
            "{\"id\": \"a\", \"ok\": true}\n{\"id\": \"b\", \"ok\": false}\n{\"id\": \"c\", \"o",
        )
        .unwrap();
        let all = recorded_ids(&path, false).unwrap();
        assert!(all.contains("a") && all.contains("b") && !all.contains("c"));
        let ok_only = recorded_ids(&path, true).unwrap();
        assert!(ok_only.contains("a") && !ok_only.contains("b"));
        assert!(recorded_ids(&dir.path().join("none.jsonl"), false)
            .unwrap()
            .is_empty());
    }

    #[test]
    fn a_line_cut_by_a_killed_run_is_removed_before_appending() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.jsonl");
        let whole = "{\"id\": \"a\", \"ok\": true}\n";
        std::fs::write(&path, format!("{whole}{}", "{\"id\": \"b\", \"ok\": tr")).unwrap();
        let mut out = Output::open(&path).unwrap();
        out.write(&json!({"id": "b", "ok": true})).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text, format!("{whole}{}\n", r#"{"id":"b","ok":true}"#));

        // Only a cut line, longer than a block read back: the file becomes empty, then gets the record.
        std::fs::write(&path, "x".repeat(10_000)).unwrap();
        Output::open(&path)
            .unwrap()
            .write(&json!({"id": "c"}))
            .unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{\"id\":\"c\"}\n");

        // A file of complete lines is left as it is.
        let lines = "{\"id\":\"c\"}\n".repeat(1000);
        std::fs::write(&path, &lines).unwrap();
        drop(Output::open(&path).unwrap());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), lines);
    }

    /// Resumes a batch of `ids` from the results file `path` as a run does: the ids recorded, the file
    /// opened for appending, a record appended for each document not done.
    fn resume(path: &Path, ids: &[&str], retry_failed: bool) {
        let done = recorded_ids(path, retry_failed).unwrap();
        let mut out = Output::open(path).unwrap();
        for id in ids.iter().filter(|id| !done.contains(**id)) {
            out.write(&json!({"id": id, "ok": true, "value": {"n": 1}}))
                .unwrap();
        }
    }

    /// How many times each of `ids` is recorded in `path`.
    fn counts(path: &Path, ids: &[&str]) -> Vec<usize> {
        let text = std::fs::read_to_string(path).unwrap();
        let recorded: Vec<Value> = text
            .lines()
            .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{line:?}: {e}")))
            .collect();
        ids.iter()
            .map(|id| recorded.iter().filter(|r| r["id"] == *id).count())
            .collect()
    }

    #[test]
    fn a_run_killed_at_any_byte_of_a_record_resumes_with_every_document_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.jsonl");
        let ids = ["a", "b", "c"];
        // The file as a run writes it, with the record of "c" last.
        let whole = {
            let _ = std::fs::remove_file(&path);
            resume(&path, &ids, false);
            std::fs::read(&path).unwrap()
        };
        let last = whole.len() - 1;
        let start = whole[..last].iter().rposition(|&b| b == b'\n').unwrap() + 1;
        for retry_failed in [false, true] {
            // Killed after `cut` bytes of the last record (all of them but its newline included).
            for cut in start..=whole.len() {
                std::fs::write(&path, &whole[..cut]).unwrap();
                resume(&path, &ids, retry_failed);
                assert_eq!(
                    counts(&path, &ids),
                    [1, 1, 1],
                    "cut after {cut} bytes of {}, retry_failed {retry_failed}",
                    whole.len()
                );
            }
        }
    }

    #[test]
    fn retrying_failed_documents_takes_their_records_out_first() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.jsonl");
        std::fs::write(
            &path,
            "{\"id\": \"a\", \"ok\": true}\n{\"id\": \"b\", \"ok\": false}\n{\"id\": \"c\", \"ok\": true}\n",
        )
        .unwrap();
        let ids = recorded_ids(&path, true).unwrap();
        assert_eq!(ids.len(), 2);
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "{\"id\": \"a\", \"ok\": true}\n{\"id\": \"c\", \"ok\": true}\n"
        );
        // Without --retry-failed the file is only read.
        std::fs::write(&path, "{\"id\": \"b\", \"ok\": false}\n").unwrap();
        assert!(recorded_ids(&path, false).unwrap().contains("b"));
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "{\"id\": \"b\", \"ok\": false}\n"
        );
    }
}

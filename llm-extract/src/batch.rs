//! Many records, one schema: [`Batch`] runs one extraction per record with bounded concurrency,
//! shares the records round-robin between one or several backends, reports progress as each record
//! completes, and keeps every record's outcome. A failed record is a result like any other: it
//! never stops the batch.
//!
//! Each record is one extraction of an [`Extractor`] (see [`extract`](crate::extract));
//! the command-line tool's `batch` command is built on this module.
//!
//! A batch can also run on a provider's batch API ([`ProviderBatch`]: OpenAI's Batch API,
//! Anthropic's Message Batches, Gemini's batch mode), at the provider's batch price:
//! [`Batch::for_each_on`] sends each record's request in jobs instead of one online call each, puts
//! every answer through the same parsing, validation, checks and confidence as an online answer, and
//! re-asks the records whose answer fails in a follow-up job (or online), up to the attempt cap. A
//! manifest file records the jobs and their results, so running the same batch again resumes
//! (polls, reads what finished) without paying twice for a request.
//!
//! Files (`batch/`): `provider.rs` (which batch API, a run's settings, the split into jobs),
//! `rounds.rs` (the rounds of a run: requests waiting at a desk, sent as jobs), `job.rs` (what every
//! provider's jobs share), `manifest.rs` (the record a run resumes from), and one file per provider's
//! wire format: `openai.rs`, `anthropic.rs`, `gemini.rs`.
//!
//! ```
//! use llm_extract::batch::{Batch, Record};
//! use llm_extract::extract::Extractor;
//! use llm_extract::llm::{from_fn, ChatResponse};
//! use llm_extract::schema::DynamicSchema;
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let llm = from_fn(|_request| async { Ok(ChatResponse::new(r#"{"city": "Lyon"}"#)) });
//! let schema = DynamicSchema::from_signature("{city :string}")?;
//! let records = vec![
//!     Record::new("a", "A walk along the Saône."),
//!     Record::new("b", "Lunch at a bouchon."),
//! ];
//! let results = Batch::new(Extractor::new(llm))
//!     .concurrency(8)
//!     .extract_many(schema.schema_set(), records, |progress| {
//!         eprintln!("{}/{} done", progress.done, progress.total.unwrap_or(0));
//!     })
//!     .await;
//! assert_eq!(results.len(), 2);
//! assert_eq!(results[1].id, "b");
//! assert_eq!(results[1].outcome.as_ref().unwrap().value["city"], "Lyon");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```

use crate::extract::{ExtractError, Extractor, Input};
use crate::llm::{Llm, Usage};
use crate::report::Extraction;
use crate::schema::SchemaSet;
use futures_util::StreamExt;
use serde_json::Value;
use std::time::{Duration, Instant};

mod anthropic;
mod gemini;
mod job;
mod manifest;
mod openai;
mod provider;
mod rounds;

pub use provider::{BatchApi, ProviderBatch, ProviderBatchError, Repairs};
pub use rounds::JobProgress;

/// One record of a batch: an id (reported with its result) and what the prompt template is filled from.
#[derive(Debug, Clone)]
pub struct Record {
    /// Names the record in results and progress (a file name, a row key, ...).
    pub id: String,
    /// The text, or the template variables.
    pub input: Input,
}

impl Record {
    /// A record named `id` holding `input` (a text, or an [`Input`] with variables).
    pub fn new(id: impl Into<String>, input: impl Into<Input>) -> Self {
        Record {
            id: id.into(),
            input: input.into(),
        }
    }
}

/// What became of one record.
#[derive(Debug)]
#[non_exhaustive]
pub struct RecordResult {
    /// The record's id.
    pub id: String,
    /// Its position in the input, from 0.
    pub index: usize,
    /// Which backend (extractor) handled it, from 0, in the order they were given.
    pub backend: usize,
    /// The extraction, or why it failed (with every attempt and its raw answer). With
    /// [`Batch::all_items`], the value is a JSON array of the items.
    pub outcome: Result<Extraction<Value>, ExtractError>,
    /// Of the record's tokens, those answered through a provider's batch API, billed at its batch
    /// price (zero for online calls).
    pub batch_usage: Usage,
}

impl RecordResult {
    /// Whether the extraction succeeded.
    pub fn is_ok(&self) -> bool {
        self.outcome.is_ok()
    }

    /// The tokens the record cost, whether it succeeded or not.
    pub fn usage(&self) -> Usage {
        match &self.outcome {
            Ok(extraction) => extraction.report.usage,
            Err(error) => error.usage(),
        }
    }
}

/// How far a batch has got, passed to the progress callback after each record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Progress {
    /// Records finished (succeeded plus failed).
    pub done: usize,
    /// Records extracted.
    pub succeeded: usize,
    /// Records that failed.
    pub failed: usize,
    /// How many records there are, when the input says so up front.
    pub total: Option<usize>,
    /// Tokens spent so far.
    pub usage: Usage,
}

impl Progress {
    /// Counts one finished record.
    fn count(&mut self, result: &RecordResult) {
        self.done += 1;
        if result.is_ok() {
            self.succeeded += 1;
        } else {
            self.failed += 1;
        }
        self.usage += result.usage();
    }
}

/// The totals of a finished batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct BatchSummary {
    /// Records extracted.
    pub succeeded: usize,
    /// Records that failed.
    pub failed: usize,
    /// Tokens spent by every record, failed ones included.
    pub usage: Usage,
    /// Of `usage`, the tokens answered through a provider's batch API, billed at its batch price.
    pub batch_usage: Usage,
    /// Wall-clock time of the whole batch.
    pub elapsed: Duration,
}

/// Runs one extraction per record, several at a time, over one or more backends.
///
/// Each backend is an [`Extractor`] with its own settings; records go to them in turn (record `i` to
/// extractor `i % n`), so a batch that outgrows one server can be pointed at several. Concurrency is
/// bounded across all of them: at most [`Batch::concurrency`] records are in flight. Everything runs on
/// the calling task (no spawning), so the extractors and the schema may be borrowed.
///
/// See the [module documentation](self) for an example.
#[derive(Debug, Clone)]
pub struct Batch<L> {
    first: Extractor<L>,
    more: Vec<Extractor<L>>,
    concurrency: usize,
    all_items: bool,
}

impl<L: Llm> Batch<L> {
    /// A batch on one backend, four records at a time.
    pub fn new(extractor: Extractor<L>) -> Self {
        Batch {
            first: extractor,
            more: Vec::new(),
            concurrency: 4,
            all_items: false,
        }
    }

    /// Adds a backend: records are shared round-robin between all of them.
    pub fn with_extractor(mut self, extractor: Extractor<L>) -> Self {
        self.more.push(extractor);
        self
    }

    /// How many records are extracted at the same time, over all backends (default 4; at least 1).
    pub fn concurrency(mut self, records: usize) -> Self {
        self.concurrency = records.max(1);
        self
    }

    /// Extracts every item the schema describes from each record (as
    /// [`SchemaExtractor::extract_all`](crate::extract::SchemaExtractor::extract_all)) instead of one value; each result's value is then a JSON array.
    /// Default `false`.
    pub fn all_items(mut self, all: bool) -> Self {
        self.all_items = all;
        self
    }

    /// How many backends share the records.
    pub fn backends(&self) -> usize {
        1 + self.more.len()
    }

    /// Backend number `backend` (0 is the one given to [`Batch::new`]).
    fn extractor(&self, backend: usize) -> &Extractor<L> {
        backend
            .checked_sub(1)
            .and_then(|i| self.more.get(i))
            .unwrap_or(&self.first)
    }

    /// Extracts every record and returns the results in input order. `on_progress` is called after
    /// each record finishes.
    pub async fn extract_many(
        &self,
        schema: &SchemaSet,
        records: impl IntoIterator<Item = Record>,
        mut on_progress: impl FnMut(Progress),
    ) -> Vec<RecordResult> {
        let mut results = Vec::new();
        self.for_each(schema, records, |result, progress| {
            results.push(result);
            on_progress(progress);
        })
        .await;
        results.sort_by_key(|result| result.index);
        results
    }

    /// Extracts every record, handing each result to `on_result` as soon as it is finished (in
    /// completion order), with the progress so far. Records are read from `records` lazily, as slots
    /// free up, so the input may be larger than memory.
    pub async fn for_each(
        &self,
        schema: &SchemaSet,
        records: impl IntoIterator<Item = Record>,
        mut on_result: impl FnMut(RecordResult, Progress),
    ) -> BatchSummary {
        let started = Instant::now();
        let records = records.into_iter();
        let total = match records.size_hint() {
            (lower, Some(upper)) if lower == upper => Some(lower),
            _ => None,
        };
        let mut progress = Progress {
            total,
            ..Progress::default()
        };
        let mut running = futures_util::stream::iter(records.enumerate())
            .map(|(index, record)| self.extract_one(schema, index, record))
            .buffer_unordered(self.concurrency);
        while let Some(result) = running.next().await {
            progress.count(&result);
            on_result(result, progress);
        }
        BatchSummary {
            succeeded: progress.succeeded,
            failed: progress.failed,
            usage: progress.usage,
            batch_usage: Usage::default(),
            elapsed: started.elapsed(),
        }
    }

    /// Extracts every record through the provider's batch API `api` (with the first backend's
    /// settings: template, examples, checks, attempts), handing each result to `on_result` as soon as
    /// its extraction is finished, and the jobs' progress to `on_jobs`.
    ///
    /// Each record's first request goes in a job; its answer is read, validated and checked as an
    /// online answer is; a failing answer is re-asked with the repair turn in a follow-up job (or
    /// online, by [`ProviderBatch::repairs`]), up to the extractor's attempt cap. A request the
    /// provider reports as errored (transiently), expired or canceled is submitted again up to
    /// [`ProviderBatch::resubmits`] times; then its record fails with the ledger of its attempts.
    /// Every job and result is recorded in the manifest as it happens: after an interruption, the
    /// same call with the same records polls the jobs still running and reads the answers already
    /// paid for instead of submitting them again.
    ///
    /// All records are held in memory (a round holds every record's request), and
    /// [`concurrency`](Self::concurrency) and the backends added with
    /// [`with_extractor`](Self::with_extractor) do not apply: the provider runs the jobs. Fails only when the
    /// manifest or the batch API itself fails (a job cannot be created, polled or read, after the
    /// backend's retry policy); the results handed on before stay valid, and running again resumes.
    pub async fn for_each_on(
        &self,
        api: &ProviderBatch,
        schema: &SchemaSet,
        records: impl IntoIterator<Item = Record>,
        mut on_result: impl FnMut(RecordResult, Progress),
        mut on_jobs: impl FnMut(JobProgress),
    ) -> Result<BatchSummary, ProviderBatchError> {
        let started = Instant::now();
        let records: Vec<Record> = records.into_iter().collect();
        let ids: Vec<String> = records.iter().map(|record| record.id.clone()).collect();
        let shared = rounds::Shared::new(api, records.len());
        let driver = rounds::Driver::new(api, &shared, ids)?;
        let extractor = self.first.with_llm(rounds::Deferred { shared: &shared });
        let all_items = self.all_items;
        let extractor = &extractor;
        let mut progress = Progress {
            total: Some(records.len()),
            ..Progress::default()
        };
        let mut batch_usage = Usage::default();
        let mut running: futures_util::stream::FuturesUnordered<_> = records
            .into_iter()
            .enumerate()
            .map(|(index, record)| {
                rounds::as_document(index, async move {
                    let outcome = extract(extractor, schema, all_items, record.input).await;
                    (index, record.id, outcome)
                })
            })
            .collect();
        let documents = async {
            while let Some((index, id, outcome)) = running.next().await {
                let result = RecordResult {
                    id,
                    index,
                    backend: 0,
                    outcome,
                    batch_usage: shared.finished(index),
                };
                progress.count(&result);
                batch_usage += result.batch_usage;
                on_result(result, progress);
            }
        };
        let jobs = driver.run(&mut on_jobs);
        futures_util::pin_mut!(documents, jobs);
        match futures_util::future::select(documents, jobs).await {
            futures_util::future::Either::Left(((), _)) => {}
            futures_util::future::Either::Right((Err(error), _)) => return Err(error),
            futures_util::future::Either::Right((Ok(()), documents)) => documents.await,
        }
        Ok(BatchSummary {
            succeeded: progress.succeeded,
            failed: progress.failed,
            usage: progress.usage,
            batch_usage,
            elapsed: started.elapsed(),
        })
    }

    /// [`for_each_on`](Self::for_each_on), the results collected in input order.
    pub async fn extract_many_on(
        &self,
        api: &ProviderBatch,
        schema: &SchemaSet,
        records: impl IntoIterator<Item = Record>,
    ) -> Result<Vec<RecordResult>, ProviderBatchError> {
        let mut results = Vec::new();
        self.for_each_on(
            api,
            schema,
            records,
            |result, _| results.push(result),
            |_| {},
        )
        .await?;
        results.sort_by_key(|result| result.index);
        Ok(results)
    }

    async fn extract_one(&self, schema: &SchemaSet, index: usize, record: Record) -> RecordResult {
        let backend = index % self.backends();
        let extractor = self.extractor(backend);
        let outcome = extract(extractor, schema, self.all_items, record.input).await;
        RecordResult {
            id: record.id,
            index,
            backend,
            outcome,
            batch_usage: Usage::default(),
        }
    }
}

/// One record's extraction: one value, or (`all_items`) every item as a JSON array.
async fn extract<M: Llm>(
    extractor: &Extractor<M>,
    schema: &SchemaSet,
    all_items: bool,
    input: Input,
) -> Result<Extraction<Value>, ExtractError> {
    if all_items {
        extractor
            .with_schema(schema)
            .extract_all(input)
            .await
            .map(|extraction| extraction.map(Value::Array))
    } else {
        extractor.with_schema(schema).extract(input).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::{from_fn, ChatRequest, ChatResponse, LlmError};
    use crate::schema::DynamicSchema;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    fn schema() -> DynamicSchema {
        DynamicSchema::from_signature("{n :int}").unwrap()
    }

    /// A backend answering `{"n": <the text's length>}`, or garbage for texts that start with "bad".
    fn echo_length(calls: Arc<AtomicUsize>) -> impl Llm {
        from_fn(move |request: ChatRequest| {
            calls.fetch_add(1, Ordering::SeqCst);
            async move {
                let text = request
                    .messages
                    .first()
                    .map(|m| m.content.clone())
                    .unwrap_or_default();
                if text.starts_with("bad") {
                    Ok(ChatResponse::new("no json here"))
                } else {
                    Ok(ChatResponse::new(format!("{{\"n\": {}}}", text.len())).with_usage(3, 2))
                }
            }
        })
    }

    fn run<F: std::future::Future>(future: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(future)
    }

    #[test]
    fn a_failed_record_is_kept_and_the_batch_goes_on() {
        let calls = Arc::new(AtomicUsize::new(0));
        let batch = Batch::new(Extractor::new(echo_length(Arc::clone(&calls))).max_attempts(2))
            .concurrency(2);
        let records = ["one", "bad one", "three!"]
            .iter()
            .enumerate()
            .map(|(i, text)| Record::new(format!("doc-{i}"), *text));
        let mut seen = Vec::new();
        let schema = schema();
        let results = run(batch.extract_many(schema.schema_set(), records, |p| seen.push(p)));
        let ids: Vec<&str> = results.iter().map(|r| r.id.as_str()).collect();
        assert_eq!(ids, ["doc-0", "doc-1", "doc-2"]);
        assert_eq!(
            results[0].outcome.as_ref().unwrap().value,
            serde_json::json!({"n": 3})
        );
        assert_eq!(
            results[2].outcome.as_ref().unwrap().value,
            serde_json::json!({"n": 6})
        );
        let failure = results[1].outcome.as_ref().unwrap_err();
        assert_eq!(failure.attempts().len(), 2);
        assert_eq!(failure.raw(), Some("no json here"));
        assert_eq!(calls.load(Ordering::SeqCst), 4);
        let last = *seen.last().unwrap();
        assert_eq!(
            (last.done, last.succeeded, last.failed, last.total),
            (3, 2, 1, Some(3))
        );
        assert_eq!(seen.iter().map(|p| p.done).collect::<Vec<_>>(), [1, 2, 3]);
    }

    #[test]
    fn records_are_shared_round_robin() {
        let first = Arc::new(AtomicUsize::new(0));
        let second = Arc::new(AtomicUsize::new(0));
        let a: Box<dyn Llm> = Box::new(echo_length(Arc::clone(&first)));
        let b: Box<dyn Llm> = Box::new(echo_length(Arc::clone(&second)));
        let batch = Batch::new(Extractor::new(a)).with_extractor(Extractor::new(b));
        let schema = schema();
        let records = (0..5).map(|i| Record::new(i.to_string(), "x"));
        let results = run(batch.extract_many(schema.schema_set(), records, |_| {}));
        assert_eq!(
            results.iter().map(|r| r.backend).collect::<Vec<_>>(),
            [0, 1, 0, 1, 0]
        );
        assert_eq!(first.load(Ordering::SeqCst), 3);
        assert_eq!(second.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn concurrency_is_bounded() {
        let in_flight = Arc::new(AtomicUsize::new(0));
        let peak = Arc::new(AtomicUsize::new(0));
        let (now, max) = (Arc::clone(&in_flight), Arc::clone(&peak));
        let llm = from_fn(move |_request| {
            let (now, max) = (Arc::clone(&now), Arc::clone(&max));
            async move {
                let running = now.fetch_add(1, Ordering::SeqCst) + 1;
                max.fetch_max(running, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(5)).await;
                now.fetch_sub(1, Ordering::SeqCst);
                Ok::<_, LlmError>(ChatResponse::new("{\"n\": 1}"))
            }
        });
        let batch = Batch::new(Extractor::new(llm)).concurrency(3);
        let schema = schema();
        let summary = run(batch.for_each(
            schema.schema_set(),
            (0..12).map(|i| Record::new(i.to_string(), "x")),
            |_, _| {},
        ));
        assert_eq!((summary.succeeded, summary.failed), (12, 0));
        assert_eq!(peak.load(Ordering::SeqCst), 3);
    }

    #[test]
    fn all_items_gives_an_array_per_record() {
        let llm = from_fn(|_request| async { Ok(ChatResponse::new("{\"n\": 1}\n{\"n\": 2}\n")) });
        let batch =
            Batch::new(Extractor::new(llm).mode(crate::extract::Mode::Prompted)).all_items(true);
        let schema = schema();
        let results = run(batch.extract_many(
            schema.schema_set(),
            [Record::new("only", "two numbers")],
            |_| {},
        ));
        assert_eq!(
            results[0].outcome.as_ref().unwrap().value,
            serde_json::json!([{"n": 1}, {"n": 2}])
        );
    }
}

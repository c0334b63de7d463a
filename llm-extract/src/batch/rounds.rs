//! The rounds of a run on a provider's batch API. Every document's extraction runs as it does
//! online, over a backend that does not answer at once: each request it makes waits at a desk. When
//! every document still running waits there, the requests are a round: answered from the manifest
//! where an earlier run already paid for them, and otherwise written by the backend's own body
//! builder, submitted in jobs within the provider's limits, polled, and read back. Each answer goes
//! back to its extraction, which parses, validates, checks and scores it as it would an online one,
//! and asks again with the repair turn when it fails (that request waits for the next round, or goes
//! online with [`Repairs::Online`]). A request the provider reports as errored or expired is
//! submitted again, up to the resubmit count, before its document's extraction is told it failed.
//!
//! A request's `custom_id` is a hash of its document's id, then a hash of its body (and how many
//! times the same document sent the same body before), so a changed request is a new one and an
//! unchanged one is found again in the manifest by a later run.
//!
//! An answer goes back with where it came from, written on the attempt span that asked for it:
//! `llm_extract.batch_id` (the provider's id of the job that answered; none for an answer online)
//! and `llm_extract.batch_request` (the request's `custom_id`), so a trace names the job a
//! document's answer came from.

use super::job::{JobState, Line, Outcome};
use super::manifest::{Manifest, ONLINE};
use super::provider::{ProviderBatch, ProviderBatchError, Repairs};
use crate::llm::{
    BoxFuture, ChatEvent, ChatRequest, ChatResponse, ChatStream, Description, Llm, LlmError, Usage,
};
use crate::schema::Dialect;
use crate::stable_hash;
use futures_util::StreamExt;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Mutex;
use tokio::sync::{oneshot, Notify};

tokio::task_local! {
    /// The document (its index in the run) whose extraction is being polled.
    static DOCUMENT: usize;
}

/// Runs `future` as the extraction of document `index`: its requests wait at the desk under it.
pub(super) async fn as_document<F: std::future::Future>(index: usize, future: F) -> F::Output {
    DOCUMENT.scope(index, future).await
}

/// How far the jobs of a run have got, passed to its callback at each poll and each change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct JobProgress {
    /// Jobs recorded in the manifest (this run's and earlier runs').
    pub jobs: usize,
    /// Of those, jobs that ended.
    pub jobs_ended: usize,
    /// Requests this run submitted in jobs (resubmissions and re-asks included).
    pub submitted: usize,
    /// Of those, requests submitted again after the provider reported them errored or expired.
    pub resubmitted: usize,
    /// Requests answered from the manifest, paid for by an earlier run.
    pub from_manifest: usize,
    /// Requests answered online (re-asks with [`Repairs::Online`]).
    pub online: usize,
    /// Requests of running jobs the provider reports done, and how many requests those jobs hold.
    pub running_done: u64,
    /// See [`running_done`](Self::running_done).
    pub running_total: u64,
}

/// Where an answer of a run came from.
struct Origin {
    /// The provider's id of the job that answered, or [`ONLINE`].
    job: String,
    /// The request's `custom_id`.
    custom_id: String,
}

impl Origin {
    /// Writes the job and the request on `span` (an extraction's attempt span declares them).
    fn record(&self, span: &tracing::Span) {
        if self.job != ONLINE {
            span.record("llm_extract.batch_id", self.job.as_str());
        }
        span.record("llm_extract.batch_request", self.custom_id.as_str());
    }
}

/// Where the answer to a waiting request goes, with where it came from.
type Reply = oneshot::Sender<Result<(ChatResponse, Origin), LlmError>>;

/// A request waiting for its answer.
struct Waiting {
    doc: usize,
    request: ChatRequest,
    reply: Reply,
}

/// Where requests wait, and who is waiting.
#[derive(Default)]
struct Desk {
    waiting: Vec<Waiting>,
    /// Requests waiting, per document.
    per_doc: Vec<u32>,
    /// Documents with a request waiting.
    docs_waiting: usize,
    /// Documents whose extraction is still running.
    active: usize,
    /// Tokens of batch-priced answers, per document.
    batch_usage: Vec<Usage>,
}

/// The desk and what the extractions' backend says of itself.
pub(super) struct Shared {
    desk: Mutex<Desk>,
    notify: Notify,
    dialect: Dialect,
    description: Description,
}

impl Shared {
    /// A desk for `documents` documents, all running, on the backend of `api`.
    pub fn new(api: &ProviderBatch, documents: usize) -> Self {
        Shared {
            desk: Mutex::new(Desk {
                per_doc: vec![0; documents],
                active: documents,
                batch_usage: vec![Usage::default(); documents],
                ..Desk::default()
            }),
            notify: Notify::new(),
            dialect: api.wire.dialect(),
            description: api.wire.description(),
        }
    }

    fn desk(&self) -> std::sync::MutexGuard<'_, Desk> {
        self.desk
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Document `doc` finished: its batch-priced tokens.
    pub fn finished(&self, doc: usize) -> Usage {
        let usage = {
            let mut desk = self.desk();
            desk.active = desk.active.saturating_sub(1);
            desk.batch_usage.get(doc).copied().unwrap_or_default()
        };
        self.notify.notify_one();
        usage
    }

    fn wait(
        &self,
        doc: usize,
        request: ChatRequest,
    ) -> oneshot::Receiver<Result<(ChatResponse, Origin), LlmError>> {
        let (reply, answer) = oneshot::channel();
        {
            let mut desk = self.desk();
            if let Some(count) = desk.per_doc.get_mut(doc) {
                *count += 1;
                if *count == 1 {
                    desk.docs_waiting += 1;
                }
            }
            desk.waiting.push(Waiting {
                doc,
                request,
                reply,
            });
        }
        self.notify.notify_one();
        answer
    }

    /// The next round: every waiting request, once every running document waits; `None` once no
    /// document runs.
    async fn round(&self) -> Option<Vec<Waiting>> {
        loop {
            {
                let mut desk = self.desk();
                if desk.active == 0 {
                    return None;
                }
                if desk.docs_waiting > 0 && desk.docs_waiting >= desk.active {
                    desk.docs_waiting = 0;
                    let waiting = std::mem::take(&mut desk.waiting);
                    for w in &waiting {
                        if let Some(count) = desk.per_doc.get_mut(w.doc) {
                            *count = 0;
                        }
                    }
                    return Some(waiting);
                }
            }
            self.notify.notified().await;
        }
    }

    fn add_batch_usage(&self, doc: usize, usage: Usage) {
        if let Some(total) = self.desk().batch_usage.get_mut(doc) {
            *total += usage;
        }
    }
}

/// The backend the extractions of a run ask: it answers when the round does.
#[derive(Clone, Copy)]
pub(super) struct Deferred<'a> {
    pub shared: &'a Shared,
}

impl std::fmt::Debug for Deferred<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Deferred")
            .field("backend", &self.shared.description)
            .finish()
    }
}

impl Llm for Deferred<'_> {
    fn dialect(&self) -> Dialect {
        self.shared.dialect
    }

    fn describe(&self) -> Option<Description> {
        Some(self.shared.description.clone())
    }

    fn chat(&self, request: ChatRequest) -> BoxFuture<'_, Result<ChatResponse, LlmError>> {
        let answer = match DOCUMENT.try_with(|doc| *doc) {
            Ok(doc) => self.shared.wait(doc, request),
            Err(_) => {
                return Box::pin(async {
                    Err(LlmError::Other {
                        message: "a batch request was made outside of a document's extraction"
                            .into(),
                    })
                })
            }
        };
        Box::pin(async move {
            let (response, origin) = answer.await.unwrap_or_else(|_| {
                Err(LlmError::Other {
                    message: "the batch run stopped before answering".into(),
                })
            })?;
            origin.record(&tracing::Span::current());
            Ok(response)
        })
    }

    fn chat_stream(&self, request: ChatRequest) -> BoxFuture<'_, Result<ChatStream, LlmError>> {
        let answer = self.chat(request);
        Box::pin(async move {
            let response = answer.await?;
            let mut events: Vec<Result<ChatEvent, LlmError>> = Vec::new();
            if let Some(thinking) = &response.thinking {
                events.push(Ok(ChatEvent::Thinking(thinking.clone())));
            }
            if !response.text.is_empty() {
                events.push(Ok(ChatEvent::Delta(response.text.clone())));
            }
            events.push(Ok(ChatEvent::Done(response)));
            Ok(Box::pin(futures_util::stream::iter(events)) as ChatStream)
        })
    }
}

/// A request of a round, written.
struct Ask {
    doc: usize,
    /// Failures the manifest held for the request when this run first asked it (the resubmits count
    /// from there, so a run started again may submit what an earlier one gave up on).
    earlier_failures: u32,
    custom_id: String,
    body: Value,
    reply: Reply,
}

/// The side of a run that submits, polls and answers.
pub(super) struct Driver<'a> {
    api: &'a ProviderBatch,
    shared: &'a Shared,
    manifest: Manifest,
    ids: Vec<String>,
    /// Requests each document made so far (the first goes in a job; the later ones are re-asks).
    calls: Vec<u32>,
    /// Per document, how many times each body was sent (by hash).
    seen: Vec<HashMap<u64, u32>>,
    progress: JobProgress,
}

impl<'a> Driver<'a> {
    /// A driver of the documents `ids` on `api`, the manifest read.
    pub fn new(
        api: &'a ProviderBatch,
        shared: &'a Shared,
        ids: Vec<String>,
    ) -> Result<Self, ProviderBatchError> {
        let manifest = Manifest::open(&api.manifest, api.api.name())?;
        let (jobs, jobs_ended) = manifest.job_counts();
        Ok(Driver {
            api,
            shared,
            manifest,
            calls: vec![0; ids.len()],
            seen: vec![HashMap::new(); ids.len()],
            ids,
            progress: JobProgress {
                jobs,
                jobs_ended,
                ..JobProgress::default()
            },
        })
    }

    /// Answers every round until no document runs.
    pub async fn run(
        mut self,
        on_jobs: &mut dyn FnMut(JobProgress),
    ) -> Result<(), ProviderBatchError> {
        while let Some(waiting) = self.shared.round().await {
            self.round(waiting, on_jobs).await?;
        }
        Ok(())
    }

    fn doc_id(&self, doc: usize) -> &str {
        self.ids.get(doc).map_or("", String::as_str)
    }

    /// The `custom_id` of `body` sent by document `doc`.
    fn custom_id(&mut self, doc: usize, body: &Value) -> String {
        let text = body.to_string();
        let content = stable_hash::hash(text.as_bytes());
        let nth = self
            .seen
            .get_mut(doc)
            .map(|seen| {
                let count = seen.entry(content).or_insert(0);
                *count += 1;
                *count
            })
            .unwrap_or(1);
        request_id(self.doc_id(doc), &text, nth)
    }

    async fn round(
        &mut self,
        waiting: Vec<Waiting>,
        on_jobs: &mut dyn FnMut(JobProgress),
    ) -> Result<(), ProviderBatchError> {
        let mut in_jobs = Vec::new();
        let mut online = Vec::new();
        for Waiting {
            doc,
            request,
            reply,
        } in waiting
        {
            let call = match self.calls.get_mut(doc) {
                Some(calls) => {
                    *calls += 1;
                    *calls
                }
                None => 1,
            };
            let body = match self.api.wire.body(&request) {
                Ok(body) => for_batch(body),
                Err(e) => {
                    let _ = reply.send(Err(e));
                    continue;
                }
            };
            let custom_id = self.custom_id(doc, &body);
            if let Some((job, answer)) = self.manifest.answer(&custom_id) {
                let origin = Origin {
                    job: job.to_owned(),
                    custom_id,
                };
                let answer = answer.clone();
                self.progress.from_manifest += 1;
                self.reply(doc, reply, &answer, origin);
                continue;
            }
            let ask = Ask {
                doc,
                earlier_failures: self.manifest.failures(&custom_id).1,
                custom_id,
                body,
                reply,
            };
            if call > 1 && self.api.repairs == Repairs::Online {
                online.push(ask);
            } else {
                in_jobs.push(ask);
            }
        }
        self.online(online, on_jobs).await?;
        self.in_jobs(in_jobs, on_jobs).await
    }

    /// Sends `answer` (a body as the online call reads it), from `origin`, back to document `doc`'s
    /// extraction.
    fn reply(&self, doc: usize, reply: Reply, answer: &Value, origin: Origin) {
        let response = self.api.wire.read(answer);
        if let (Ok(response), true) = (&response, origin.job != ONLINE) {
            self.shared.add_batch_usage(doc, response.usage);
        }
        let _ = reply.send(response.map(|response| (response, origin)));
    }

    /// Re-asks sent online, a few at a time, each answer recorded as it comes.
    async fn online(
        &mut self,
        asks: Vec<Ask>,
        on_jobs: &mut dyn FnMut(JobProgress),
    ) -> Result<(), ProviderBatchError> {
        if asks.is_empty() {
            return Ok(());
        }
        let api = self.api;
        let url = api.wire.chat_url();
        let url = &url;
        let mut answers = futures_util::stream::iter(asks)
            .map(|ask| async move {
                let answer = api
                    .wire
                    .send(url, Some(&ask.body))
                    .await
                    .and_then(|bytes| super::openai::parse(&bytes));
                (ask, answer)
            })
            .buffer_unordered(api.online_concurrency);
        while let Some((ask, answer)) = answers.next().await {
            self.progress.online += 1;
            match answer {
                Ok(body) => {
                    let document = self.doc_id(ask.doc).to_owned();
                    let outcome = Outcome::Answer { body };
                    self.manifest
                        .result(ONLINE, &ask.custom_id, &document, outcome.clone())?;
                    if let Outcome::Answer { body } = outcome {
                        let origin = Origin {
                            job: ONLINE.to_owned(),
                            custom_id: ask.custom_id,
                        };
                        self.reply(ask.doc, ask.reply, &body, origin);
                    }
                }
                Err(e) => {
                    let _ = ask.reply.send(Err(e));
                }
            }
            on_jobs(self.progress);
        }
        Ok(())
    }

    /// Requests answered through jobs: each waits for a job it is in that has not ended, or is
    /// submitted (again, while its resubmits last) in a new one; every job watched is polled until
    /// it ends and its results are recorded.
    async fn in_jobs(
        &mut self,
        asks: Vec<Ask>,
        on_jobs: &mut dyn FnMut(JobProgress),
    ) -> Result<(), ProviderBatchError> {
        let mut pending: Vec<Option<Ask>> = asks.into_iter().map(Some).collect();
        loop {
            let mut lines = Vec::new();
            let mut watched: Vec<String> = Vec::new();
            for slot in pending.iter_mut() {
                let Some(ask) = slot.as_ref() else { continue };
                if let Some((job, answer)) = self.manifest.answer(&ask.custom_id) {
                    let job = job.to_owned();
                    let answer = answer.clone();
                    if let Some(ask) = slot.take() {
                        let origin = Origin {
                            job,
                            custom_id: ask.custom_id,
                        };
                        self.reply(ask.doc, ask.reply, &answer, origin);
                    }
                    continue;
                }
                if let Some(job) = self.manifest.running_job(&ask.custom_id) {
                    if !watched.iter().any(|w| w == job) {
                        watched.push(job.to_owned());
                    }
                    continue;
                }
                let (last, failures) = self.manifest.failures(&ask.custom_id);
                let this_run = failures.saturating_sub(ask.earlier_failures);
                match last {
                    Some(outcome) if !outcome.retryable() || this_run > self.api.resubmits => {
                        let error = failure(outcome, failures);
                        if let Some(ask) = slot.take() {
                            let _ = ask.reply.send(Err(error));
                        }
                    }
                    last => {
                        if last.is_some() {
                            self.progress.resubmitted += 1;
                        }
                        lines.push(Line {
                            custom_id: ask.custom_id.clone(),
                            body: ask.body.clone(),
                        });
                    }
                }
            }
            if lines.is_empty() && watched.is_empty() {
                return Ok(());
            }
            let (jobs, too_large) = self.api.split(lines);
            let slots: HashMap<String, usize> = pending
                .iter()
                .enumerate()
                .filter_map(|(slot, ask)| ask.as_ref().map(|ask| (ask.custom_id.clone(), slot)))
                .collect();
            for (line, size) in too_large {
                let message = format!(
                    "the request takes {size} bytes, more than one {} batch job may hold ({} bytes)",
                    self.api.api.name(),
                    self.api.max_bytes
                );
                let slot = slots.get(&line.custom_id).and_then(|&i| pending.get_mut(i));
                if let Some(ask) = slot.and_then(Option::take) {
                    let _ = ask.reply.send(Err(LlmError::Other { message }));
                }
            }
            for lines in jobs {
                let job = self.api.submit(&lines).await?;
                let docs = lines
                    .iter()
                    .map(|line| {
                        let slot = slots.get(&line.custom_id).and_then(|&i| pending.get(i));
                        let doc = slot.and_then(Option::as_ref).map(|ask| ask.doc);
                        doc.map_or("", |doc| self.doc_id(doc)).to_owned()
                    })
                    .collect();
                let ids = lines.iter().map(|line| line.custom_id.clone()).collect();
                self.manifest.job(&job, ids, docs)?;
                tracing::info!(
                    target: "llm_extract::batch",
                    api = self.api.api.name(),
                    job = %job,
                    requests = lines.len(),
                    "batch job created"
                );
                self.progress.submitted += lines.len();
                self.progress.jobs += 1;
                watched.push(job);
                on_jobs(self.progress);
            }
            self.until_one_ends(&watched, on_jobs).await?;
        }
    }

    /// Polls `jobs` until at least one has ended, recording the results and end of each that has.
    async fn until_one_ends(
        &mut self,
        jobs: &[String],
        on_jobs: &mut dyn FnMut(JobProgress),
    ) -> Result<(), ProviderBatchError> {
        loop {
            let mut ended = 0;
            let (mut done, mut total) = (0, 0);
            for job in jobs {
                match self.api.state(job).await? {
                    JobState::Running { done: d, total: t } => {
                        done += d;
                        total += t;
                    }
                    JobState::Ended { status } => {
                        self.record_results(job, &status).await?;
                        ended += 1;
                    }
                }
            }
            self.progress.running_done = done;
            self.progress.running_total = total;
            on_jobs(self.progress);
            if ended > 0 {
                return Ok(());
            }
            tokio::time::sleep(self.api.poll).await;
        }
    }

    /// Reads the results of the ended job `job` into the manifest, then its end.
    async fn record_results(&mut self, job: &str, status: &str) -> Result<(), ProviderBatchError> {
        let (ids, documents) = match self.manifest.job_record(job) {
            Some(record) => (record.requests.clone(), record.documents.clone()),
            None => (Vec::new(), Vec::new()),
        };
        let results = self.api.results(job, &ids).await?;
        for (index, (id, outcome)) in results.into_iter().enumerate() {
            let document = documents.get(index).map_or("", String::as_str).to_owned();
            self.manifest.result(job, &id, &document, outcome)?;
        }
        self.manifest.ended(job, status)?;
        tracing::info!(
            target: "llm_extract::batch",
            api = self.api.api.name(),
            job = %job,
            status = %status,
            "batch job ended"
        );
        self.progress.jobs_ended += 1;
        Ok(())
    }
}

/// The error a document's extraction sees for a request whose submissions are spent.
fn failure(outcome: &Outcome, failures: u32) -> LlmError {
    let message = format!(
        "{} (after {failures} submission(s) in batch jobs)",
        outcome.describe()
    );
    match outcome {
        Outcome::Errored {
            status: Some(status),
            ..
        } => LlmError::Http {
            status: *status,
            message,
            retry_after: None,
        },
        _ => LlmError::Other { message },
    }
}

/// A body as a job line carries it: the online call's, without its streaming switches (a job's
/// answers are never streamed).
fn for_batch(mut body: Value) -> Value {
    if let Some(object) = body.as_object_mut() {
        object.remove("stream");
        object.remove("stream_options");
    }
    body
}

/// The `custom_id` of the `nth` request with the body `text` from the document `doc_id`: the stable
/// hash of the document's id, then that of the body and its count, each in 16 hex digits.
fn request_id(doc_id: &str, text: &str, nth: u32) -> String {
    let content = stable_hash::hash(format!("{text}#{nth}").as_bytes());
    format!(
        "{:016x}-{content:016x}",
        stable_hash::hash(doc_id.as_bytes())
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_ids_stay_what_earlier_runs_wrote_in_their_manifests() {
        let body = r#"{"model":"m"}"#;
        assert_eq!(
            request_id("doc-1", body, 1),
            "42d4e5ab72fc8a9b-50665b5512a0c4d5"
        );
        assert_eq!(
            request_id("doc-1", body, 2),
            "42d4e5ab72fc8a9b-5066585512a0bfbc"
        );
    }

    #[test]
    fn streaming_switches_leave_the_body() {
        let body = serde_json::json!({"model": "m", "stream": false, "stream_options": {}});
        assert_eq!(for_batch(body), serde_json::json!({"model": "m"}));
    }
}

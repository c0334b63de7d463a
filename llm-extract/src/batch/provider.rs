//! A provider's batch API as a batch sees it: which one ([`BatchApi`]), the settings of a run on it
//! ([`ProviderBatch`]), the split of many requests into jobs within the provider's documented limits,
//! and the dispatch of submit, poll and read to the file of each wire format.

use super::job::{JobState, Line, Outcome};
use super::{anthropic, gemini, openai};
use crate::llm::{Anthropic, BatchWire, Gemini, LlmError, OpenAiCompatible};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// Which provider's batch API a [`ProviderBatch`] speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum BatchApi {
    /// OpenAI's Batch API (Files API upload, `/v1/batches`), or a server implementing it.
    OpenAi,
    /// Anthropic's Message Batches (`/v1/messages/batches`).
    Anthropic,
    /// Gemini's batch mode (`batchGenerateContent`, inline requests).
    Gemini,
}

impl BatchApi {
    /// The name recorded in the manifest (`openai`, `anthropic`, `gemini`).
    pub fn name(self) -> &'static str {
        match self {
            BatchApi::OpenAi => "openai",
            BatchApi::Anthropic => "anthropic",
            BatchApi::Gemini => "gemini",
        }
    }

    /// The provider's documented limits of one job: requests, and bytes of requests.
    pub fn limits(self) -> (usize, usize) {
        match self {
            BatchApi::OpenAi => (openai::MAX_REQUESTS, openai::MAX_BYTES),
            BatchApi::Anthropic => (anthropic::MAX_REQUESTS, anthropic::MAX_BYTES),
            BatchApi::Gemini => (gemini::MAX_REQUESTS, gemini::MAX_BYTES),
        }
    }

    /// The bytes `line` takes in a job.
    fn size(self, line: &Line) -> usize {
        let written = match self {
            BatchApi::OpenAi => openai::line(line),
            BatchApi::Anthropic => anthropic::line(line),
            BatchApi::Gemini => gemini::line(line),
        };
        written.to_string().len() + 1
    }
}

/// Where the answers to re-asks (a repair after an invalid answer, a continuation) are sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Repairs {
    /// In a follow-up job of the batch API, at the batch price (the default).
    #[default]
    Batch,
    /// Online, as the same backend's ordinary calls, at once.
    Online,
}

/// Why a run on a provider's batch API stopped before every document was done. The manifest keeps
/// what was submitted and what came back: running again resumes.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProviderBatchError {
    /// The manifest could not be read or written.
    #[error("the batch manifest {path}: {message}")]
    Manifest {
        /// The manifest's path.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// The batch API itself failed (creating, polling or reading a job), after the retry policy.
    #[error("the {api} batch API failed while {doing}: {source}")]
    Api {
        /// Which API.
        api: &'static str,
        /// What the run was doing.
        doing: &'static str,
        /// The backend's error (its key scrubbed).
        #[source]
        source: LlmError,
    },
}

/// A run of a [`Batch`](super::Batch) on a provider's batch API instead of one online call per
/// document: where, with what manifest, how often to poll, where re-asks go, how many times a request
/// the provider reports as errored or expired is submitted again.
///
/// Built from the same backend value the online extractor uses, so every request carries the same
/// body (schema field, media parts, settings) as the online call would.
///
/// ```no_run
/// use llm_extract::batch::{Batch, ProviderBatch, Record};
/// use llm_extract::extract::Extractor;
/// use llm_extract::llm::Anthropic;
/// use llm_extract::schema::DynamicSchema;
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let llm = Anthropic::new("claude-haiku-4-5")?;
/// let api = ProviderBatch::anthropic(&llm, "results.batch-manifest.jsonl");
/// let schema = DynamicSchema::from_signature("{city :string}")?;
/// let records = vec![Record::new("a", "A walk along the Saône.")];
/// let summary = Batch::new(Extractor::new(llm.clone()).max_attempts(3))
///     .for_each_on(
///         &api,
///         schema.schema_set(),
///         records,
///         |result, _progress| println!("{}: {}", result.id, result.is_ok()),
///         |jobs| eprintln!("{} of {} jobs ended", jobs.jobs_ended, jobs.jobs),
///     )
///     .await?;
/// println!("{} tokens at the batch price", summary.batch_usage.total());
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct ProviderBatch {
    pub(super) api: BatchApi,
    pub(super) wire: Arc<dyn BatchWire>,
    pub(super) manifest: PathBuf,
    pub(super) poll: Duration,
    pub(super) repairs: Repairs,
    pub(super) resubmits: u32,
    pub(super) max_requests: usize,
    pub(super) max_bytes: usize,
    pub(super) online_concurrency: usize,
}

impl ProviderBatch {
    fn new(api: BatchApi, wire: Arc<dyn BatchWire>, manifest: &Path) -> Self {
        let (max_requests, max_bytes) = api.limits();
        let resubmits = wire.retry_policy().retries();
        ProviderBatch {
            api,
            wire,
            manifest: manifest.to_owned(),
            poll: Duration::from_secs(30),
            repairs: Repairs::Batch,
            resubmits,
            max_requests,
            max_bytes,
            online_concurrency: 8,
        }
    }

    /// OpenAI's Batch API on the server of `llm` (any server implementing it), the state kept in the
    /// manifest file at `manifest`.
    pub fn openai(llm: &OpenAiCompatible, manifest: impl AsRef<Path>) -> Self {
        Self::new(BatchApi::OpenAi, llm.batch_wire(), manifest.as_ref())
    }

    /// Anthropic's Message Batches, on the API root of `llm`.
    pub fn anthropic(llm: &Anthropic, manifest: impl AsRef<Path>) -> Self {
        Self::new(BatchApi::Anthropic, llm.batch_wire(), manifest.as_ref())
    }

    /// Gemini's batch mode with inline requests, on the API root and model of `llm`.
    pub fn gemini(llm: &Gemini, manifest: impl AsRef<Path>) -> Self {
        Self::new(BatchApi::Gemini, llm.batch_wire(), manifest.as_ref())
    }

    /// Which API this speaks.
    pub fn api(&self) -> BatchApi {
        self.api
    }

    /// The manifest's path.
    pub fn manifest(&self) -> &Path {
        &self.manifest
    }

    /// How long to wait between two polls of running jobs (default 30 s).
    pub fn poll_interval(mut self, interval: Duration) -> Self {
        self.poll = interval;
        self
    }

    /// Where re-asks go (default [`Repairs::Batch`]).
    pub fn repairs(mut self, repairs: Repairs) -> Self {
        self.repairs = repairs;
        self
    }

    /// How many times a request the provider reports as errored (transiently), expired or canceled
    /// is submitted again (default: the retries of the backend's
    /// [`RetryPolicy`](crate::llm::RetryPolicy)).
    pub fn resubmits(mut self, times: u32) -> Self {
        self.resubmits = times;
        self
    }

    /// Lowers the limits of one job below the provider's documented ones (`requests` per job,
    /// `bytes` of requests per job); limits above them are not taken.
    pub fn job_limits(mut self, requests: usize, bytes: usize) -> Self {
        let (most_requests, most_bytes) = self.api.limits();
        self.max_requests = requests.clamp(1, most_requests);
        self.max_bytes = bytes.clamp(1, most_bytes);
        self
    }

    /// How many online re-asks are in flight at once with [`Repairs::Online`] (default 8).
    pub fn online_concurrency(mut self, requests: usize) -> Self {
        self.online_concurrency = requests.max(1);
        self
    }

    /// `lines` cut into jobs of at most the request and byte limits, in order; a line larger than
    /// the byte limit alone is returned apart with its size, as no job can take it.
    pub(super) fn split(&self, lines: Vec<Line>) -> (Vec<Vec<Line>>, Vec<(Line, usize)>) {
        let mut jobs = Vec::new();
        let mut too_large = Vec::new();
        let mut current: Vec<Line> = Vec::new();
        let mut bytes = 0;
        for line in lines {
            let size = self.api.size(&line);
            if size > self.max_bytes {
                too_large.push((line, size));
                continue;
            }
            if !current.is_empty()
                && (current.len() >= self.max_requests || bytes + size > self.max_bytes)
            {
                jobs.push(std::mem::take(&mut current));
                bytes = 0;
            }
            bytes += size;
            current.push(line);
        }
        if !current.is_empty() {
            jobs.push(current);
        }
        (jobs, too_large)
    }

    fn failed(&self, doing: &'static str) -> impl FnOnce(LlmError) -> ProviderBatchError {
        let api = self.api.name();
        move |source| ProviderBatchError::Api { api, doing, source }
    }

    /// Creates a job of `lines`: its id.
    pub(super) async fn submit(&self, lines: &[Line]) -> Result<String, ProviderBatchError> {
        let wire = &*self.wire;
        match self.api {
            BatchApi::OpenAi => openai::submit(wire, lines).await,
            BatchApi::Anthropic => anthropic::submit(wire, lines).await,
            BatchApi::Gemini => gemini::submit(wire, lines).await,
        }
        .map_err(self.failed("submitting a job"))
    }

    /// Where job `job` stands. A job the provider no longer knows (404: deleted, or past its
    /// retention) has ended with nothing, so that its requests are submitted again rather than
    /// polled for ever.
    pub(super) async fn state(&self, job: &str) -> Result<JobState, ProviderBatchError> {
        let wire = &*self.wire;
        let state = match self.api {
            BatchApi::OpenAi => openai::state(wire, job).await,
            BatchApi::Anthropic => anthropic::state(wire, job).await,
            BatchApi::Gemini => gemini::state(wire, job).await,
        };
        match state {
            Err(error) if gone(&error) => Ok(JobState::Ended {
                status: GONE.into(),
            }),
            state => state.map_err(self.failed("polling a job")),
        }
    }

    /// What became of each of `ids` (the job's requests in the order submitted).
    pub(super) async fn results(
        &self,
        job: &str,
        ids: &[String],
    ) -> Result<Vec<(String, Outcome)>, ProviderBatchError> {
        let wire = &*self.wire;
        let results = match self.api {
            BatchApi::OpenAi => openai::results(wire, job, ids).await,
            BatchApi::Anthropic => anthropic::results(wire, job, ids).await,
            BatchApi::Gemini => gemini::results(wire, job, ids).await,
        };
        match results {
            Err(error) if gone(&error) => Ok(ids
                .iter()
                .map(|id| (id.clone(), Outcome::Missing))
                .collect()),
            results => results.map_err(self.failed("reading a job's results")),
        }
    }
}

/// The status recorded for a job the provider no longer knows.
const GONE: &str = "not found";

/// Whether `error` says the job (or its results) does not exist.
fn gone(error: &LlmError) -> bool {
    matches!(
        error,
        LlmError::Http { status: 404, .. } | LlmError::ModelNotFound { .. }
    )
}

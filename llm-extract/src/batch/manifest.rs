//! The manifest of a run on a provider's batch API: an append-only JSON Lines file beside the output
//! recording each job created (its id, its requests' `custom_id`s and their documents), each result
//! read (answers kept whole, so a later run reads them instead of paying again), and each job's end.
//! A run reads it first: a request with an answer is answered from it, a request in a job not ended
//! is polled for, and only the others are submitted. One flushed line per event, so a run killed at
//! any moment loses at most the line it was writing (cut off, it is ignored and removed).

use super::job::Outcome;
use super::provider::ProviderBatchError;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::HashMap;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The pseudo-job of requests answered online.
pub(super) const ONLINE: &str = "online";

/// One line of the manifest.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
enum Event {
    /// A job was created.
    Job {
        api: String,
        job: String,
        requests: Vec<String>,
        documents: Vec<String>,
    },
    /// What became of one request (in `job`, or [`ONLINE`]).
    Result {
        job: String,
        request: String,
        document: String,
        outcome: Outcome,
    },
    /// A job ended, every result of it recorded.
    Ended { job: String, status: String },
}

/// A job as recorded.
#[derive(Debug, Default)]
pub(super) struct JobRecord {
    /// Its requests, in the order submitted.
    pub requests: Vec<String>,
    /// The document of each request.
    pub documents: Vec<String>,
    /// How it ended, once it has.
    pub ended: Option<String>,
}

/// A request as recorded.
#[derive(Debug, Default)]
struct RequestRecord {
    /// The jobs it was submitted in, in order.
    jobs: Vec<String>,
    /// What came back, by job (one per job).
    outcomes: Vec<(String, Outcome)>,
}

/// The manifest, read and open for appending.
#[derive(Debug)]
pub(super) struct Manifest {
    path: PathBuf,
    file: File,
    api: &'static str,
    jobs: HashMap<String, JobRecord>,
    requests: HashMap<String, RequestRecord>,
}

impl Manifest {
    /// Reads the manifest at `path` (none yet: an empty one), for a run on `api`; a manifest of
    /// another API is refused.
    pub fn open(path: &Path, api: &'static str) -> Result<Self, ProviderBatchError> {
        let fail = |message: String| ProviderBatchError::Manifest {
            path: path.to_owned(),
            message,
        };
        let text = match std::fs::read(path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(fail(e.to_string())),
        };
        // A last line without its newline was cut off by a killed run: not an event.
        let complete = text.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        let mut manifest = Manifest {
            path: path.to_owned(),
            file: std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .map_err(|e| fail(e.to_string()))?,
            api,
            jobs: HashMap::new(),
            requests: HashMap::new(),
        };
        if complete < text.len() {
            manifest
                .file
                .set_len(complete as u64)
                .map_err(|e| fail(e.to_string()))?;
        }
        for line in text
            .get(..complete)
            .unwrap_or_default()
            .split(|&b| b == b'\n')
        {
            if line.trim_ascii().is_empty() {
                continue;
            }
            match serde_json::from_slice::<Event>(line) {
                Ok(Event::Job { api: other, .. }) if other != api => {
                    return Err(fail(format!(
                        "it records jobs of the {other} batch API, not {api}; give another output \
                         file or remove the manifest"
                    )));
                }
                Ok(event) => manifest.apply(event),
                Err(e) => {
                    tracing::warn!(target: "llm_extract::batch", "a manifest line is ignored: {e}")
                }
            }
        }
        Ok(manifest)
    }

    fn apply(&mut self, event: Event) {
        match event {
            Event::Job {
                job,
                requests,
                documents,
                ..
            } => {
                for request in &requests {
                    self.requests
                        .entry(request.clone())
                        .or_default()
                        .jobs
                        .push(job.clone());
                }
                self.jobs.insert(
                    job,
                    JobRecord {
                        requests,
                        documents,
                        ended: None,
                    },
                );
            }
            Event::Result {
                job,
                request,
                outcome,
                ..
            } => {
                let record = self.requests.entry(request).or_default();
                if !record.outcomes.iter().any(|(seen, _)| *seen == job) || job == ONLINE {
                    record.outcomes.push((job, outcome));
                }
            }
            Event::Ended { job, status } => {
                self.jobs.entry(job).or_default().ended = Some(status);
            }
        }
    }

    fn append(&mut self, event: Event) -> Result<(), ProviderBatchError> {
        let mut line = serde_json::to_string(&event).map_err(|e| ProviderBatchError::Manifest {
            path: self.path.clone(),
            message: e.to_string(),
        })?;
        line.push('\n');
        self.file
            .write_all(line.as_bytes())
            .and_then(|()| self.file.flush())
            .map_err(|e| ProviderBatchError::Manifest {
                path: self.path.clone(),
                message: e.to_string(),
            })?;
        self.apply(event);
        Ok(())
    }

    /// Records a job created with `requests` (and their `documents`).
    pub fn job(
        &mut self,
        job: &str,
        requests: Vec<String>,
        documents: Vec<String>,
    ) -> Result<(), ProviderBatchError> {
        self.append(Event::Job {
            api: self.api.to_owned(),
            job: job.to_owned(),
            requests,
            documents,
        })
    }

    /// Records what became of `request` (of `document`) in `job`.
    pub fn result(
        &mut self,
        job: &str,
        request: &str,
        document: &str,
        outcome: Outcome,
    ) -> Result<(), ProviderBatchError> {
        self.append(Event::Result {
            job: job.to_owned(),
            request: request.to_owned(),
            document: document.to_owned(),
            outcome,
        })
    }

    /// Records that `job` ended (after its results).
    pub fn ended(&mut self, job: &str, status: &str) -> Result<(), ProviderBatchError> {
        self.append(Event::Ended {
            job: job.to_owned(),
            status: status.to_owned(),
        })
    }

    /// The answer recorded for `request`, if one came back, with the job that gave it ([`ONLINE`]
    /// for an online call).
    pub fn answer(&self, request: &str) -> Option<(&str, &Value)> {
        self.requests.get(request).and_then(|record| {
            record
                .outcomes
                .iter()
                .find_map(|(job, outcome)| match outcome {
                    Outcome::Answer { body } => Some((job.as_str(), body)),
                    _ => None,
                })
        })
    }

    /// The last failure recorded for `request`, and how many there are.
    pub fn failures(&self, request: &str) -> (Option<&Outcome>, u32) {
        let Some(record) = self.requests.get(request) else {
            return (None, 0);
        };
        let mut failed = record
            .outcomes
            .iter()
            .filter(|(_, outcome)| !matches!(outcome, Outcome::Answer { .. }));
        let count = u32::try_from(failed.clone().count()).unwrap_or(u32::MAX);
        (failed.next_back().map(|(_, outcome)| outcome), count)
    }

    /// A job `request` is in that has not ended.
    pub fn running_job(&self, request: &str) -> Option<&str> {
        let record = self.requests.get(request)?;
        record
            .jobs
            .iter()
            .find(|job| self.jobs.get(*job).is_some_and(|j| j.ended.is_none()))
            .map(String::as_str)
    }

    /// Job `job`, as recorded.
    pub fn job_record(&self, job: &str) -> Option<&JobRecord> {
        self.jobs.get(job)
    }

    /// How many jobs are recorded, and how many of them ended.
    pub fn job_counts(&self) -> (usize, usize) {
        let ended = self.jobs.values().filter(|j| j.ended.is_some()).count();
        (self.jobs.len(), ended)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_manifest_read_again_knows_jobs_answers_and_failures() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.jsonl");
        {
            let mut m = Manifest::open(&path, "openai").unwrap();
            m.job(
                "j1",
                vec!["a".into(), "b".into()],
                vec!["A".into(), "B".into()],
            )
            .unwrap();
            m.result(
                "j1",
                "a",
                "A",
                Outcome::Answer {
                    body: serde_json::json!({"x": 1}),
                },
            )
            .unwrap();
            m.result("j1", "b", "B", Outcome::Expired).unwrap();
            m.ended("j1", "completed").unwrap();
            m.job("j2", vec!["b".into()], vec!["B".into()]).unwrap();
        }
        // A cut line at the end, as a killed run leaves it.
        let mut text = std::fs::read(&path).unwrap();
        text.extend_from_slice(b"{\"event\": \"ended\", \"jo");
        std::fs::write(&path, text).unwrap();
        let m = Manifest::open(&path, "openai").unwrap();
        assert_eq!(m.answer("a"), Some(("j1", &serde_json::json!({"x": 1}))));
        assert_eq!(m.failures("b"), (Some(&Outcome::Expired), 1));
        assert_eq!(m.running_job("b"), Some("j2"));
        assert_eq!(m.running_job("a"), None);
        assert_eq!(m.job_counts(), (2, 1));
        assert!(std::fs::read(&path).unwrap().ends_with(b"\n"));
        let other = Manifest::open(&path, "anthropic").unwrap_err();
        assert!(other.to_string().contains("openai"), "{other}");
    }
}

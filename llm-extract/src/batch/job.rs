//! What every provider's batch jobs have in common: a request line as submitted (its `custom_id` and
//! the body of the online call), a job's state while it runs, and what became of one request. The
//! provider files speak their wire formats in these terms; the manifest records them; the rounds act
//! on them.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One request of a job: the id the provider hands back with its result, and the body the online
/// call would send.
#[derive(Debug, Clone)]
pub(crate) struct Line {
    /// The request's `custom_id` (the metadata `key` on Gemini).
    pub custom_id: String,
    /// The body of the online request.
    pub body: Value,
}

/// Where a job stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum JobState {
    /// Not finished: `done` of `total` requests are (when the provider says).
    Running { done: u64, total: u64 },
    /// Finished, in the provider's own word (`completed`, `ended`, `BATCH_STATE_SUCCEEDED`, `expired`,
    /// ...): its results can be read.
    Ended { status: String },
}

/// What became of one request of a job.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub(crate) enum Outcome {
    /// The provider's answer: the body the online call would have read.
    Answer { body: Value },
    /// The provider reports the request failed.
    Errored {
        /// The HTTP status of the failure, when the provider gives one.
        status: Option<u16>,
        /// The provider's message.
        message: String,
        /// Whether sending the same request again may succeed (a server error, a rate limit).
        transient: bool,
    },
    /// The job ended (its time window ran out) before the request was answered.
    Expired,
    /// The job was canceled before the request was answered.
    Canceled,
    /// The job ended without a result for the request.
    Missing,
}

impl Outcome {
    /// Whether the same request is worth submitting again.
    pub fn retryable(&self) -> bool {
        match self {
            Outcome::Answer { .. } => false,
            Outcome::Errored { transient, .. } => *transient,
            Outcome::Expired | Outcome::Canceled | Outcome::Missing => true,
        }
    }

    /// The failure as a person reads it (empty for an answer).
    pub fn describe(&self) -> String {
        match self {
            Outcome::Answer { .. } => String::new(),
            Outcome::Errored {
                status: Some(status),
                message,
                ..
            } => format!("the provider reports the request failed with status {status}: {message}"),
            Outcome::Errored { message, .. } => {
                format!("the provider reports the request failed: {message}")
            }
            Outcome::Expired => "the batch job expired before the request was answered".into(),
            Outcome::Canceled => {
                "the batch job was canceled before the request was answered".into()
            }
            Outcome::Missing => "the batch job ended without a result for the request".into(),
        }
    }
}

/// Whether an HTTP status means the same request may succeed later (the rule of the online call:
/// 408, 409, 429 and 5xx).
pub(crate) fn transient_status(status: u16) -> bool {
    matches!(status, 408 | 409 | 429) || (500..600).contains(&status)
}

/// The lines of a JSON Lines body, each parsed; a line that is not JSON is skipped (with its reason
/// kept by the caller through `bad`).
pub(crate) fn json_lines(bytes: &[u8], mut bad: impl FnMut(String)) -> Vec<Value> {
    bytes
        .split(|&b| b == b'\n')
        .filter(|line| !line.trim_ascii().is_empty())
        .filter_map(|line| match serde_json::from_slice(line) {
            Ok(value) => Some(value),
            Err(e) => {
                bad(format!(
                    "a result line is not JSON ({e}): {}",
                    String::from_utf8_lossy(line.get(..200).unwrap_or(line))
                ));
                None
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_failures_that_may_pass_are_retried() {
        assert!(Outcome::Expired.retryable());
        assert!(Outcome::Missing.retryable());
        let refused = Outcome::Errored {
            status: Some(400),
            message: "bad".into(),
            transient: false,
        };
        assert!(!refused.retryable());
        assert!(refused.describe().contains("400"));
        assert!(!Outcome::Answer { body: Value::Null }.retryable());
        assert!(transient_status(503) && transient_status(429) && !transient_status(400));
    }

    #[test]
    fn result_lines_are_read_and_broken_ones_reported() {
        let mut bad = Vec::new();
        let lines = json_lines(b"{\"a\":1}\n\nnot json\n{\"b\":2}", |m| bad.push(m));
        assert_eq!(lines.len(), 2);
        assert_eq!(bad.len(), 1);
    }
}

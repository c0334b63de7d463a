//! Anthropic's Message Batches: the requests posted together to `/v1/messages/batches` (each
//! `{custom_id, params}`, the params being the online Messages request; a structured-output beta
//! header goes on the batch request itself, as the backend sends it), `processing_status` polled
//! until `ended`, and the results read back as JSON Lines (`succeeded`, `errored`, `canceled`,
//! `expired`), matched by `custom_id` as they come in no particular order.

use super::job::{json_lines, transient_status, JobState, Line, Outcome};
use super::openai::{parse, text};
use crate::llm::{join_url, BatchWire, LlmError};
use serde_json::{json, Value};
use std::collections::HashMap;

/// The documented limits of one batch: 100,000 requests, 256 MB.
pub(crate) const MAX_REQUESTS: usize = 100_000;
/// See [`MAX_REQUESTS`].
pub(crate) const MAX_BYTES: usize = 256 * 1000 * 1000;

/// One request of the batch.
pub(crate) fn line(line: &Line) -> Value {
    json!({"custom_id": line.custom_id, "params": line.body})
}

/// Where batches are: beside the Messages endpoint the online call uses.
fn batches(wire: &dyn BatchWire) -> String {
    join_url(&wire.chat_url(), "/batches")
}

/// Creates the batch: its id.
pub(crate) async fn submit(wire: &dyn BatchWire, lines: &[Line]) -> Result<String, LlmError> {
    let requests: Vec<Value> = lines.iter().map(line).collect();
    let body = json!({ "requests": requests });
    let created = parse(&wire.send(&batches(wire), Some(&body)).await?)?;
    text(&created, "id", "the created message batch")
}

/// The batch's state.
pub(crate) async fn state(wire: &dyn BatchWire, job: &str) -> Result<JobState, LlmError> {
    let url = join_url(&batches(wire), &format!("/{job}"));
    let batch = parse(&wire.send(&url, None).await?)?;
    let status = text(&batch, "processing_status", "the message batch")?;
    if status == "ended" {
        return Ok(JobState::Ended { status });
    }
    let counts = &batch["request_counts"];
    let count = |name: &str| counts[name].as_u64().unwrap_or(0);
    let done = count("succeeded") + count("errored") + count("canceled") + count("expired");
    Ok(JobState::Running {
        done,
        total: done + count("processing"),
    })
}

/// What became of each request of the ended batch `job`. The results are read from the batch's
/// documented `results` path under the same API root (never from a URL the answer names, which could
/// send the key elsewhere).
pub(crate) async fn results(
    wire: &dyn BatchWire,
    job: &str,
    ids: &[String],
) -> Result<Vec<(String, Outcome)>, LlmError> {
    let url = join_url(&batches(wire), &format!("/{job}/results"));
    let bytes = wire.send(&url, None).await?;
    let mut found: HashMap<String, Outcome> = HashMap::new();
    for line in json_lines(
        &bytes,
        |bad| tracing::warn!(target: "llm_extract::batch", "{bad}"),
    ) {
        if let Some(id) = line["custom_id"].as_str() {
            found.insert(id.to_owned(), outcome(&line["result"]));
        }
    }
    Ok(ids
        .iter()
        .map(|id| (id.clone(), found.remove(id).unwrap_or(Outcome::Missing)))
        .collect())
}

/// One result.
fn outcome(result: &Value) -> Outcome {
    match result["type"].as_str() {
        Some("succeeded") => Outcome::Answer {
            body: result["message"].clone(),
        },
        Some("canceled") => Outcome::Canceled,
        Some("expired") => Outcome::Expired,
        _ => {
            // `{"type": "errored", "error": {"type": "error", "error": {"type", "message"}}}`.
            let error = &result["error"];
            let inner = if error["error"].is_object() {
                &error["error"]
            } else {
                error
            };
            let kind = inner["type"].as_str().unwrap_or("unknown");
            let status = match kind {
                "invalid_request_error" => Some(400),
                "authentication_error" => Some(401),
                "permission_error" => Some(403),
                "not_found_error" => Some(404),
                "request_too_large" => Some(413),
                "rate_limit_error" => Some(429),
                "api_error" => Some(500),
                "overloaded_error" => Some(529),
                _ => None,
            };
            Outcome::Errored {
                status,
                message: format!("{kind}: {}", inner["message"].as_str().unwrap_or_default()),
                transient: status.is_none_or(transient_status),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_result_type_is_read() {
        let ok = json!({"type": "succeeded", "message": {"id": "msg"}});
        assert_eq!(
            outcome(&ok),
            Outcome::Answer {
                body: json!({"id": "msg"})
            }
        );
        assert_eq!(outcome(&json!({"type": "expired"})), Outcome::Expired);
        assert_eq!(outcome(&json!({"type": "canceled"})), Outcome::Canceled);
        let refused = json!({"type": "errored", "error": {"type": "error", "error": {"type": "invalid_request_error", "message": "bad"}}});
        assert!(matches!(
            outcome(&refused),
            Outcome::Errored {
                status: Some(400),
                transient: false,
                ..
            }
        ));
        let busy = json!({"type": "errored", "error": {"type": "error", "error": {"type": "overloaded_error", "message": "busy"}}});
        assert!(outcome(&busy).retryable());
    }
}

//! Gemini's batch mode with inline requests: `models/{model}:batchGenerateContent` with
//! `{"batch": {"display_name", "input_config": {"requests": {"requests": [{"request", "metadata":
//! {"key"}}]}}}}`, the long-running operation it returns (`batches/...`) polled until `done`, and the
//! inline responses joined to the requests by their order (by `metadata.key` where a response
//! carries it).

use super::job::{transient_status, JobState, Line, Outcome};
use super::openai::{parse, text};
use crate::llm::{join_url, BatchWire, LlmError};
use serde_json::{json, Value};

/// Inline requests of one batch hold at most about 20 MB; no count is documented beyond that.
pub(crate) const MAX_BYTES: usize = 20 * 1000 * 1000;
/// See [`MAX_BYTES`]: the count is bounded by the bytes alone.
pub(crate) const MAX_REQUESTS: usize = usize::MAX;

/// One inline request.
pub(crate) fn line(line: &Line) -> Value {
    json!({"request": line.body, "metadata": {"key": line.custom_id}})
}

/// Creates the batch: the name of its operation (`batches/...`).
pub(crate) async fn submit(wire: &dyn BatchWire, lines: &[Line]) -> Result<String, LlmError> {
    let requests: Vec<Value> = lines.iter().map(line).collect();
    let body = json!({"batch": {
        "display_name": "llm-extract",
        "input_config": {"requests": {"requests": requests}},
    }});
    let url = join_url(
        wire.base(),
        &format!("/v1beta/models/{}:batchGenerateContent", wire.model()),
    );
    let operation = parse(&wire.send(&url, Some(&body)).await?)?;
    let name = text(&operation, "name", "the batch operation")?;
    if !name.starts_with("batches/") || name.contains("..") {
        return Err(LlmError::InvalidResponse {
            message: "the batch operation's name is not batches/...".into(),
            body: operation.to_string(),
        });
    }
    Ok(name)
}

async fn operation(wire: &dyn BatchWire, job: &str) -> Result<Value, LlmError> {
    parse(
        &wire
            .send(&join_url(wire.base(), &format!("/v1beta/{job}")), None)
            .await?,
    )
}

/// The batch's state, from its operation.
pub(crate) async fn state(wire: &dyn BatchWire, job: &str) -> Result<JobState, LlmError> {
    let operation = operation(wire, job).await?;
    let metadata = &operation["metadata"];
    let status = metadata["state"]
        .as_str()
        .unwrap_or("BATCH_STATE_UNSPECIFIED");
    let finished = matches!(
        status,
        "BATCH_STATE_SUCCEEDED"
            | "BATCH_STATE_FAILED"
            | "BATCH_STATE_CANCELLED"
            | "BATCH_STATE_EXPIRED"
    );
    if operation["done"].as_bool().unwrap_or(false) || finished {
        return Ok(JobState::Ended {
            status: status.to_owned(),
        });
    }
    let stats = &metadata["batchStats"];
    let count = |name: &str| {
        stats[name]
            .as_str()
            .and_then(|n| n.parse().ok())
            .or_else(|| stats[name].as_u64())
            .unwrap_or(0)
    };
    Ok(JobState::Running {
        done: count("successfulRequestCount") + count("failedRequestCount"),
        total: count("requestCount"),
    })
}

/// What became of each request of the ended batch `job`, joined by order (or by key).
pub(crate) async fn results(
    wire: &dyn BatchWire,
    job: &str,
    ids: &[String],
) -> Result<Vec<(String, Outcome)>, LlmError> {
    let operation = operation(wire, job).await?;
    let status = operation["metadata"]["state"].as_str().unwrap_or_default();
    let response = &operation["response"];
    let inlined = [
        &response["inlinedResponses"]["inlinedResponses"],
        &response["inlinedResponses"],
        &response["output"]["inlinedResponses"]["inlinedResponses"],
        &operation["metadata"]["output"]["inlinedResponses"]["inlinedResponses"],
    ]
    .into_iter()
    .find_map(Value::as_array);
    let whole = match (status, &operation["error"]) {
        ("BATCH_STATE_EXPIRED", _) => Some(Outcome::Expired),
        ("BATCH_STATE_CANCELLED", _) => Some(Outcome::Canceled),
        (_, error) if error.is_object() => Some(Outcome::Errored {
            status: None,
            message: format!("the batch failed: {error}"),
            transient: false,
        }),
        _ => None,
    };
    let empty = Vec::new();
    let inlined = inlined.unwrap_or(&empty);
    let keyed = inlined
        .iter()
        .all(|item| item["metadata"]["key"].is_string());
    let by_key: std::collections::HashMap<&str, &Value> = if keyed {
        inlined
            .iter()
            .filter_map(|item| item["metadata"]["key"].as_str().map(|k| (k, item)))
            .collect()
    } else {
        Default::default()
    };
    Ok(ids
        .iter()
        .enumerate()
        .map(|(index, id)| {
            let item = if keyed {
                by_key.get(id.as_str()).copied()
            } else {
                inlined.get(index)
            };
            let outcome = match item {
                Some(item) => outcome(item),
                None => whole.clone().unwrap_or(Outcome::Missing),
            };
            (id.clone(), outcome)
        })
        .collect())
}

/// One inline response: `{"response": ...}` or `{"error": {code, message}}` (a google.rpc.Status).
fn outcome(item: &Value) -> Outcome {
    if item["response"].is_object() {
        return Outcome::Answer {
            body: item["response"].clone(),
        };
    }
    let error = &item["error"];
    // google.rpc codes: 3 INVALID_ARGUMENT, 7 PERMISSION_DENIED, 5 NOT_FOUND are refusals; 4
    // DEADLINE_EXCEEDED, 8 RESOURCE_EXHAUSTED, 13 INTERNAL, 14 UNAVAILABLE may pass another time.
    let status = match error["code"].as_u64() {
        Some(3) => Some(400),
        Some(5) => Some(404),
        Some(7) => Some(403),
        Some(4) => Some(504),
        Some(8) => Some(429),
        Some(13) => Some(500),
        Some(14) => Some(503),
        Some(code) => u16::try_from(code).ok().filter(|c| *c >= 100),
        None => None,
    };
    Outcome::Errored {
        status,
        message: error["message"]
            .as_str()
            .map_or_else(|| item.to_string(), str::to_owned),
        transient: status.is_none_or(transient_status),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inline_responses_and_errors_are_read() {
        let ok = json!({"response": {"candidates": []}});
        assert_eq!(
            outcome(&ok),
            Outcome::Answer {
                body: json!({"candidates": []})
            }
        );
        let refused = json!({"error": {"code": 3, "message": "bad"}});
        assert!(!outcome(&refused).retryable());
        let busy = json!({"error": {"code": 14, "message": "later"}});
        assert!(outcome(&busy).retryable());
    }
}

//! OpenAI's Batch API, which other servers implement too: the requests as a JSON Lines file uploaded
//! through the Files API (`purpose=batch`), a job on `/v1/chat/completions` created at `/batches`,
//! its `status` polled (`validating`, `in_progress`, `finalizing`, then `completed`, `failed`,
//! `expired` or `cancelled`), and its output and error files read back, lines matched by `custom_id`
//! as they come in no particular order.

use super::job::{json_lines, transient_status, JobState, Line, Outcome};
use crate::llm::{join_url, BatchWire, LlmError};
use serde_json::{json, Value};
use std::collections::HashMap;

/// The documented limits of one job: 50,000 requests, an input file of 200 MB.
pub(crate) const MAX_REQUESTS: usize = 50_000;
/// See [`MAX_REQUESTS`].
pub(crate) const MAX_BYTES: usize = 200 * 1000 * 1000;

/// The endpoint every line and the job name.
const ENDPOINT: &str = "/v1/chat/completions";

/// One line of the input file.
pub(crate) fn line(line: &Line) -> Value {
    json!({"custom_id": line.custom_id, "method": "POST", "url": ENDPOINT, "body": line.body})
}

/// Uploads the input file and creates the job: its id.
pub(crate) async fn submit(wire: &dyn BatchWire, lines: &[Line]) -> Result<String, LlmError> {
    let mut file = Vec::new();
    for request in lines {
        file.extend_from_slice(line(request).to_string().as_bytes());
        file.push(b'\n');
    }
    let (content_type, form) = multipart(&file);
    let url = join_url(wire.base(), "/files");
    let uploaded = parse(&wire.upload(&url, &content_type, &form).await?)?;
    let file_id = text(&uploaded, "id", "the uploaded file")?;
    let body = json!({
        "input_file_id": file_id,
        "endpoint": ENDPOINT,
        "completion_window": "24h",
        "metadata": {"created_by": "llm-extract"},
    });
    let created = parse(
        &wire
            .send(&join_url(wire.base(), "/batches"), Some(&body))
            .await?,
    )?;
    text(&created, "id", "the created batch")
}

/// The job's state.
pub(crate) async fn state(wire: &dyn BatchWire, job: &str) -> Result<JobState, LlmError> {
    let batch = fetch(wire, job).await?;
    let status = text(&batch, "status", "the batch")?;
    let counts = &batch["request_counts"];
    let count = |name: &str| counts[name].as_u64().unwrap_or(0);
    Ok(match status.as_str() {
        "completed" | "failed" | "expired" | "cancelled" => JobState::Ended { status },
        _ => JobState::Running {
            done: count("completed") + count("failed"),
            total: count("total"),
        },
    })
}

/// What became of each request of the ended job `job` (lines in no particular order, matched by
/// `custom_id`); a request with no line is [`Outcome::Missing`], or, for a job that failed as a
/// whole (its input refused), the job's errors.
pub(crate) async fn results(
    wire: &dyn BatchWire,
    job: &str,
    ids: &[String],
) -> Result<Vec<(String, Outcome)>, LlmError> {
    let batch = fetch(wire, job).await?;
    let mut found: HashMap<String, Outcome> = HashMap::new();
    for field in ["output_file_id", "error_file_id"] {
        let Some(file) = batch[field].as_str().filter(|id| !id.is_empty()) else {
            continue;
        };
        let url = join_url(wire.base(), &format!("/files/{file}/content"));
        let bytes = wire.send(&url, None).await?;
        for line in json_lines(
            &bytes,
            |bad| tracing::warn!(target: "llm_extract::batch", "{bad}"),
        ) {
            if let Some(id) = line["custom_id"].as_str() {
                found.insert(id.to_owned(), outcome(&line));
            }
        }
    }
    let whole = (batch["status"] == "failed").then(|| Outcome::Errored {
        status: None,
        message: format!("the batch failed: {}", batch["errors"]),
        transient: false,
    });
    Ok(ids
        .iter()
        .map(|id| {
            let outcome = found
                .remove(id)
                .or_else(|| whole.clone())
                .unwrap_or(Outcome::Missing);
            (id.clone(), outcome)
        })
        .collect())
}

/// One line of an output or error file.
fn outcome(line: &Value) -> Outcome {
    let response = &line["response"];
    let status = response["status_code"]
        .as_u64()
        .and_then(|s| u16::try_from(s).ok());
    if let Some(error) = line.get("error").filter(|e| !e.is_null()) {
        let code = error["code"].as_str().unwrap_or_default();
        if code == "batch_expired" {
            return Outcome::Expired;
        }
        if code == "batch_cancelled" {
            return Outcome::Canceled;
        }
        return Outcome::Errored {
            status,
            message: error["message"].as_str().unwrap_or(code).to_owned(),
            transient: status.is_none_or(transient_status),
        };
    }
    match status {
        Some(200) => Outcome::Answer {
            body: response["body"].clone(),
        },
        status => Outcome::Errored {
            status,
            message: response["body"]["error"]["message"]
                .as_str()
                .map_or_else(|| response["body"].to_string(), str::to_owned),
            transient: status.is_none_or(transient_status),
        },
    }
}

async fn fetch(wire: &dyn BatchWire, job: &str) -> Result<Value, LlmError> {
    parse(
        &wire
            .send(&join_url(wire.base(), &format!("/batches/{job}")), None)
            .await?,
    )
}

/// A `multipart/form-data` body with the field `purpose=batch` and `file` as `batch.jsonl`, and its
/// content type; the boundary is one the file does not hold.
fn multipart(file: &[u8]) -> (String, Vec<u8>) {
    let mut boundary = String::from("llm-extract-batch-boundary");
    while memchr::memmem::find(file, boundary.as_bytes()).is_some() {
        boundary.push('x');
    }
    let mut body = Vec::with_capacity(file.len() + 512);
    body.extend_from_slice(
        format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"purpose\"\r\n\r\nbatch\r\n\
             --{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"batch.jsonl\"\r\n\
             Content-Type: application/jsonl\r\n\r\n"
        )
        .as_bytes(),
    );
    body.extend_from_slice(file);
    body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
    (format!("multipart/form-data; boundary={boundary}"), body)
}

/// A response body as JSON.
pub(crate) fn parse(bytes: &[u8]) -> Result<Value, LlmError> {
    serde_json::from_slice(bytes).map_err(|e| LlmError::InvalidResponse {
        message: format!("the batch API answered something that is not JSON ({e})"),
        body: String::from_utf8_lossy(bytes.get(..300).unwrap_or(bytes)).into_owned(),
    })
}

/// The string field `name` of `value` (`what` names the object in the error).
pub(crate) fn text(value: &Value, name: &str, what: &str) -> Result<String, LlmError> {
    value[name]
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| LlmError::InvalidResponse {
            message: format!("{what} has no \"{name}\""),
            body: value.to_string(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_and_error_lines_are_read() {
        let ok = json!({"custom_id": "a", "response": {"status_code": 200, "body": {"id": "x"}}, "error": null});
        assert_eq!(
            outcome(&ok),
            Outcome::Answer {
                body: json!({"id": "x"})
            }
        );
        let expired = json!({"custom_id": "b", "response": null, "error": {"code": "batch_expired", "message": "late"}});
        assert_eq!(outcome(&expired), Outcome::Expired);
        let refused = json!({"custom_id": "c", "response": {"status_code": 400, "body": {"error": {"message": "no"}}}});
        assert!(matches!(
            outcome(&refused),
            Outcome::Errored {
                status: Some(400),
                transient: false,
                ..
            }
        ));
        let busy = json!({"custom_id": "d", "response": {"status_code": 500, "body": {}}});
        assert!(outcome(&busy).retryable());
    }

    #[test]
    fn the_boundary_is_not_in_the_file() {
        let file = b"{\"a\": \"--llm-extract-batch-boundary\"}\n";
        let (kind, body) = multipart(file);
        let boundary = kind.rsplit('=').next().unwrap();
        assert!(memchr::memmem::find(file, boundary.as_bytes()).is_none());
        assert!(body.ends_with(format!("--{boundary}--\r\n").as_bytes()));
    }
}

//! Per-field confidence against local servers: the OpenAI-compatible backend asks for `logprobs` and
//! reads `choices[0].logprobs.content` from streamed chunks and from a whole completion, Gemini asks for
//! `responseLogprobs` and reads `logprobsResult.chosenCandidates`; the tokens land on the fields that
//! they wrote, a threshold turns doubtful fields into soft issues, list items get their own pointers,
//! and a backend without log-probabilities (Ollama) says so.

use crate::support;

use llm_extract::check::Severity;
use llm_extract::extract::LoopGuard;
use llm_extract::extract::{ConfidenceRule, Extractor};
use llm_extract::llm::{ChatRequest, Gemini, Llm, OpenAiCompatible, RetryPolicy};
use llm_extract::schema::SchemaSet;
use serde_json::{json, Value};
use std::time::Duration;
use support::providers::ADA_TOKENS;
use support::{ollama, Answer, Reply, Step, TestServer};

fn person() -> SchemaSet {
    SchemaSet::new(
        "Person",
        json!({
            "type": "object",
            "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
            "required": ["name", "age"],
            "additionalProperties": false
        }),
    )
}

fn openai_token(token: &str, logprob: f64) -> Value {
    json!({"token": token, "logprob": logprob, "bytes": token.as_bytes(), "top_logprobs": []})
}

/// The tokens streamed as OpenAI-compatible SSE chunks, one token each, then the finish and `[DONE]`.
fn openai_stream(tokens: &[(&str, f64)]) -> Reply {
    let mut steps = Vec::new();
    for (token, logprob) in tokens {
        let chunk = json!({"id": "c", "model": "m", "choices": [{"index": 0,
            "delta": {"content": token}, "finish_reason": null,
            "logprobs": {"content": [openai_token(token, *logprob)]}}]});
        steps.push(Step::Send(format!("data: {chunk}\n\n").into_bytes()));
    }
    let finish = json!({"id": "c", "model": "m", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
                        "usage": {"prompt_tokens": 5, "completion_tokens": tokens.len()}});
    steps.push(Step::Send(format!("data: {finish}\n\n").into_bytes()));
    steps.push(Step::Send(b"data: [DONE]\n\n".to_vec()));
    Reply::Chunked {
        status: 200,
        content_type: support::wire::SSE.into(),
        steps,
    }
}

fn openai(server: &TestServer) -> OpenAiCompatible {
    OpenAiCompatible::builder(server.url(), "m")
        .request_timeout(Duration::from_secs(3))
        .retry(RetryPolicy::new().max_retries(0))
        .build()
        .unwrap()
}

fn close(a: f32, b: f64) -> bool {
    (f64::from(a) - b).abs() < 1e-5
}

#[tokio::test]
async fn openai_streamed_logprobs_score_each_field_and_a_threshold_marks_the_doubtful() {
    let server = TestServer::start(|_| openai_stream(ADA_TOKENS));
    let llm = openai(&server);
    let out = Extractor::new(&llm)
        .confidence(ConfidenceRule::default())
        .min_confidence(0.5)
        .with_schema(&person())
        .extract("Ada, 36")
        .await
        .unwrap();
    assert_eq!(out.value, json!({"name": "Ada", "age": 36}));
    assert_eq!(server.requests()[0].json["logprobs"], true);
    let confidence = &out.report.confidence;
    assert!(
        close(confidence["/name"], (-0.2_f64).exp()),
        "{confidence:?}"
    );
    assert!(
        close(confidence["/age"], (-2.0_f64).exp()),
        "{confidence:?}"
    );
    assert!(!out.report.no_logprobs);
    // 36 is under the threshold (0.14 < 0.5): a soft issue at its path; the name is not.
    assert_eq!(out.report.issues.len(), 1, "{:?}", out.report.issues);
    assert_eq!(out.report.issues[0].path, "/age");
    assert_eq!(out.report.issues[0].severity, Severity::Soft);
}

#[tokio::test]
async fn without_confidence_nothing_is_asked_and_nothing_reported() {
    let server = TestServer::start(|_| openai_stream(ADA_TOKENS));
    let llm = openai(&server);
    let out = Extractor::new(&llm)
        .with_schema(&person())
        .extract("Ada, 36")
        .await
        .unwrap();
    assert_eq!(server.requests()[0].json.get("logprobs"), None);
    assert!(out.report.confidence.is_empty());
    assert!(!out.report.no_logprobs);
}

#[tokio::test]
async fn openai_whole_completion_logprobs_are_read_with_their_bytes() {
    // "é" split over two tokens whose text alone is not UTF-8: their bytes rebuild it.
    let server = TestServer::start(|_| {
        Reply::json(
            200,
            json!({"id": "c", "model": "m", "choices": [{"index": 0,
                "message": {"role": "assistant", "content": "{\"name\": \"é\", \"age\": 1}"},
                "finish_reason": "stop",
                "logprobs": {"content": [
                    {"token": "{\"name\": \"", "logprob": 0.0, "bytes": [123, 34, 110, 97, 109, 101, 34, 58, 32, 34]},
                    {"token": "\\xc3", "logprob": -1.0, "bytes": [195]},
                    {"token": "\\xa9", "logprob": -3.0, "bytes": [169]},
                    {"token": "\", \"age\": 1}", "logprob": -0.5, "bytes": "\", \"age\": 1}".as_bytes()}
                ]}}],
                "usage": {"prompt_tokens": 3, "completion_tokens": 4}}),
        )
    });
    let llm = openai(&server);
    let response = llm
        .chat(ChatRequest::new("x").with_logprobs(true))
        .await
        .unwrap();
    let logprobs = response.logprobs.unwrap();
    assert_eq!(logprobs.len(), 4);
    assert_eq!(logprobs[1].bytes, vec![195]);
    assert_eq!(logprobs[3].logprob, -0.5);
    // Through an extraction that does not stream (no loop guard): the split character is one field.
    let out = Extractor::new(&llm)
        .loop_guard(LoopGuard::off())
        .confidence(ConfidenceRule::default())
        .with_schema(&person())
        .extract("x")
        .await
        .unwrap();
    assert_eq!(server.requests().last().unwrap().json["stream"], false);
    assert!(close(out.report.confidence["/name"], (-2.0_f64).exp()));
    assert!(close(out.report.confidence["/age"], (-0.5_f64).exp()));
}

#[tokio::test]
async fn list_items_get_pointers_of_their_own() {
    let answer = [
        ("{\"items\": [{\"name\": \"", 0.0),
        ("Ada", -0.1),
        ("\", \"age\": ", 0.0),
        ("36", -0.2),
        ("}, {\"name\": \"", 0.0),
        ("Bob", -1.5),
        ("\", \"age\": ", 0.0),
        ("7", -0.4),
        ("}]}", 0.0),
    ];
    let server = TestServer::start(move |_| openai_stream(&answer));
    let llm = openai(&server);
    let out = Extractor::new(&llm)
        .min_confidence(0.5)
        .with_schema(&person())
        .extract_all("Ada, 36. Bob, 7.")
        .await
        .unwrap();
    assert_eq!(out.value.len(), 2);
    let keys: Vec<&str> = out.report.confidence.keys().map(String::as_str).collect();
    assert_eq!(keys, vec!["/0/age", "/0/name", "/1/age", "/1/name"]);
    assert!(close(out.report.confidence["/1/name"], (-1.5_f64).exp()));
    let doubtful: Vec<(Option<usize>, &str)> = out
        .report
        .issues
        .iter()
        .map(|i| (i.item, i.path.as_str()))
        .collect();
    assert_eq!(doubtful, vec![(Some(1), "/name")]);
}

#[tokio::test]
async fn gemini_logprobs_results_are_read_and_an_omitted_zero_is_zero() {
    let server = TestServer::start(|request| {
        let chosen: Vec<Value> = ADA_TOKENS
            .iter()
            .copied()
            .map(|(token, logprob)| {
                if logprob == 0.0 {
                    json!({"token": token}) // proto3 leaves a zero out
                } else {
                    json!({"token": token, "logProbability": logprob})
                }
            })
            .collect();
        let text: String = ADA_TOKENS.iter().copied().map(|(t, _)| t).collect();
        let response = json!({"modelVersion": "gemini-test", "candidates": [{
            "content": {"role": "model", "parts": [{"text": text}]},
            "finishReason": "STOP",
            "logprobsResult": {"chosenCandidates": chosen, "topCandidates": []}}],
            "usageMetadata": {"promptTokenCount": 3, "candidatesTokenCount": 6}});
        if request.path.contains(":generateContent") {
            Reply::json(200, response)
        } else {
            Reply::Chunked {
                status: 200,
                content_type: support::wire::SSE.into(),
                steps: vec![Step::Send(format!("data: {response}\r\n\r\n").into_bytes())],
            }
        }
    });
    let llm = Gemini::builder("gemini-test")
        .base_url(server.url())
        .api_key("AIza-test-key")
        .retry(RetryPolicy::new().max_retries(0))
        .build()
        .unwrap();
    let out = Extractor::new(&llm)
        .confidence(ConfidenceRule::default())
        .with_schema(&person())
        .extract("Ada, 36")
        .await
        .unwrap();
    assert_eq!(
        server.requests()[0].json["generationConfig"]["responseLogprobs"],
        true
    );
    assert!(close(out.report.confidence["/name"], (-0.2_f64).exp()));
    assert!(close(out.report.confidence["/age"], (-2.0_f64).exp()));
}

#[tokio::test]
async fn a_backend_without_logprobs_says_so() {
    let server = TestServer::script(vec![ollama(Answer::new(r#"{"name": "Ada", "age": 36}"#))]);
    let llm = llm_extract::llm::Ollama::builder("m")
        .host(server.url())
        .build()
        .unwrap();
    let out = Extractor::new(&llm)
        .min_confidence(0.5)
        .with_schema(&person())
        .extract("Ada, 36")
        .await
        .unwrap();
    assert!(out.report.confidence.is_empty());
    assert!(out.report.no_logprobs);
    assert!(out.report.issues.is_empty());
}

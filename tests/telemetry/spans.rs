//! Telemetry: the spans of an extraction and of its attempts, captured from a run against a local
//! OpenAI-compatible server behind a fallback, carry the OpenTelemetry GenAI attributes with the
//! values of the run, name the backend that answered, and never hold the API key.

use crate::capture::{self, field};
use crate::support;

use llm_extract::extract::Extractor;
use llm_extract::llm::{
    from_fn, ChatRequest, ChatResponse, Fallback, LlmError, OpenAiCompatible, RetryPolicy,
};
use llm_extract::schema::Dialect;
use support::types::Person;
use support::{openai, Answer, TestServer};

const KEY: &str = "sk-test-telemetry-0123456789-SECRET";

#[tokio::test]
async fn spans_carry_the_genai_attributes_and_never_the_key() {
    let (_serial, spans) = capture::start().await;

    // A first answer that fails the schema (two violations), then a valid one.
    let server = TestServer::script(vec![
        openai(Answer::new(r#"{"name": ["Ada"], "age": "old"}"#).usage(30, 7)),
        openai(Answer::new(r#"{"name": "Ada", "age": 36}"#).usage(41, 9)),
    ]);
    let url = format!("{}/v1?token=url-secret", server.url());
    let answering = OpenAiCompatible::builder(url, "test-model")
        .api_key(KEY)
        .retry(RetryPolicy::none())
        .build()
        .unwrap();
    // A first backend that is always rate-limited: the fallback moves on to the server.
    let limited = from_fn(|_request: ChatRequest| async {
        Err(LlmError::Http {
            status: 429,
            message: "slow down".into(),
            retry_after: None,
        })
    })
    .with_dialect(Dialect::OpenAiStrict);
    let llm = Fallback::new(limited).or_else(answering);
    let out = Extractor::new(&llm)
        .max_tokens(120)
        .temperature(0.25)
        .extract::<Person>("Ada, 36")
        .await
        .unwrap();
    assert_eq!(out.value.age, 36);

    // The ledger names the backend that answered, its address without the URL's credential.
    for attempt in &out.report.attempts {
        let backend = attempt.backend.as_ref().expect("a backend");
        assert_eq!(backend.model.as_deref(), Some("test-model"));
        let url = backend.url.as_deref().unwrap_or_default();
        assert!(
            url.starts_with(&server.url()) && !url.contains("url-secret"),
            "{url}"
        );
    }

    let attempts = spans.named("extract_attempt");
    assert_eq!(attempts.len(), 2, "{attempts:?}");
    for (attempt, (kind, input, output)) in
        attempts.iter().zip([("first", 30, 7), ("repair", 41, 9)])
    {
        assert_eq!(field(attempt, "kind"), kind);
        assert_eq!(field(attempt, "otel.name"), "chat test-model");
        assert_eq!(field(attempt, "gen_ai.operation.name"), "chat");
        // The backend that answered, not the first one asked.
        assert_eq!(field(attempt, "gen_ai.provider.name"), "openai");
        let address = field(attempt, "server.address");
        assert!(address.starts_with(&server.url()), "{address}");
        assert_eq!(field(attempt, "gen_ai.request.model"), "test-model");
        assert_eq!(field(attempt, "gen_ai.request.temperature"), "0.25");
        assert_eq!(field(attempt, "gen_ai.request.max_tokens"), "120");
        assert_eq!(field(attempt, "gen_ai.response.model"), "test-model");
        assert_eq!(field(attempt, "gen_ai.response.finish_reasons"), "stop");
        assert_eq!(
            field(attempt, "gen_ai.usage.input_tokens"),
            input.to_string()
        );
        assert_eq!(
            field(attempt, "gen_ai.usage.output_tokens"),
            output.to_string()
        );
        assert!(!attempt.contains_key("error.type"), "{attempt:?}");
        // No content unless asked for (`trace_content`), nor a batch job (this ran online).
        for content in [
            "gen_ai.system_instructions",
            "gen_ai.input.messages",
            "gen_ai.output.messages",
            "llm_extract.batch_id",
            "llm_extract.batch_request",
        ] {
            assert!(!attempt.contains_key(content), "{attempt:?}");
        }
    }
    let extractions = spans.named("extract");
    assert_eq!(extractions.len(), 1, "{extractions:?}");
    let extraction = &extractions[0];
    assert_eq!(field(extraction, "otel.name"), "extract Person");
    assert_eq!(field(extraction, "llm_extract.attempts"), "2");
    assert_eq!(field(extraction, "llm_extract.repairs"), "1");
    assert_eq!(field(extraction, "llm_extract.validation_errors"), "2");
    assert_eq!(field(extraction, "gen_ai.usage.input_tokens"), "71");
    assert_eq!(field(extraction, "gen_ai.usage.output_tokens"), "16");

    // A failure names its class.
    let refusing = from_fn(|_request: ChatRequest| async {
        Err(LlmError::Http {
            status: 400,
            message: "This model's maximum context length is 8 tokens".into(),
            retry_after: None,
        })
    });
    assert!(Extractor::new(&refusing)
        .extract::<Person>("x")
        .await
        .is_err());
    let last = spans.named("extract_attempt").pop().unwrap();
    assert_eq!(field(&last, "error.type"), "context_too_long");
    let last = spans.named("extract").pop().unwrap();
    assert_eq!(field(&last, "error.type"), "context_too_long");

    // Prompt cache tokens, when the provider counted them, on the attempt and the extraction.
    let cached = from_fn(|_request: ChatRequest| async {
        let mut response = ChatResponse::new(r#"{"name": "Ada", "age": 36}"#).with_usage(50, 9);
        response.usage.cache_read_tokens = 40;
        response.usage.cache_write_tokens = 6;
        Ok(response)
    });
    Extractor::new(&cached)
        .extract::<Person>("Ada, 36")
        .await
        .unwrap();
    for name in ["extract_attempt", "extract"] {
        let last = spans.named(name).pop().unwrap();
        assert_eq!(field(&last, "gen_ai.usage.cache_read.input_tokens"), "40");
        assert_eq!(
            field(&last, "gen_ai.usage.cache_creation.input_tokens"),
            "6"
        );
    }
    // None recorded when the provider counted none.
    assert!(!attempts[0].contains_key("gen_ai.usage.cache_read.input_tokens"));

    // A backend that describes itself is named on the extraction's span, which keeps the name of
    // what it does.
    let direct_server =
        TestServer::script(vec![openai(Answer::new(r#"{"name": "Ada", "age": 36}"#))]);
    let direct = OpenAiCompatible::builder(format!("{}/v1", direct_server.url()), "direct-model")
        .retry(RetryPolicy::none())
        .build()
        .unwrap();
    Extractor::new(&direct)
        .extract::<Person>("Ada, 36")
        .await
        .unwrap();
    let last = spans.named("extract").pop().unwrap();
    assert_eq!(field(&last, "gen_ai.provider.name"), "openai");
    assert_eq!(field(&last, "gen_ai.request.model"), "direct-model");
    let address = field(&last, "server.address");
    assert!(address.starts_with(&direct_server.url()), "{address}");
    assert_eq!(field(&last, "otel.name"), "extract Person");

    // No key, whole or in part, and no credential of the URL, in any field of any span.
    let everything = spans.everything();
    for secret in [KEY, "0123456789", "url-secret"] {
        assert!(
            !everything.contains(secret),
            "{secret} leaked into {everything}"
        );
    }
}

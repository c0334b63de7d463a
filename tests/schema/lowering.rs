//! What a provider receives of a runtime schema, end to end through the extractor: the schema lowered
//! for its dialect, the non-strict flag where the strict form cannot carry it, and the report's note of
//! what the provider will not enforce (each answer still validated against the whole schema).

use llm_extract::{
    from_fn,
    llm::{ChatRequest, ChatResponse},
    schema::{Dialect, SchemaSet},
    Extractor,
};
use serde_json::json;
use std::sync::{Arc, Mutex};

type Log = Arc<Mutex<Vec<ChatRequest>>>;

/// A backend of `dialect` answering `answer` to every request, and the requests it got.
fn backend(dialect: Dialect, answer: &'static str) -> (impl llm_extract::Llm, Log) {
    let log: Log = Arc::default();
    let seen = Arc::clone(&log);
    let llm = from_fn(move |request: ChatRequest| {
        seen.lock().unwrap().push(request);
        async move { Ok(ChatResponse::new(answer)) }
    })
    .with_dialect(dialect);
    (llm, log)
}

#[tokio::test]
async fn the_report_names_what_the_provider_will_not_enforce() {
    let schema = SchemaSet::new(
        "Tags",
        json!({
            "type": "object",
            "properties": { "tags": { "type": "array", "items": { "type": "string" }, "uniqueItems": true } },
            "required": ["tags"],
            "additionalProperties": false
        }),
    );
    let (gemini, log) = backend(Dialect::Gemini, r#"{"tags": ["a", "b"]}"#);
    let extraction = Extractor::new(gemini)
        .with_schema(&schema)
        .extract("a, b")
        .await
        .unwrap();
    assert_eq!(
        extraction.report.unenforced.as_deref(),
        Some("gemini will not enforce uniqueItems (checked locally)")
    );
    let sent = log.lock().unwrap()[0].schema.clone().unwrap();
    assert!(
        sent["properties"]["tags"].get("uniqueItems").is_none(),
        "{sent}"
    );

    // The dropped keyword is still enforced: a repeated tag is rejected and repaired.
    let (gemini, _) = backend(Dialect::Gemini, r#"{"tags": ["a", "a"]}"#);
    let error = Extractor::new(gemini)
        .max_attempts(1)
        .with_schema(&schema)
        .extract("a, a")
        .await
        .unwrap_err();
    assert!(error.to_string().contains("tags"), "{error}");

    let (generic, _) = backend(Dialect::Generic, r#"{"tags": ["a"]}"#);
    let extraction = Extractor::new(generic)
        .with_schema(&schema)
        .extract("a")
        .await
        .unwrap();
    assert_eq!(extraction.report.unenforced, None);
}

#[tokio::test]
async fn an_open_object_goes_to_a_strict_provider_in_its_non_strict_form() {
    let schema = SchemaSet::new(
        "Named",
        json!({
            "type": "object",
            "properties": { "name": { "type": "string" }, "extra": { "type": "object", "additionalProperties": true } },
            "required": ["name"],
            "additionalProperties": false
        }),
    );
    let (openai, log) = backend(Dialect::OpenAiStrict, r#"{"name": "Ada", "extra": {}}"#);
    let extraction = Extractor::new(openai)
        .with_schema(&schema)
        .extract("Ada")
        .await
        .unwrap();
    let request = log.lock().unwrap()[0].clone();
    assert!(request.schema_relaxed);
    assert_eq!(
        request.schema.unwrap()["properties"]["extra"],
        json!({ "type": "object", "additionalProperties": true })
    );
    let note = extraction.report.unenforced.unwrap();
    assert!(
        note.starts_with("openai-strict takes this schema only without strict mode"),
        "{note}"
    );
}

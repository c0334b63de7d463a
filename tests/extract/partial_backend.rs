//! `extract_partial` keeps the same ledger as `extract`: each attempt names the backend that answered
//! it (behind a fallback, the one it chose), with its address redacted.

use crate::support;

use futures_util::StreamExt;
use llm_extract::extract::{Extractor, PartialEvent};
use llm_extract::llm::{Fallback, OpenAiCompatible, RetryPolicy};
use llm_extract::Extract;
use serde::Deserialize;
use support::{openai, Answer, Reply, TestServer};

#[derive(Extract, Deserialize, Debug, Clone, PartialEq)]
struct Person {
    name: String,
    age: u8,
}

#[tokio::test]
async fn each_attempt_of_a_partial_extraction_names_the_backend_that_answered() {
    let busy = TestServer::start(|_| Reply::openai_error(503, "overloaded"));
    let answering = TestServer::script(vec![
        openai(Answer::new(r#"{"name": ["Ada"], "age": "old"}"#)),
        openai(Answer::new(r#"{"name": "Ada", "age": 36}"#)),
    ]);
    let client = |server: &TestServer, model: &str| {
        OpenAiCompatible::builder(format!("{}/v1?token=url-secret", server.url()), model)
            .retry(RetryPolicy::none())
            .build()
            .unwrap()
    };
    let llm = Fallback::new(client(&busy, "first-model")).or_else(client(&answering, "second"));
    let extractor = Extractor::new(&llm);
    let mut events = extractor.extract_partial::<Person>("Ada, 36");
    let mut last = None;
    while let Some(event) = events.next().await {
        if let PartialEvent::Final { extraction, .. } = event.unwrap() {
            last = Some(extraction);
        }
    }
    let extraction = last.expect("a final value");
    assert_eq!(extraction.value.age, 36);
    assert_eq!(extraction.report.attempts.len(), 2);
    for attempt in &extraction.report.attempts {
        let backend = attempt
            .backend
            .as_ref()
            .expect("the attempt names its backend");
        assert_eq!(backend.provider, "openai");
        assert_eq!(backend.model.as_deref(), Some("second"));
        let url = backend.url.as_deref().unwrap_or_default();
        assert!(
            url.starts_with(&answering.url()) && !url.contains("url-secret"),
            "{url}"
        );
    }
    assert_eq!(busy.hits(), 2);
}

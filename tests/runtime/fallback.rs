//! A fallback over two OpenAI-compatible servers: the first rate-limits with a long `Retry-After`, the
//! second answers; the first is neither retried nor waited out, and is passed over while it rests; the
//! report names the backend that answered.

use crate::support;

use llm_extract::extract::Extractor;
use llm_extract::llm::{ErrorClass, Fallback, LlmExt, OpenAiCompatible, RateLimit, RetryPolicy};
use std::time::Duration;
use support::types::Person;
use support::{openai, Answer, Reply, TestServer};

/// A backend at `server` with the default retry policy (3 retries, a `Retry-After` honoured up to 8 s).
fn client(server: &TestServer, model: &str) -> OpenAiCompatible {
    OpenAiCompatible::builder(server.url(), model)
        .retry(RetryPolicy::new().max_backoff(Duration::from_secs(8)))
        .build()
        .unwrap()
}

#[tokio::test]
async fn a_rate_limited_server_is_not_waited_out_when_another_answers() {
    let limited = TestServer::start(|_| {
        Reply::openai_error(429, "rate limit reached").with_header("retry-after", "30")
    });
    let answering = TestServer::start(|request| {
        Reply::openai(request, &Answer::new(r#"{"name": "Ada", "age": 36}"#))
    });
    let llm = Fallback::new(client(&limited, "first-model"))
        .or_else(client(&answering, "second-model"))
        .on(ErrorClass::Transient | ErrorClass::RateLimited);
    for _ in 0..3 {
        let out = Extractor::new(&llm)
            .extract::<Person>("Ada, 36")
            .await
            .unwrap();
        assert_eq!(out.value.age, 36);
        assert_eq!(out.report.attempts.len(), 1);
        // The ledger names the backend that answered.
        let backend = out.report.attempts[0].backend.as_ref().expect("a backend");
        assert_eq!(backend.provider, "openai");
        assert_eq!(backend.model.as_deref(), Some("second-model"));
        assert!(backend
            .url
            .as_deref()
            .is_some_and(|url| url.starts_with(&answering.url())));
    }
    // Asked once, not retried (its policy would have sent it 4 times, waiting 8 s between), then
    // passed over while its Retry-After runs.
    assert_eq!(limited.hits(), 1);
    assert_eq!(answering.hits(), 3);
    assert_eq!(
        answering.requests()[0].json["model"],
        "second-model",
        "the request went to the second backend with its own model"
    );
}

#[tokio::test]
async fn layers_compose_over_an_http_backend() {
    let server = TestServer::script(vec![
        support::fixed(Reply::openai_error(503, "overloaded")),
        openai(Answer::new(r#"{"name": "Ada", "age": 36}"#)),
    ]);
    let http = OpenAiCompatible::builder(server.url(), "m")
        .retry(RetryPolicy::none())
        .build()
        .unwrap();
    // The backend itself does not retry; the layer over it does.
    let llm = RateLimit::new(http)
        .requests_per_minute(600)
        .with_retry(RetryPolicy::new().initial_backoff(Duration::from_millis(1)));
    let out = Extractor::new(&llm)
        .extract::<Person>("Ada, 36")
        .await
        .unwrap();
    assert_eq!(out.value.name, "Ada");
    assert_eq!(server.hits(), 2);
}

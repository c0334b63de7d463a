//! The Gemini backend against a local server speaking `generateContent` and
//! `streamGenerateContent?alt=sse` (CRLF-framed events cut into 5-byte reads): request fields and the key
//! header, `responseJsonSchema` in the Gemini dialect, thought parts, `MAX_TOKENS` as a length finish,
//! withheld answers, the fault matrix, and a key that never shows up in a URL, `Debug` output or errors.

use crate::common;
use crate::support;

use futures_util::StreamExt;
use llm_extract::extract::{ExtractErrorKind, Extractor, Mode};
use llm_extract::llm::TimeoutPhase;
use llm_extract::llm::{ChatRequest, Gemini, GeminiBuilder, Llm, LlmError, RetryPolicy};
use llm_extract::report::AttemptKind;
use llm_extract::{
    llm::Finish,
    schema::{Dialect, Shape},
    Extract, Schema,
};
use serde_json::json;
use std::time::Duration;
use support::providers::{gemini, gemini_error, gemini_key_error, gemini_with};
use support::types::{entity, entity_line, Entity, Person};
use support::{fixed, Answer, Ending, Reply, Scripted, TestServer};

const KEY: &str = "AIza-test-0123456789abcdef-SECRET";

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn builder(server: &TestServer) -> GeminiBuilder {
    Gemini::builder("gemini-test")
        .base_url(server.url())
        .api_key(KEY)
        .request_timeout(ms(3000))
        .idle_timeout(ms(300))
        .retry(
            RetryPolicy::new()
                .max_retries(3)
                .initial_backoff(ms(5))
                .max_backoff(ms(20)),
        )
}

fn client(server: &TestServer) -> Gemini {
    builder(server).build().unwrap()
}

fn answer(answer: Answer) -> Scripted {
    Box::new(move |request| gemini(request, &answer))
}

fn assert_no_key(text: &str) {
    assert!(!text.contains(KEY), "the API key leaked into: {text}");
    assert!(
        !text.contains("0123456789abcdef"),
        "part of the API key leaked into: {text}"
    );
}

#[tokio::test]
async fn one_value_sends_response_json_schema_and_the_key_header() {
    let server = TestServer::script(vec![answer(
        Answer::new(r#"{"name": "Zoë", "age": 36}"#)
            .usage(21, 9)
            .thinking("the name first"),
    )]);
    let llm = client(&server);
    let out = Extractor::new(&llm)
        .max_tokens(100)
        .extract::<Person>("Zoë, 36")
        .await
        .unwrap();
    assert_eq!((out.value.name.as_str(), out.value.age), ("Zoë", 36));
    assert_eq!(out.report.usage.total(), 30);
    let request = &server.requests()[0];
    assert_eq!(
        request.path,
        "/v1beta/models/gemini-test:streamGenerateContent?alt=sse"
    );
    assert_eq!(request.header("x-goog-api-key"), Some(KEY));
    assert_eq!(request.header("authorization"), None);
    let body = &request.json;
    assert!(body["systemInstruction"]["parts"][0]["text"]
        .as_str()
        .unwrap()
        .contains("name"));
    assert_eq!(body["contents"][0]["role"], "user");
    let config = &body["generationConfig"];
    assert_eq!(config["maxOutputTokens"], 100);
    assert_eq!(config["temperature"], 0.0);
    assert_eq!(config["responseMimeType"], "application/json");
    assert_eq!(
        config["responseJsonSchema"],
        *Person::schema()
            .for_dialect(Dialect::Gemini, Shape::One)
            .unwrap()
    );
}

#[tokio::test]
async fn a_whole_answer_comes_from_generate_content() {
    let server = TestServer::start(|request| {
        gemini(
            request,
            &Answer::new(r#"{"name": "Ada", "age": 36}"#).usage(3, 4),
        )
    });
    let done = client(&server).chat(ChatRequest::new("x")).await.unwrap();
    assert_eq!(done.text, r#"{"name": "Ada", "age": 36}"#);
    assert_eq!((done.usage.total(), done.finish), (7, Finish::Stop));
    assert_eq!(done.model.as_deref(), Some("gemini-test-001"));
    assert_eq!(
        server.requests()[0].path,
        "/v1beta/models/gemini-test:generateContent"
    );
}

#[tokio::test]
async fn list_items_stream_and_tool_mode_falls_back_to_the_json_schema() {
    let text =
        json!({"items": [{"name": "Ada", "kind": "person"}, {"name": "IBM", "kind": "company"}]})
            .to_string();
    let server = TestServer::script(vec![answer(Answer::new(text.clone()).pieces_of(4))]);
    let llm = client(&server);
    let extractor = Extractor::new(&llm).mode(Mode::Tool);
    let mut stream = extractor.extract_stream::<Entity>("x");
    let mut items = Vec::new();
    while let Some(item) = stream.next().await {
        items.push(item.unwrap());
    }
    assert_eq!(items, [entity("Ada", "person"), entity("IBM", "company")]);
    let config = &server.requests()[0].json["generationConfig"];
    assert_eq!(
        config["responseJsonSchema"],
        *Entity::schema()
            .for_dialect(Dialect::Gemini, Shape::List)
            .unwrap()
    );
}

#[tokio::test]
async fn max_tokens_is_a_length_finish_and_is_continued() {
    let server = TestServer::script(vec![
        answer(Answer::new(format!("{}\n{{\"na", entity_line("Ada", "person"))).cut()),
        answer(Answer::new(format!("{}\n", entity_line("Lyon", "place")))),
    ]);
    let llm = client(&server);
    let out = Extractor::new(&llm)
        .mode(Mode::Prompted)
        .extract_all::<Entity>("x")
        .await
        .unwrap();
    assert_eq!(
        out.value,
        [entity("Ada", "person"), entity("Lyon", "place")]
    );
    assert_eq!(out.report.attempts[0].finish, Some(Finish::Length));
    assert_eq!(out.report.attempts[1].kind, AttemptKind::Continuation);
}

#[tokio::test]
async fn safety_and_recitation_are_typed_errors_that_say_why() {
    let server = TestServer::start(|request| {
        let reason = request.contents_text();
        gemini_with(request, &Answer::new(r#"{"name": "#), Some(&reason))
    });
    let llm = client(&server);
    for reason in ["SAFETY", "RECITATION", "BLOCKLIST"] {
        let err = llm.chat(ChatRequest::new(reason)).await.unwrap_err();
        match &err {
            LlmError::Blocked { reason: got, .. } => assert_eq!(got, reason),
            other => panic!("{reason}: {other:?}"),
        }
        let mut stream = llm.chat_stream(ChatRequest::new(reason)).await.unwrap();
        let mut last = None;
        while let Some(event) = stream.next().await {
            last = Some(event);
        }
        assert!(
            matches!(last, Some(Err(LlmError::Blocked { .. }))),
            "{last:?}"
        );
    }
    let blocked_prompt = TestServer::start(|_| {
        Reply::json(200, json!({"promptFeedback": {"blockReason": "SAFETY"}}))
    });
    let err = client(&blocked_prompt)
        .chat(ChatRequest::new("x"))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("prompt was blocked"), "{err}");
}

#[tokio::test]
async fn status_errors_are_typed_with_hints() {
    let server = TestServer::start(|request| match request.contents_text().as_str() {
        "key" => gemini_key_error("API key not valid. Please pass a valid API key."),
        // A refused request whose message speaks of a key, without the reason of a bad one.
        "field" => gemini_error(
            400,
            "INVALID_ARGUMENT",
            "Unknown name \"api key\" in the payload.",
        ),
        "403" => gemini_error(403, "PERMISSION_DENIED", "no access"),
        "404" => gemini_error(
            404,
            "NOT_FOUND",
            "models/gemini-test is not found for API version v1beta",
        ),
        _ => gemini_error(400, "INVALID_ARGUMENT", "Invalid JSON payload received."),
    });
    let llm = client(&server);
    let err = llm.chat(ChatRequest::new("key")).await.unwrap_err();
    assert!(matches!(err, LlmError::Auth { status: 400, .. }), "{err:?}");
    assert!(err.to_string().contains("GEMINI_API_KEY"), "{err}");
    let err = llm.chat(ChatRequest::new("field")).await.unwrap_err();
    assert!(matches!(err, LlmError::Http { status: 400, .. }), "{err:?}");
    let err = llm.chat(ChatRequest::new("403")).await.unwrap_err();
    assert!(matches!(err, LlmError::Auth { status: 403, .. }), "{err:?}");
    let err = llm.chat(ChatRequest::new("404")).await.unwrap_err();
    assert!(matches!(err, LlmError::ModelNotFound { .. }), "{err:?}");
    assert!(err.to_string().contains("/v1beta/models"), "{err}");
    let err = Person::extract(&llm, "400").await.unwrap_err();
    let ExtractErrorKind::Llm(LlmError::Http {
        status, message, ..
    }) = err.kind()
    else {
        panic!("{err:?}")
    };
    assert_eq!(
        (*status, message.as_str()),
        (400, "Invalid JSON payload received.")
    );
    assert_eq!(server.hits(), 5, "none of them was retried");
}

#[tokio::test]
async fn resource_exhausted_and_unavailable_are_retried() {
    let server = TestServer::script(vec![
        fixed(gemini_error(429, "RESOURCE_EXHAUSTED", "quota").with_header("retry-after", "0")),
        fixed(gemini_error(503, "UNAVAILABLE", "overloaded")),
        answer(Answer::new(r#"{"name": "Ada", "age": 36}"#)),
    ]);
    assert_eq!(
        Person::extract(&client(&server), "x").await.unwrap().age,
        36
    );
    assert_eq!(server.hits(), 3);
}

#[tokio::test]
async fn a_mid_stream_error_keeps_complete_items() {
    let text = format!("{}\n{}", entity_line("Ada", "person"), r#"{"name": "IB"#);
    let server = TestServer::start(move |request| {
        gemini(
            request,
            &Answer::new(text.clone()).ending(Ending::ErrorLine("The model is overloaded.".into())),
        )
    });
    let llm = client(&server);
    let extractor = Extractor::new(&llm).mode(Mode::Prompted);
    let mut stream = extractor.extract_stream::<Entity>("x");
    assert_eq!(
        stream.next().await.unwrap().unwrap(),
        entity("Ada", "person")
    );
    let err = stream.next().await.unwrap().unwrap_err();
    assert!(err.to_string().contains("overloaded"), "{err}");
}

#[tokio::test]
async fn transport_faults_are_typed() {
    let url = {
        let server = TestServer::start(|_| Reply::text(200, ""));
        server.url()
    };
    let refused = Gemini::builder("m")
        .base_url(url)
        .api_key(KEY)
        .retry(RetryPolicy::none())
        .build()
        .unwrap();
    let err = refused.chat(ChatRequest::new("x")).await.unwrap_err();
    assert!(matches!(err, LlmError::Connect { .. }), "{err:?}");

    let server = TestServer::start(|request| match request.contents_text().as_str() {
        "garbage" => Reply::text(200, "<html>not json</html>"),
        "drop" => gemini(
            request,
            &Answer::new(r#"{"name": "Ada""#).ending(Ending::Drop),
        ),
        "stall" => gemini(
            request,
            &Answer::new(r#"{"name": "Ada""#).ending(Ending::Stall),
        ),
        "nothing" => gemini(
            request,
            &Answer::new(r#"{"name": "Ada""#).ending(Ending::Nothing),
        ),
        _ => gemini(request, &Answer::new("x".repeat(5000))),
    });
    let llm = builder(&server).max_body_bytes(2000).build().unwrap();
    let err = llm.chat(ChatRequest::new("garbage")).await.unwrap_err();
    assert!(matches!(err, LlmError::InvalidResponse { .. }), "{err:?}");
    for prompt in ["garbage", "drop", "stall", "nothing", "big"] {
        let mut stream = llm.chat_stream(ChatRequest::new(prompt)).await.unwrap();
        let mut last = None;
        while let Some(event) = stream.next().await {
            last = Some(event);
        }
        let err = last.unwrap().unwrap_err();
        let ok = match prompt {
            "garbage" => matches!(err, LlmError::InvalidResponse { .. }),
            "drop" | "nothing" => {
                matches!(&err, LlmError::Stream { received, .. } if received.contains("name"))
            }
            "stall" => matches!(
                err,
                LlmError::Timeout {
                    phase: TimeoutPhase::Idle,
                    ..
                }
            ),
            _ => matches!(err, LlmError::BodyTooLarge { .. }),
        };
        assert!(ok, "{prompt}: {err:?}");
    }
}

#[tokio::test]
async fn the_api_key_never_appears_in_urls_debug_or_error_text() {
    let server = TestServer::start(|request| {
        let echoed = request
            .header("x-goog-api-key")
            .unwrap_or_default()
            .to_owned();
        match request.contents_text().as_str() {
            "400" => gemini_error(
                400,
                "INVALID_ARGUMENT",
                &format!("API key not valid: {echoed}"),
            ),
            "stream" => gemini(
                request,
                &Answer::new("{").ending(Ending::ErrorLine(format!("boom {echoed}"))),
            ),
            _ => Reply::text(200, format!("garbage {echoed}")),
        }
    });
    let llm = client(&server);
    assert_no_key(&format!("{llm:?}"));
    assert_no_key(&format!("{:?}", builder(&server)));
    for prompt in ["400", "garbage"] {
        let err = llm.chat(ChatRequest::new(prompt)).await.unwrap_err();
        assert_no_key(&err.to_string());
        assert_no_key(&format!("{err:?}"));
        let err = Person::extract(&llm, prompt).await.unwrap_err();
        assert_no_key(&err.to_string());
        assert_no_key(&format!("{err:?}"));
    }
    let mut stream = llm.chat_stream(ChatRequest::new("stream")).await.unwrap();
    let mut last = None;
    while let Some(event) = stream.next().await {
        last = Some(event);
    }
    let err = last.unwrap().unwrap_err();
    assert!(err.to_string().contains("boom"), "{err}");
    assert_no_key(&err.to_string());
    for request in server.requests() {
        assert_no_key(&request.path);
    }
    assert_eq!(llm.dialect(), Dialect::Gemini);
}

#[tokio::test]
async fn a_key_echoed_in_a_retried_error_never_reaches_the_logs() {
    // The binary's global log capture (other tests' lines, without the key, may land there too).
    let logs = crate::logs::captured();
    let echo = |status, code| {
        fixed(
            gemini_error(status, code, &format!("slow down, {KEY}"))
                .with_header("retry-after", "0"),
        )
    };
    let server = TestServer::script(vec![
        echo(429, "RESOURCE_EXHAUSTED"),
        echo(503, "UNAVAILABLE"),
        answer(Answer::new(r#"{"name": "Ada", "age": 36}"#)),
    ]);
    assert_eq!(
        Person::extract(&client(&server), "x").await.unwrap().age,
        36
    );
    let logged = logs.text();
    assert!(
        logged.matches("retrying").count() >= 2 && logged.contains("slow down"),
        "each retry is logged with the server's message: {logged}"
    );
    assert_no_key(&logged);
}

#[tokio::test]
async fn partial_values_stream_from_server_sent_events() {
    let server = TestServer::start(|request| {
        gemini(request, &Answer::new(common::snapshots::ORDER).pieces_of(3))
    });
    common::snapshots::check_order_partial(&client(&server), Mode::Constrained).await;
    let request = &server.requests()[0];
    assert!(
        request.path.contains(":streamGenerateContent"),
        "{}",
        request.path
    );
}

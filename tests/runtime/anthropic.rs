//! The Anthropic backend against a local server speaking the Messages API (`/v1/messages`, SSE events
//! cut into 5-byte reads): request fields and headers, native JSON output and the forced tool, items as
//! each completes, `max_tokens` as a length finish, usage with cache tokens, the fault matrix, and an
//! API key that never shows up in `Debug` output, errors or logs.

use crate::common;
use crate::support;

use futures_util::StreamExt;
use llm_extract::extract::{ExtractErrorKind, Extractor, Mode};
use llm_extract::llm::TimeoutPhase;
use llm_extract::llm::{Anthropic, AnthropicOutput, ChatRequest, Llm, LlmError, RetryPolicy};
use llm_extract::report::AttemptKind;
use llm_extract::{
    llm::Finish,
    schema::{Dialect, Shape},
    Extract, Schema,
};
use serde_json::json;
use std::time::Duration;
use support::providers::{anthropic, anthropic_error};
use support::types::{entity, entity_line, Entity, Person};
use support::{fixed, wire, Answer, Ending, Reply, Scripted, Step, TestServer};

const KEY: &str = "sk-ant-test-0123456789abcdef-SECRET";

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn builder(server: &TestServer) -> llm_extract::llm::AnthropicBuilder {
    Anthropic::builder("claude-test")
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

fn client(server: &TestServer) -> Anthropic {
    builder(server).build().unwrap()
}

fn answer(answer: Answer) -> Scripted {
    Box::new(move |request| anthropic(request, &answer))
}

fn assert_no_key(text: &str) {
    assert!(!text.contains(KEY), "the API key leaked into: {text}");
    assert!(
        !text.contains("0123456789abcdef"),
        "part of the API key leaked into: {text}"
    );
}

fn items_json(items: &[(&str, &str)]) -> String {
    let items: Vec<_> = items
        .iter()
        .map(|(name, kind)| json!({"name": name, "kind": kind}))
        .collect();
    json!({ "items": items }).to_string()
}

#[tokio::test]
async fn one_value_sends_output_config_with_the_dialect_schema_and_the_key_header() {
    let server = TestServer::script(vec![answer(
        Answer::new(r#"{"name": "Zoë", "age": 36}"#).usage(21, 9),
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
    assert_eq!(request.path, "/v1/messages");
    assert_eq!(request.header("x-api-key"), Some(KEY));
    assert_eq!(request.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(request.header("authorization"), None);
    assert_eq!(request.header("anthropic-beta"), None);
    let body = &request.json;
    assert_eq!(body["model"], "claude-test");
    assert_eq!(body["stream"], true);
    assert_eq!(body["max_tokens"], 100);
    assert!(body["system"].as_str().unwrap().contains("name"));
    assert!(body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .all(|m| m["role"] != "system"));
    let schema = Person::schema()
        .for_dialect(Dialect::Anthropic, Shape::One)
        .unwrap();
    assert_eq!(
        body["output_config"],
        json!({"format": {"type": "json_schema", "schema": schema}})
    );
    // The bounds on `age` are Anthropic-unsupported: dropped from what is sent, still checked here.
    assert!(schema["properties"]["age"].get("maximum").is_none());
    assert!(body.get("tools").is_none());
}

#[tokio::test]
async fn a_dropped_keyword_is_still_validated_locally() {
    let server = TestServer::script(vec![
        answer(Answer::new(r#"{"name": "Ada", "age": 200}"#)),
        answer(Answer::new(r#"{"name": "Ada", "age": 36}"#)),
    ]);
    let llm = client(&server);
    let out = Extractor::new(&llm).extract::<Person>("x").await.unwrap();
    assert_eq!(out.value.age, 36);
    assert_eq!(
        out.report.attempts.len(),
        2,
        "the out-of-range age was repaired"
    );
}

#[tokio::test]
async fn the_beta_output_format_sends_its_header() {
    let server = TestServer::script(vec![answer(Answer::new(r#"{"name": "Ada", "age": 36}"#))]);
    let llm = builder(&server)
        .output(AnthropicOutput::BetaJson)
        .build()
        .unwrap();
    Person::extract(&llm, "x").await.unwrap();
    let request = &server.requests()[0];
    assert_eq!(
        request.header("anthropic-beta"),
        Some("structured-outputs-2025-11-13")
    );
    assert_eq!(request.json["output_format"]["type"], "json_schema");
    assert!(request.json.get("output_config").is_none());
}

#[tokio::test]
async fn tool_mode_forces_one_tool_and_reads_its_streamed_input() {
    let text = items_json(&[("Ada", "person"), ("IBM", "company")]);
    let server = TestServer::script(vec![answer(Answer::new(text).thinking("hmm").pieces_of(3))]);
    let llm = client(&server);
    let out = Extractor::new(&llm)
        .mode(Mode::Tool)
        .extract_all::<Entity>("x")
        .await
        .unwrap();
    assert_eq!(
        out.value,
        [entity("Ada", "person"), entity("IBM", "company")]
    );
    let body = &server.requests()[0].json;
    let schema = Entity::schema()
        .for_dialect(Dialect::Anthropic, Shape::List)
        .unwrap();
    assert_eq!(
        body["tools"][0]["input_schema"], *schema,
        "the list shape, in the Anthropic dialect"
    );
    assert_eq!(body["tools"][0]["name"], "Entity");
    assert_eq!(
        body["tool_choice"],
        json!({"type": "tool", "name": "Entity"})
    );
    assert!(body.get("output_config").is_none());
    // Not streamed: the tool call's `input` object is the answer.
    let whole = llm
        .chat(
            ChatRequest::new("x")
                .with_schema("Person", json!({"type": "object"}))
                .with_tool_call(true),
        )
        .await;
    assert!(whole.is_err(), "the script is used up: {whole:?}");
}

#[tokio::test]
async fn a_whole_message_answers_chat() {
    let server = TestServer::start(|request| {
        anthropic(
            request,
            &Answer::new(r#"{"name": "Ada", "age": 36}"#).usage(3, 4),
        )
    });
    let llm = client(&server);
    let done = llm
        .chat(
            ChatRequest::new("x")
                .with_schema("Person", json!({"type": "object"}))
                .with_tool_call(true),
        )
        .await
        .unwrap();
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&done.text).unwrap(),
        json!({"name": "Ada", "age": 36})
    );
    assert_eq!((done.usage.total(), done.finish), (7, Finish::Stop));
    assert_eq!(server.requests()[0].json["stream"], false);
}

#[tokio::test]
async fn items_arrive_as_each_completes_from_partial_json() {
    let (steps, reply) = Reply::live(wire::SSE);
    let server = TestServer::start(move |_| reply.clone());
    let llm = client(&server);
    let event = |data: serde_json::Value| {
        Step::Send(
            format!(
                "event: {}\ndata: {data}\n\n",
                data["type"].as_str().unwrap()
            )
            .into_bytes(),
        )
    };
    let delta = |json: &str| {
        event(json!({"type": "content_block_delta", "index": 0,
                     "delta": {"type": "input_json_delta", "partial_json": json}}))
    };
    steps
        .send(event(
            json!({"type": "message_start", "message": {"model": "claude-test",
            "usage": {"input_tokens": 5, "output_tokens": 1}}}),
        ))
        .unwrap();
    steps
        .send(event(json!({"type": "content_block_start", "index": 0,
            "content_block": {"type": "tool_use", "id": "t", "name": "Entity", "input": {}}})))
        .unwrap();
    steps
        .send(delta(
            r#"{"items": [{"name": "Ada", "kind": "person"}, {"na"#,
        ))
        .unwrap();
    let extractor = Extractor::new(&llm).mode(Mode::Tool);
    let mut stream = extractor.extract_stream::<Entity>("x");
    // The first item comes out while the server has not sent the second one yet.
    assert_eq!(
        stream.next().await.unwrap().unwrap(),
        entity("Ada", "person")
    );
    steps
        .send(delta(r#"me": "IBM", "kind": "company"}]}"#))
        .unwrap();
    steps
        .send(event(json!({"type": "content_block_stop", "index": 0})))
        .unwrap();
    steps
        .send(event(
            json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"},
            "usage": {"output_tokens": 20}}),
        ))
        .unwrap();
    steps.send(event(json!({"type": "message_stop"}))).unwrap();
    drop(steps);
    assert_eq!(
        stream.next().await.unwrap().unwrap(),
        entity("IBM", "company")
    );
    assert!(stream.next().await.is_none());
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
async fn a_truncated_list_keeps_its_complete_items() {
    let text = items_json(&[("Ada", "person"), ("IBM", "company")]);
    let cut = &text[..text.len() - 12];
    let server = TestServer::start({
        let cut = cut.to_owned();
        move |request| anthropic(request, &Answer::new(cut.clone()).cut())
    });
    let llm = client(&server);
    let extractor = Extractor::new(&llm).mode(Mode::Tool);
    let mut stream = extractor.extract_stream::<Entity>("x");
    assert_eq!(
        stream.next().await.unwrap().unwrap(),
        entity("Ada", "person")
    );
}

#[tokio::test]
async fn usage_counts_cache_reads_and_writes_as_prompt() {
    let server = TestServer::start(|_| {
        Reply::json(
            200,
            json!({"id": "m", "type": "message", "role": "assistant", "model": "claude-test",
                   "content": [{"type": "text", "text": "{}"}], "stop_reason": "end_turn",
                   "usage": {"input_tokens": 3, "cache_read_input_tokens": 100,
                             "cache_creation_input_tokens": 20, "output_tokens": 2}}),
        )
    });
    let done = client(&server).chat(ChatRequest::new("x")).await.unwrap();
    assert_eq!(
        (
            done.usage.prompt_tokens,
            done.usage.cache_read_tokens,
            done.usage.cache_write_tokens,
            done.usage.completion_tokens
        ),
        (123, 100, 20, 2)
    );
}

#[tokio::test]
async fn a_mid_stream_error_event_ends_the_attempt_and_keeps_complete_items() {
    let text = format!("{}\n{}", entity_line("Ada", "person"), r#"{"name": "IB"#);
    let server = TestServer::start(move |request| {
        anthropic(
            request,
            &Answer::new(text.clone()).ending(Ending::ErrorLine("Overloaded".into())),
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
    assert!(
        err.to_string().contains("overloaded_error") && err.to_string().contains("Overloaded"),
        "{err}"
    );
}

#[tokio::test]
async fn status_errors_are_typed_with_hints() {
    let server = TestServer::start(|request| match request.last_message().as_str() {
        "401" => anthropic_error(401, "authentication_error", "invalid x-api-key"),
        "403" => anthropic_error(403, "permission_error", "not allowed"),
        "404" => anthropic_error(404, "not_found_error", "model: claude-test"),
        _ => anthropic_error(400, "invalid_request_error", "max_tokens: must be positive"),
    });
    let llm = client(&server);
    let err = llm.chat(ChatRequest::new("401")).await.unwrap_err();
    assert!(matches!(err, LlmError::Auth { status: 401, .. }), "{err:?}");
    assert!(err.to_string().contains("ANTHROPIC_API_KEY"), "{err}");
    let err = llm.chat(ChatRequest::new("403")).await.unwrap_err();
    assert!(matches!(err, LlmError::Auth { status: 403, .. }), "{err:?}");
    let err = llm.chat(ChatRequest::new("404")).await.unwrap_err();
    assert!(matches!(err, LlmError::ModelNotFound { .. }), "{err:?}");
    assert!(err.to_string().contains("/v1/models"), "{err}");
    let err = Person::extract(&llm, "400").await.unwrap_err();
    let ExtractErrorKind::Llm(LlmError::Http {
        status, message, ..
    }) = err.kind()
    else {
        panic!("{err:?}")
    };
    assert_eq!(
        (*status, message.as_str()),
        (400, "max_tokens: must be positive")
    );
    assert_eq!(server.hits(), 4, "none of them was retried");
}

#[tokio::test]
async fn a_429_and_a_529_are_retried_honouring_retry_after() {
    let server = TestServer::script(vec![
        fixed(
            anthropic_error(429, "rate_limit_error", "slow down").with_header("retry-after", "0"),
        ),
        fixed(anthropic_error(529, "overloaded_error", "Overloaded")),
        answer(Answer::new(r#"{"name": "Ada", "age": 36}"#)),
    ]);
    let llm = client(&server);
    assert_eq!(Person::extract(&llm, "x").await.unwrap().age, 36);
    assert_eq!(server.hits(), 3);
}

#[tokio::test]
async fn transport_faults_are_typed() {
    // Refused: nothing listens on the port of a server that has stopped.
    let url = {
        let server = TestServer::start(|_| Reply::text(200, ""));
        server.url()
    };
    let refused = Anthropic::builder("m")
        .base_url(url)
        .api_key(KEY)
        .retry(RetryPolicy::none())
        .build()
        .unwrap();
    let err = refused.chat(ChatRequest::new("x")).await.unwrap_err();
    assert!(matches!(err, LlmError::Connect { .. }), "{err:?}");

    let server = TestServer::start(|request| match request.last_message().as_str() {
        "garbage" => Reply::text(200, "<html>not json</html>"),
        "drop" => anthropic(request, &Answer::new(r#"{"name": "A"#).ending(Ending::Drop)),
        "stall" => anthropic(
            request,
            &Answer::new(r#"{"name": "A"#).ending(Ending::Stall),
        ),
        "nothing" => anthropic(
            request,
            &Answer::new(r#"{"name": "A"#).ending(Ending::Nothing),
        ),
        _ => anthropic(request, &Answer::new("x".repeat(5000))),
    });
    let llm = builder(&server).max_body_bytes(2000).build().unwrap();
    let err = llm.chat(ChatRequest::new("garbage")).await.unwrap_err();
    assert!(matches!(err, LlmError::InvalidResponse { .. }), "{err:?}");
    for (prompt, check) in [
        ("garbage", "InvalidResponse"),
        ("drop", "Stream"),
        ("stall", "Timeout"),
        ("nothing", "Stream"),
        ("big", "BodyTooLarge"),
    ] {
        let mut stream = llm.chat_stream(ChatRequest::new(prompt)).await.unwrap();
        let mut last = None;
        while let Some(event) = stream.next().await {
            last = Some(event);
        }
        let err = last.unwrap().unwrap_err();
        let ok = match check {
            "InvalidResponse" => matches!(err, LlmError::InvalidResponse { .. }),
            "Stream" => {
                matches!(&err, LlmError::Stream { received, .. } if received.contains("name"))
            }
            "Timeout" => matches!(
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
async fn the_api_key_never_appears_in_debug_or_error_text() {
    // A hostile server that echoes the key back in every error it can produce.
    let server = TestServer::start(|request| {
        let echoed = request.header("x-api-key").unwrap_or_default().to_owned();
        match request.last_message().as_str() {
            "401" => anthropic_error(401, "authentication_error", &format!("bad key {echoed}")),
            "400" => anthropic_error(400, "invalid_request_error", &format!("from {echoed}")),
            "stream" => anthropic(
                request,
                &Answer::new("{").ending(Ending::ErrorLine(format!("boom {echoed}"))),
            ),
            _ => Reply::text(200, format!("garbage {echoed}")),
        }
    });
    let llm = client(&server);
    assert_no_key(&format!("{llm:?}"));
    assert_no_key(&format!("{:?}", builder(&server)));
    for prompt in ["401", "400", "garbage"] {
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
    assert_no_key(&format!("{err:?}"));
}

#[tokio::test]
async fn the_key_comes_from_anthropic_api_key_by_default_and_its_absence_is_a_config_error() {
    let missing = Anthropic::builder("m")
        .api_key_env("LLM_EXTRACT_TEST_ANTHROPIC_SURELY_UNSET")
        .env_lookup(|_| None)
        .build()
        .unwrap_err();
    assert!(matches!(missing, LlmError::Config { .. }));
    assert!(missing
        .to_string()
        .contains("LLM_EXTRACT_TEST_ANTHROPIC_SURELY_UNSET"));
}

#[tokio::test]
async fn a_root_that_is_not_an_object_is_sent_wrapped_and_read_unwrapped() {
    // A bare enum of strings is not an object: it goes out as the one property of an object, in the
    // native output format and as a forced tool, and the answer `{"value": X}` is read as X.
    let schema = llm_extract::schema::SchemaSet::new(
        "Mood",
        json!({"type": "string", "enum": ["up", "down"]}),
    );
    let sent = schema.for_dialect(Dialect::Anthropic, Shape::One).unwrap();
    assert_eq!(sent["properties"]["value"]["enum"], json!(["up", "down"]));
    for mode in [Mode::Constrained, Mode::Tool] {
        let server = TestServer::script(vec![answer(
            Answer::new(r#"{"value": "down"}"#).pieces_of(3),
        )]);
        let llm = client(&server);
        let out = Extractor::new(&llm)
            .mode(mode)
            .with_schema(&schema)
            .extract("x")
            .await
            .unwrap();
        assert_eq!(out.value, json!("down"), "{mode:?}");
        assert_eq!(out.report.attempts[0].raw.trim(), r#""down""#, "{mode:?}");
        let body = &server.requests()[0].json;
        let carried = match mode {
            Mode::Tool => &body["tools"][0]["input_schema"],
            _ => &body["output_config"]["format"]["schema"],
        };
        assert_eq!(carried, sent, "{mode:?}: {body}");
    }
}

#[tokio::test]
async fn a_key_echoed_in_a_retried_error_never_reaches_the_logs() {
    // The binary's global log capture (other tests' lines, without the key, may land there too).
    let logs = crate::logs::captured();
    let echo = |status, kind| {
        fixed(
            anthropic_error(status, kind, &format!("slow down, {KEY}"))
                .with_header("retry-after", "0"),
        )
    };
    let server = TestServer::script(vec![
        echo(429, "rate_limit_error"),
        echo(529, "overloaded_error"),
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
async fn partial_values_stream_from_json_text_and_from_tool_input() {
    for mode in [Mode::Constrained, Mode::Tool] {
        let server = TestServer::start(|request| {
            anthropic(request, &Answer::new(common::snapshots::ORDER).pieces_of(3))
        });
        common::snapshots::check_order_partial(&client(&server), mode).await;
        let body = &server.requests()[0].json;
        assert_eq!(body["stream"], true);
        // JSON text under output_config, or the forced tool's input_json_delta pieces.
        assert_eq!(body.get("tools").is_some(), mode == Mode::Tool, "{body}");
    }
}

//! The OpenAI-compatible backend against a local server speaking `/v1/chat/completions` (SSE):
//! request shape, streaming with `[DONE]`, usage, length finish, errors, retries, and an API key that
//! never shows up in `Debug` output or error text.

use crate::support;

use futures_util::StreamExt;
use llm_extract::extract::{ExtractErrorKind, Extractor, Mode};
use llm_extract::llm::{ChatRequest, Llm, LlmError, OpenAiCompatible, RetryPolicy, Secret};
use llm_extract::report::AttemptKind;
use llm_extract::Schema;
use llm_extract::{
    llm::Finish,
    schema::{Dialect, Shape},
    Extract,
};
use serde_json::{json, Value};
use std::time::Duration;
use support::types::{entity, entity_line, Entity, Person};
use support::{fixed, openai, Answer, Ending, Reply, TestServer};

const KEY: &str = "sk-test-0123456789abcdef-SECRET";

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn client(server: &TestServer) -> OpenAiCompatible {
    OpenAiCompatible::builder(server.url(), "test-model")
        .api_key(KEY)
        .request_timeout(ms(3000))
        .idle_timeout(ms(300))
        .retry(
            RetryPolicy::new()
                .max_retries(3)
                .initial_backoff(ms(5))
                .max_backoff(ms(20)),
        )
        .build()
        .unwrap()
}

fn assert_no_key(text: &str) {
    assert!(!text.contains(KEY), "the API key leaked into: {text}");
    assert!(
        !text.contains("0123456789abcdef"),
        "part of the API key leaked into: {text}"
    );
}

#[tokio::test]
async fn one_value_sends_response_format_and_the_bearer_key() {
    let server = TestServer::script(vec![openai(
        Answer::new(r#"{"name": "Ada", "age": 36}"#).usage(21, 9),
    )]);
    let llm = client(&server);
    let out = Extractor::new(&llm)
        .max_tokens(100)
        .extract::<Person>("Ada, 36")
        .await
        .unwrap();
    assert_eq!(out.value.age, 36);
    assert_eq!(out.report.usage.total(), 30);
    let request = &server.requests()[0];
    assert_eq!(request.path, "/v1/chat/completions");
    assert_eq!(
        request.header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    let body = &request.json;
    // Streamed, so the loop guard sees every delta (`LoopGuard::off()` sends `stream: false`).
    assert_eq!(body["stream"], true);
    assert_eq!(body["max_tokens"], 100);
    assert_eq!(
        body["response_format"],
        json!({"type": "json_schema", "json_schema": {
            "name": "Person",
            "schema": Person::schema().for_dialect(Dialect::OpenAiStrict, Shape::One).unwrap(),
            "strict": true
        }})
    );
}

#[tokio::test]
async fn a_root_that_is_not_an_object_is_sent_wrapped_and_read_unwrapped() {
    // A list root: strict mode takes it as the one property of an object; the answers, `{"value": X}`,
    // are read as X, in the value, the ledger and the repair turn alike.
    let schema = llm_extract::schema::SchemaSet::new(
        "Tags",
        json!({"type": "array", "items": {"$ref": "#/$defs/tag"},
               "$defs": {"tag": {"type": "string", "enum": ["red", "blue"]}}}),
    );
    let server = TestServer::script(vec![
        openai(Answer::new(r#"{"value": ["red", "green"]}"#)),
        openai(Answer::new(r#"{ "value" : ["red", "blue"] }"#)),
    ]);
    let llm = client(&server);
    let out = Extractor::new(&llm)
        .with_schema(&schema)
        .extract("red and blue")
        .await
        .unwrap();
    assert_eq!(out.value, json!(["red", "blue"]));
    assert_eq!(out.report.attempts.len(), 2);
    assert_eq!(out.report.attempts[0].raw.trim(), r#"["red", "green"]"#);
    let requests = server.requests();
    let sent = &requests[0].json["response_format"]["json_schema"];
    assert_eq!(sent["strict"], true);
    assert_eq!(sent["schema"]["required"], json!(["value"]));
    assert_eq!(
        sent["schema"]["properties"]["value"]["items"],
        json!({"$ref": "#/$defs/tag"})
    );
    assert_eq!(
        sent["schema"]["$defs"]["tag"]["enum"],
        json!(["red", "blue"])
    );
    let messages = requests[1].json["messages"].as_array().unwrap().clone();
    let echoed = &messages[messages.len() - 2];
    assert_eq!(echoed["role"], "assistant");
    assert_eq!(
        echoed["content"].as_str().unwrap().trim(),
        r#"["red", "green"]"#
    );
    let repair = messages[messages.len() - 1]["content"].as_str().unwrap();
    assert!(
        repair.contains("/1") && !repair.contains("/value"),
        "{repair}"
    );
}

#[tokio::test]
async fn the_snapshots_of_a_wrapped_root_never_show_the_wrapper() {
    use llm_extract::extract::PartialEvent;
    let schema = llm_extract::schema::SchemaSet::new(
        "Names",
        json!({"type": "array", "items": {"type": "string"}}),
    );
    let server = TestServer::script(vec![openai(
        Answer::new(r#"{"value": ["Ada", "Grace"]}"#).pieces_of(4),
    )]);
    let llm = client(&server);
    let extractor = Extractor::new(&llm);
    let mut events = extractor
        .with_schema(&schema)
        .extract_partial("Ada and Grace");
    let (mut snapshots, mut last) = (Vec::new(), None);
    while let Some(event) = events.next().await {
        match event.unwrap() {
            PartialEvent::Snapshot(value) => snapshots.push((*value).clone()),
            PartialEvent::Final { extraction, .. } => last = Some(extraction.value),
            _ => {}
        }
    }
    assert_eq!(last, Some(json!(["Ada", "Grace"])));
    assert!(snapshots.len() > 1, "{snapshots:?}");
    assert!(snapshots.iter().all(Value::is_array), "{snapshots:?}");
}

#[tokio::test]
async fn many_items_stream_as_sse_with_usage() {
    let text = format!(
        "{}\n{}\n",
        entity_line("Ada", "person"),
        entity_line("IBM", "company")
    );
    let server = TestServer::script(vec![openai(Answer::new(text).usage(40, 20))]);
    let llm = client(&server);
    let out = Extractor::new(&llm)
        .mode(Mode::Prompted)
        .extract_all::<Entity>("x")
        .await
        .unwrap();
    assert_eq!(
        out.value,
        [entity("Ada", "person"), entity("IBM", "company")]
    );
    assert_eq!(
        out.report.usage.total(),
        60,
        "usage came from the include_usage chunk"
    );
    let body = &server.requests()[0].json;
    assert_eq!(body["stream"], true);
    assert_eq!(body["stream_options"], json!({"include_usage": true}));
}

#[tokio::test]
async fn a_length_finish_is_continued() {
    let server = TestServer::script(vec![
        openai(Answer::new(format!("{}\n{{\"na", entity_line("Ada", "person"))).cut()),
        openai(Answer::new(format!("{}\n", entity_line("Lyon", "place")))),
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
async fn a_stream_that_ends_without_finish_or_done_is_an_error() {
    let server = TestServer::start(|request| {
        Reply::openai(
            request,
            &Answer::new(r#"{"name": "Ada""#).ending(Ending::Nothing),
        )
    });
    let llm = client(&server);
    let mut stream = llm.chat_stream(ChatRequest::new("hi")).await.unwrap();
    let mut last = None;
    while let Some(event) = stream.next().await {
        last = Some(event);
    }
    let err = last.unwrap().unwrap_err();
    assert!(
        matches!(&err, LlmError::Stream { received, .. } if received == r#"{"name": "Ada""#),
        "{err:?}"
    );
}

#[tokio::test]
async fn a_late_error_event_ends_the_stream() {
    let server = TestServer::start(|request| {
        Reply::openai(
            request,
            &Answer::new(format!("{}\n", entity_line("Ada", "person")))
                .ending(Ending::ErrorLine("upstream overloaded".into())),
        )
    });
    let llm = client(&server);
    let mut stream = Entity::extract_stream(&llm, "x");
    assert_eq!(
        stream.next().await.unwrap().unwrap(),
        entity("Ada", "person")
    );
    let err = stream.next().await.unwrap().unwrap_err();
    assert!(err.to_string().contains("upstream overloaded"), "{err}");
}

#[tokio::test]
async fn a_missing_model_is_model_not_found() {
    let server =
        TestServer::start(|_| Reply::openai_error(404, "The model `test-model` does not exist."));
    let llm = client(&server);
    let err = llm.chat(ChatRequest::new("hi")).await.unwrap_err();
    assert!(matches!(err, LlmError::ModelNotFound { .. }), "{err:?}");
    assert!(err.to_string().contains("/models"), "{err}");
    assert_eq!(server.hits(), 1);
}

#[tokio::test]
async fn a_400_fails_at_once_with_the_servers_message() {
    let server =
        TestServer::start(|_| Reply::openai_error(400, "response_format is not supported"));
    let llm = client(&server);
    let err = Person::extract(&llm, "x").await.unwrap_err();
    let ExtractErrorKind::Llm(LlmError::Http {
        status, message, ..
    }) = err.kind()
    else {
        panic!("{err:?}")
    };
    assert_eq!(
        (*status, message.as_str()),
        (400, "response_format is not supported")
    );
    assert_eq!(server.hits(), 1);
}

#[tokio::test]
async fn a_429_with_retry_after_is_retried() {
    let server = TestServer::script(vec![
        fixed(Reply::openai_error(429, "rate limited").with_header("retry-after", "0")),
        openai(Answer::new(r#"{"name": "Ada", "age": 36}"#)),
    ]);
    let llm = client(&server);
    assert_eq!(Person::extract(&llm, "x").await.unwrap().age, 36);
    assert_eq!(server.hits(), 2);
}

#[tokio::test]
async fn the_api_key_never_appears_in_debug_or_error_text() {
    // A hostile server that echoes the Authorization header back in every error it can produce.
    let server = TestServer::start(|request| {
        let echoed = request
            .header("authorization")
            .unwrap_or_default()
            .to_owned();
        match request.last_message().as_str() {
            "401" => Reply::openai_error(401, &format!("Incorrect API key provided: {echoed}")),
            "400" => Reply::openai_error(400, &format!("bad request from {echoed}")),
            "stream" => Reply::openai(
                request,
                &Answer::new("{").ending(Ending::ErrorLine(format!("boom {echoed}"))),
            ),
            _ => Reply::text(200, format!("garbage {echoed}")),
        }
    });
    let llm = client(&server);
    assert_no_key(&format!("{llm:?}"));
    assert_no_key(&format!("{:?}", Secret::new(KEY)));

    for prompt in ["401", "400", "garbage"] {
        let err = llm.chat(ChatRequest::new(prompt)).await.unwrap_err();
        assert_no_key(&err.to_string());
        assert_no_key(&format!("{err:?}"));
        let err = Person::extract(&llm, prompt).await.unwrap_err();
        assert_no_key(&err.to_string());
        assert_no_key(&format!("{err:?}"));
    }
    let err = llm.chat(ChatRequest::new("401")).await.unwrap_err();
    assert!(matches!(err, LlmError::Auth { status: 401, .. }), "{err:?}");

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
async fn a_key_echoed_in_a_retried_error_never_reaches_the_logs() {
    // The binary's global log capture (other tests' lines, without the key, may land there too).
    let logs = crate::logs::captured();
    // Transient failures whose bodies echo the key, then an answer: each failure is logged at WARN.
    let echo = |status| {
        fixed(
            Reply::openai_error(status, &format!("slow down, {KEY}"))
                .with_header("retry-after", "0"),
        )
    };
    let server = TestServer::script(vec![
        echo(429),
        echo(503),
        openai(Answer::new(r#"{"name": "Ada", "age": 36}"#)),
    ]);
    let llm = client(&server);
    assert_eq!(Person::extract(&llm, "x").await.unwrap().age, 36);
    assert_eq!(server.hits(), 3);
    let logged = logs.text();
    assert!(
        logged.matches("retrying").count() >= 2 && logged.contains("slow down"),
        "each retry is logged with the server's message: {logged}"
    );
    assert_no_key(&logged);
}

#[tokio::test]
async fn credentials_in_the_base_url_never_appear_in_debug_hints_or_errors() {
    const PASSWORD: &str = "hunter2-PASSWORD";
    let server = TestServer::start(|request| match request.last_message().as_str() {
        "model" => Reply::openai_error(404, "The model `test-model` does not exist."),
        _ => Reply::openai_error(404, "no such route"),
    });
    let base = server
        .url()
        .replace("http://", &format!("http://user:{PASSWORD}@"));
    let builder = OpenAiCompatible::builder(format!("{base}/v1"), "test-model").api_key(KEY);
    let shown = format!("{builder:?}");
    assert!(shown.contains("user:[redacted]@"), "{shown}");
    let llm = builder.build().unwrap();
    let mut texts = vec![shown, format!("{llm:?}")];
    for prompt in ["model", "route"] {
        let err = llm.chat(ChatRequest::new(prompt)).await.unwrap_err();
        texts.push(err.to_string());
        texts.push(format!("{err:?}"));
    }
    assert!(texts[2].contains("/models"), "{}", texts[2]);
    assert!(texts[4].contains("user:[redacted]@"), "{}", texts[4]);
    let err = OpenAiCompatible::new(
        format!("ftp://user:{PASSWORD}@host/v1?api_key=k-{PASSWORD}"),
        "m",
    )
    .unwrap_err();
    texts.push(err.to_string());
    for text in texts {
        assert!(!text.contains(PASSWORD), "the password leaked into: {text}");
        assert_no_key(&text);
    }
}

#[tokio::test]
async fn the_key_can_come_from_an_environment_variable() {
    let server = TestServer::script(vec![openai(Answer::new(r#"{"name": "Ada", "age": 36}"#))]);
    // The environment the builder reads, given to it: no test changes the process's environment.
    let env = |name: &str| (name == "LLM_EXTRACT_TEST_RUNTIME_OPENAI_KEY").then(|| KEY.to_owned());
    let llm = OpenAiCompatible::builder(server.url(), "m")
        .api_key_env("LLM_EXTRACT_TEST_RUNTIME_OPENAI_KEY")
        .env_lookup(env)
        .build()
        .unwrap();
    Person::extract(&llm, "x").await.unwrap();
    assert_eq!(
        server.requests()[0].header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    let missing = OpenAiCompatible::builder(server.url(), "m")
        .api_key_env("LLM_EXTRACT_TEST_RUNTIME_SURELY_UNSET")
        .env_lookup(env)
        .build()
        .unwrap_err();
    assert!(matches!(missing, LlmError::Config { .. }));
    assert!(missing
        .to_string()
        .contains("LLM_EXTRACT_TEST_RUNTIME_SURELY_UNSET"));
}

#[tokio::test]
async fn no_key_means_no_authorization_header() {
    let server = TestServer::script(vec![openai(Answer::new(r#"{"name": "Ada", "age": 36}"#))]);
    let llm = OpenAiCompatible::new(format!("{}/v1", server.url()), "m").unwrap();
    Person::extract(&llm, "x").await.unwrap();
    assert_eq!(server.requests()[0].header("authorization"), None);
}

#[tokio::test]
async fn tool_mode_sends_one_forced_function_and_streams_its_arguments_into_items() {
    let text = serde_json::json!({"items": [{"name": "Ada", "kind": "person"}, {"name": "IBM", "kind": "company"}]})
        .to_string();
    let server = TestServer::start(move |request| {
        support::providers::openai_tool(request, &Answer::new(text.clone()).pieces_of(3))
    });
    let llm = client(&server);
    let extractor = Extractor::new(&llm).mode(Mode::Tool);
    let mut stream = extractor.extract_stream::<Entity>("x");
    let mut items = Vec::new();
    while let Some(item) = stream.next().await {
        items.push(item.unwrap());
    }
    assert_eq!(items, [entity("Ada", "person"), entity("IBM", "company")]);
    let body = &server.requests()[0].json;
    assert!(body.get("response_format").is_none());
    let function = &body["tools"][0]["function"];
    assert_eq!(function["name"], "Entity");
    assert_eq!(function["strict"], true);
    assert_eq!(
        function["parameters"],
        *Entity::schema()
            .for_dialect(Dialect::OpenAiStrict, Shape::List)
            .unwrap()
    );
    assert_eq!(
        body["tool_choice"],
        json!({"type": "function", "function": {"name": "Entity"}})
    );
}

#[tokio::test]
async fn tool_mode_reads_a_text_answer_from_a_server_that_ignores_tools() {
    let server = TestServer::script(vec![openai(Answer::new(
        r#"Here it is: {"name": "Ada", "age": 36}"#,
    ))]);
    let llm = client(&server);
    let out = Extractor::new(&llm)
        .mode(Mode::Tool)
        .extract::<Person>("x")
        .await
        .unwrap();
    assert_eq!(out.value.age, 36);
    assert!(server.requests()[0].json.get("tools").is_some());
}

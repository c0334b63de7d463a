//! The Ollama backend against a local server speaking `/api/chat` (NDJSON): success streamed and not,
//! fixes, truncation, error statuses, retries, broken streams, timeouts, body limits, concurrency,
//! credentials in the host (refused over plain http to another machine, redacted where the examples
//! show the host).

use crate::support;

// The examples' choice of backend, for the line it prints about the server.
#[allow(dead_code)]
#[path = "../../examples/support/backend.rs"]
mod example_backend;

use futures_util::StreamExt;
use llm_extract::extract::{ExtractErrorKind, Extractor, Mode};
use llm_extract::llm::{ChatRequest, Llm, LlmError, Ollama, TimeoutPhase};
use llm_extract::report::AttemptKind;
use llm_extract::Schema;
use llm_extract::{
    llm::Finish,
    schema::{Dialect, Shape},
    Extract,
};
use serde_json::json;
use std::time::{Duration, Instant};
use support::clock::{fast_retry, ms};
use support::types::{entity, entity_line, Entity, Person};
use support::{fixed, ollama, wire, Answer, Ending, Reply, Step, TestServer};

/// A client with short limits; `idle` is the idle timeout.
fn client_with_idle(server: &TestServer, idle: Duration) -> Ollama {
    Ollama::builder("test-model")
        .host(server.url())
        .connect_timeout(ms(1000))
        .request_timeout(ms(5000))
        .idle_timeout(idle)
        .retry(fast_retry())
        .build()
        .unwrap()
}

fn client(server: &TestServer) -> Ollama {
    client_with_idle(server, ms(2000))
}

fn lines(entities: &[(&str, &str)]) -> String {
    entities
        .iter()
        .map(|(name, kind)| format!("{}\n", entity_line(name, kind)))
        .collect()
}

#[tokio::test]
async fn one_value_sends_the_ollama_request_shape() {
    let server = TestServer::script(vec![ollama(
        Answer::new(r#"{"name": "Ada Lovelace", "age": 36}"#).usage(34, 12),
    )]);
    let llm = client(&server);
    let out = Extractor::new(&llm)
        .temperature(0.0)
        .seed(7)
        .extract::<Person>("Ada Lovelace, 36.")
        .await
        .unwrap();
    assert_eq!(out.value.name, "Ada Lovelace");
    assert_eq!(
        (
            out.report.usage.prompt_tokens,
            out.report.usage.completion_tokens
        ),
        (34, 12)
    );

    let request = &server.requests()[0];
    assert_eq!(
        (request.method.as_str(), request.path.as_str()),
        ("POST", "/api/chat")
    );
    let body = &request.json;
    assert_eq!(body["model"], "test-model");
    // Streamed, so the loop guard sees every delta (`LoopGuard::off()` sends `stream: false`).
    assert_eq!(body["stream"], true);
    assert_eq!(
        &body["format"],
        Person::schema()
            .for_dialect(Dialect::Gbnf, Shape::One)
            .unwrap()
    );
    assert!(
        body["options"]["num_predict"].as_u64().is_some(),
        "num_predict is always sent"
    );
    assert_eq!(body["options"]["temperature"], json!(0.0));
    assert_eq!(body["options"]["seed"], json!(7));
    assert_eq!(body["messages"][0]["role"], "system");
    assert_eq!(
        body["messages"][1],
        json!({"role": "user", "content": "Ada Lovelace, 36."})
    );
}

#[tokio::test]
async fn many_items_stream_as_ndjson() {
    let server = TestServer::script(vec![ollama(
        Answer::new(lines(&[("Ada", "person"), ("IBM", "company")])).usage(20, 30),
    )]);
    let llm = client(&server);
    let out = Extractor::new(&llm)
        .mode(Mode::Prompted)
        .max_tokens(64)
        .extract_all::<Entity>("x")
        .await
        .unwrap();
    assert_eq!(
        out.value,
        [entity("Ada", "person"), entity("IBM", "company")]
    );
    assert_eq!(out.report.usage.total(), 50);
    let body = &server.requests()[0].json;
    assert_eq!(body["stream"], true);
    assert_eq!(body["options"]["num_predict"], 64);
    assert!(
        body.get("format").is_none(),
        "prompted mode sends no format"
    );
}

#[tokio::test]
async fn constrained_lists_send_the_list_schema_and_decode_elements_as_they_stream() {
    let list =
        json!({"items": [{"name": "Ada", "kind": "person"}, {"name": "Lyon", "kind": "place"}]});
    let server = TestServer::script(vec![ollama(Answer::new(list.to_string()).pieces_of(3))]);
    let llm = client(&server);
    let mut stream = Entity::extract_stream(&llm, "x");
    let mut got = Vec::new();
    while let Some(item) = stream.next().await {
        got.push(item.unwrap());
    }
    assert_eq!(got, [entity("Ada", "person"), entity("Lyon", "place")]);
    assert_eq!(
        &server.requests()[0].json["format"],
        Entity::schema()
            .for_dialect(Dialect::Gbnf, Shape::List)
            .unwrap()
    );
}

#[tokio::test]
async fn fenced_and_malformed_answers_are_repaired_by_the_loop() {
    let server = TestServer::script(vec![
        ollama(Answer::new(
            "```json\n{'name': 'Ada', 'age': 'unknown',}\n```",
        )),
        ollama(Answer::new("```json\n{'name': 'Ada', 'age': 36,}\n```")),
    ]);
    let llm = client(&server);
    let out = Extractor::new(&llm).extract::<Person>("x").await.unwrap();
    assert_eq!(
        out.value,
        Person {
            name: "Ada".into(),
            age: 36
        }
    );
    assert_eq!(out.report.attempts.len(), 2);
    assert!(!out.report.fixes.is_empty());
    let messages = server.requests()[1].messages();
    assert_eq!(messages.len(), 4, "system, user, bad answer, repair");
    assert_eq!(messages[2].0, "assistant");
    assert!(
        messages[3].1.contains("schema problem at /age"),
        "{}",
        messages[3].1
    );
}

#[tokio::test]
async fn an_answer_that_never_validates_fails_after_the_cap_with_summed_usage() {
    let server =
        TestServer::start(|request| Reply::ollama(request, &Answer::new("no idea").usage(100, 7)));
    let llm = client(&server);
    let err = Person::extract(&llm, "x").await.unwrap_err();
    assert!(matches!(err.kind(), ExtractErrorKind::Invalid(_)));
    assert_eq!(err.attempts().len(), 3);
    assert_eq!(server.hits(), 3);
    assert_eq!(err.usage().prompt_tokens, 300);
    assert_eq!(err.usage().completion_tokens, 21);
    assert!(err.attempts().iter().all(|a| a.raw == "no idea"));
}

#[tokio::test]
async fn truncated_json_lines_are_continued() {
    let server = TestServer::script(vec![
        ollama(Answer::new(format!("{}{{\"name\": \"Ly", lines(&[("Ada", "person")]))).cut()),
        ollama(Answer::new(lines(&[("Ada", "person"), ("Lyon", "place")]))),
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
    let continuation = server.requests()[1].messages();
    assert_eq!(
        continuation[2],
        ("assistant".to_owned(), entity_line("Ada", "person"))
    );
}

#[tokio::test]
async fn a_stream_without_done_is_treated_as_cut_off() {
    let server = TestServer::script(vec![
        ollama(Answer::new(lines(&[("Ada", "person")])).ending(Ending::Nothing)),
        ollama(Answer::new(lines(&[("IBM", "company")]))),
    ]);
    let llm = client(&server);
    let out = Extractor::new(&llm)
        .mode(Mode::Prompted)
        .extract_all::<Entity>("x")
        .await
        .unwrap();
    assert_eq!(out.report.attempts[0].finish, Some(Finish::Length));
    assert_eq!(out.value.len(), 2);
}

#[tokio::test]
async fn a_missing_model_says_how_to_pull_it_and_is_not_retried() {
    let server = TestServer::start(|_| {
        Reply::ollama_error(404, "model 'test-model' not found, try pulling it first")
    });
    let llm = client(&server);
    let err = llm.chat(ChatRequest::new("hi")).await.unwrap_err();
    match &err {
        LlmError::ModelNotFound { model, .. } => assert_eq!(model, "test-model"),
        other => panic!("not ModelNotFound: {other:?}"),
    }
    assert!(err.to_string().contains("ollama pull test-model"), "{err}");
    assert_eq!(server.hits(), 1);

    let err = Person::extract(&llm, "x").await.unwrap_err();
    assert!(matches!(
        err.kind(),
        ExtractErrorKind::Llm(LlmError::ModelNotFound { .. })
    ));
    assert_eq!(err.attempts().len(), 1);
}

#[tokio::test]
async fn a_400_fails_at_once_with_the_servers_message() {
    let server = TestServer::start(|_| Reply::ollama_error(400, "invalid format: bad schema"));
    let llm = client(&server);
    let err = llm.chat_stream(ChatRequest::new("hi")).await.err().unwrap();
    assert!(
        matches!(&err, LlmError::Http { status: 400, message, .. } if message == "invalid format: bad schema"),
        "{err:?}"
    );
    assert!(!err.is_transient());
    assert_eq!(server.hits(), 1);
}

#[tokio::test]
async fn a_500_is_retried_then_fails_with_the_servers_message() {
    let server =
        TestServer::start(|_| Reply::ollama_error(500, "llama runner process has terminated"));
    let llm = client(&server);
    let err = llm.chat_stream(ChatRequest::new("hi")).await.err().unwrap();
    assert!(
        matches!(&err, LlmError::Http { status: 500, message, .. } if message == "llama runner process has terminated"),
        "{err:?}"
    );
    assert_eq!(server.hits(), 4, "sent again under the retry policy");
}

#[tokio::test]
async fn a_503_is_retried_then_succeeds() {
    let server = TestServer::script(vec![
        fixed(Reply::ollama_error(503, "server busy, please try again")),
        fixed(Reply::ollama_error(503, "server busy, please try again")),
        ollama(Answer::new(r#"{"name": "Ada", "age": 36}"#)),
    ]);
    let llm = client(&server);
    let person = Person::extract(&llm, "x").await.unwrap();
    assert_eq!(person.age, 36);
    assert_eq!(server.hits(), 3);
}

#[tokio::test]
async fn retries_are_capped() {
    let server = TestServer::start(|_| Reply::ollama_error(503, "busy"));
    let llm = Ollama::builder("m")
        .host(server.url())
        .retry(fast_retry().max_retries(2))
        .build()
        .unwrap();
    let err = llm.chat(ChatRequest::new("hi")).await.unwrap_err();
    assert!(matches!(err, LlmError::Http { status: 503, .. }));
    assert_eq!(server.hits(), 3);
}

#[tokio::test]
async fn a_garbage_body_is_an_invalid_response_quoting_it() {
    let server = TestServer::start(|request| {
        if request.wants_stream() {
            Reply::Chunked {
                status: 200,
                content_type: "application/x-ndjson".into(),
                steps: vec![support::Step::Send(b"<html>Bad gateway</html>\n".to_vec())],
            }
        } else {
            Reply::text(200, "<html>Bad gateway</html>")
        }
    });
    let llm = client(&server);
    let err = llm.chat(ChatRequest::new("hi")).await.unwrap_err();
    assert!(
        matches!(&err, LlmError::InvalidResponse { body, .. } if body.contains("Bad gateway")),
        "{err:?}"
    );
    let mut stream = llm.chat_stream(ChatRequest::new("hi")).await.unwrap();
    let err = stream.next().await.unwrap().unwrap_err();
    assert!(matches!(err, LlmError::InvalidResponse { .. }), "{err:?}");
}

#[tokio::test]
async fn a_mid_stream_error_line_ends_the_stream_after_the_items_already_decoded() {
    let server = TestServer::start(|request| {
        Reply::ollama(
            request,
            &Answer::new(lines(&[("Ada", "person"), ("IBM", "company")]))
                .ending(Ending::ErrorLine("model runner crashed".into())),
        )
    });
    let llm = client(&server);
    let mut stream = Entity::extract_stream(&llm, "x");
    assert_eq!(
        stream.next().await.unwrap().unwrap(),
        entity("Ada", "person")
    );
    assert_eq!(
        stream.next().await.unwrap().unwrap(),
        entity("IBM", "company")
    );
    let err = stream.next().await.unwrap().unwrap_err();
    assert!(err.to_string().contains("model runner crashed"), "{err}");
    assert!(matches!(
        err.kind(),
        ExtractErrorKind::Llm(LlmError::Stream { .. })
    ));
    assert!(stream.next().await.is_none());
}

#[tokio::test]
async fn a_connection_dropped_mid_stream_keeps_the_items_and_says_so() {
    let server = TestServer::start(|request| {
        Reply::ollama(
            request,
            &Answer::new(format!("{}{{\"name\": \"IB", lines(&[("Ada", "person")])))
                .ending(Ending::Drop),
        )
    });
    let llm = client(&server);
    let err = Extractor::new(&llm)
        .mode(Mode::Prompted)
        .extract_all::<Entity>("x")
        .await
        .unwrap_err();
    let ExtractErrorKind::Llm(LlmError::Stream { message, received }) = err.kind() else {
        panic!("not a stream error: {err:?}")
    };
    assert!(message.contains("connection broke"), "{message}");
    assert!(
        received.contains("\"IB"),
        "the text received is kept: {received}"
    );
    assert_eq!(
        err.kept(),
        [entity("Ada", "person")],
        "the items kept, typed"
    );
    assert!(err.to_string().contains("1 item(s) kept"), "{err}");
    assert_eq!(
        server.hits(),
        4,
        "a broken stream is sent again under the retry policy (three retries), then reported"
    );
}

#[tokio::test]
async fn a_stalled_server_trips_the_idle_timeout() {
    let server = TestServer::start(|request| {
        Reply::ollama(
            request,
            &Answer::new(lines(&[("Ada", "person")])).ending(Ending::Stall),
        )
    });
    let llm = client_with_idle(&server, ms(300));
    let mut stream = Entity::extract_stream(&llm, "x");
    assert_eq!(
        stream.next().await.unwrap().unwrap(),
        entity("Ada", "person")
    );
    let err = stream.next().await.unwrap().unwrap_err();
    assert!(
        matches!(
            err.kind(),
            ExtractErrorKind::Llm(LlmError::Timeout {
                phase: TimeoutPhase::Idle,
                ..
            })
        ),
        "{err:?}"
    );
    // The server is still stalling (it never ends the body): only the idle timer can have ended it.
    assert!(stream.next().await.is_none());
}

#[tokio::test]
async fn a_slow_trickle_within_the_idle_limit_succeeds() {
    // 12 pieces, 60 ms apart: longer in total than the 400 ms idle timeout, never idle that long.
    let text = lines(&[("Ada", "person"), ("IBM", "company")]);
    let pieces = text.chars().count().div_ceil(12);
    let server = TestServer::start(move |request| {
        Reply::ollama(
            request,
            &Answer::new(text.clone()).pieces_of(pieces).delay(ms(60)),
        )
    });
    let llm = client_with_idle(&server, ms(400));
    let started = Instant::now();
    let out = Extractor::new(&llm)
        .mode(Mode::Prompted)
        .extract_all::<Entity>("x")
        .await
        .unwrap();
    assert!(started.elapsed() > ms(400));
    assert_eq!(out.value.len(), 2);
}

#[tokio::test]
async fn a_server_slow_to_answer_trips_the_response_timeout_and_is_retried() {
    // Only the first request is slow (3 s); the client gives up after 500 ms and sends it again.
    let server = TestServer::start(|request| {
        let answer = Reply::ollama(request, &Answer::new(r#"{"name": "Ada", "age": 36}"#));
        if request.json["messages"].is_array()
            && FIRST.swap(false, std::sync::atomic::Ordering::SeqCst)
        {
            answer.after(Duration::from_secs(3))
        } else {
            answer
        }
    });
    static FIRST: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(true);
    let llm = Ollama::builder("m")
        .host(server.url())
        .request_timeout(ms(500))
        .retry(fast_retry())
        .build()
        .unwrap();
    let person = Person::extract(&llm, "x").await.unwrap();
    assert_eq!(person.age, 36);
    assert_eq!(server.hits(), 2);
}

#[tokio::test]
async fn oversized_bodies_are_bounded_with_a_clear_error() {
    let big = "x".repeat(64 * 1024);
    let server = TestServer::start(move |request| {
        if request.wants_stream() {
            Reply::ollama(request, &Answer::new(big.clone()).pieces_of(1024))
        } else {
            Reply::text(200, big.clone())
        }
    });
    let llm = Ollama::builder("m")
        .host(server.url())
        .max_body_bytes(8 * 1024)
        .build()
        .unwrap();
    let err = llm.chat(ChatRequest::new("hi")).await.unwrap_err();
    assert!(
        matches!(err, LlmError::BodyTooLarge { limit: 8192 }),
        "{err:?}"
    );
    assert!(err.to_string().contains("max_body_bytes"));
    let mut stream = llm.chat_stream(ChatRequest::new("hi")).await.unwrap();
    let mut last = None;
    while let Some(event) = stream.next().await {
        last = Some(event);
    }
    assert!(
        matches!(last, Some(Err(LlmError::BodyTooLarge { .. }))),
        "{last:?}"
    );
}

#[tokio::test]
async fn thinking_is_kept_apart_from_the_answer() {
    let server = TestServer::start(|request| {
        Reply::ollama(
            request,
            &Answer::new(r#"{"name": "Ada", "age": 36}"#).thinking("Let me see... Ada is 36."),
        )
    });
    let llm = client(&server);
    let response = llm.chat(ChatRequest::new("hi")).await.unwrap();
    assert_eq!(
        response.thinking.as_deref(),
        Some("Let me see... Ada is 36.")
    );
    assert!(!response.text.contains("Let me see"));
    let mut stream = llm.chat_stream(ChatRequest::new("hi")).await.unwrap();
    let mut thinking = String::new();
    let mut text = String::new();
    while let Some(event) = stream.next().await {
        match event.unwrap() {
            llm_extract::llm::ChatEvent::Thinking(t) => thinking.push_str(&t),
            llm_extract::llm::ChatEvent::Delta(d) => text.push_str(&d),
            _ => {}
        }
    }
    assert_eq!(thinking, "Let me see... Ada is 36.");
    assert_eq!(text, r#"{"name": "Ada", "age": 36}"#);
}

#[tokio::test]
async fn version_and_show_answer_capability_checks() {
    let server = TestServer::start(|request| match request.path.as_str() {
        "/api/version" => Reply::json(200, json!({"version": "0.6.2"})),
        "/api/show" if request.json["model"] == "test-model" => Reply::json(
            200,
            json!({"capabilities": ["completion", "thinking"],
                   "details": {"family": "qwen3", "parameter_size": "4B"},
                   "model_info": {"qwen3.context_length": 40960}}),
        ),
        _ => Reply::ollama_error(404, "model 'other' not found"),
    });
    let llm = client(&server);
    assert_eq!(llm.version().await.unwrap(), "0.6.2");
    let info = llm.show().await.unwrap();
    assert!(info.has("thinking"));
    assert_eq!(info.context_length, Some(40960));
    let other = Ollama::builder("other").host(server.url()).build().unwrap();
    assert!(matches!(
        other.show().await,
        Err(LlmError::ModelNotFound { .. })
    ));
}

#[tokio::test]
async fn an_unreachable_server_says_how_to_start_one() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let llm = Ollama::builder("m")
        .host(format!("127.0.0.1:{port}"))
        .retry(fast_retry().max_retries(1))
        .build()
        .unwrap();
    let err = llm.chat(ChatRequest::new("hi")).await.unwrap_err();
    assert!(matches!(err, LlmError::Connect { .. }), "{err:?}");
    assert!(err.to_string().contains("ollama serve"), "{err}");
}

#[tokio::test]
async fn ollama_host_is_honoured() {
    let server = TestServer::script(vec![ollama(Answer::new(r#"{"name": "Ada", "age": 36}"#))]);
    let port = server.url().rsplit(':').next().unwrap().to_owned();
    // The environment the builder reads, given to it: no test changes the process's environment.
    let host = format!("127.0.0.1:{port}");
    let llm = Ollama::builder("test-model")
        .env_lookup(move |name| (name == "OLLAMA_HOST").then(|| host.clone()))
        .build()
        .unwrap();
    assert_eq!(llm.host(), server.url());
    assert_eq!(Person::extract(&llm, "x").await.unwrap().age, 36);
}

#[test]
fn credentials_in_the_host_go_over_plain_http_only_to_this_machine() {
    // Nothing listens there and nothing is sent: the build refuses (a connection would fail otherwise).
    for host in [
        "http://user:pw-0123@ollama.invalid:11434",
        "user:pw-0123@ollama.invalid",
        "http://token-0123@ollama.invalid",
        "http://user:pw-0123@node1.localhost:11434",
    ] {
        let err = Ollama::builder("m").host(host).build().unwrap_err();
        assert!(
            matches!(err, LlmError::InsecureKey { .. }),
            "{host}: {err:?}"
        );
        assert!(!err.to_string().contains("0123"), "{err}");
        // The same host read from OLLAMA_HOST.
        let from_env = Ollama::builder("m")
            .env_lookup(move |name| (name == "OLLAMA_HOST").then(|| host.to_owned()))
            .build()
            .unwrap_err();
        assert!(
            matches!(from_env, LlmError::InsecureKey { .. }),
            "{from_env:?}"
        );
        let allowed = Ollama::builder("m")
            .host(host)
            .allow_insecure_key(true)
            .build();
        assert!(allowed.is_ok(), "{host}: {allowed:?}");
    }
    for fine in [
        "http://user:pw@127.0.0.1:11434",
        "https://user:pw@ollama.invalid",
        "http://ollama.invalid:11434",
    ] {
        let llm = Ollama::builder("m").host(fine).build();
        assert!(llm.is_ok(), "{fine}: {llm:?}");
    }
}

#[test]
fn the_examples_show_the_host_without_its_credentials() {
    let llm = Ollama::builder("test-model")
        .host("http://user:pw-0123@127.0.0.1:9")
        .build()
        .unwrap();
    let banner = example_backend::ollama_banner(&llm);
    assert!(banner.contains("user:[redacted]@127.0.0.1:9"), "{banner}");
    assert!(!banner.contains("pw-0123"), "{banner}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sixty_four_concurrent_extractions_complete() {
    let server = TestServer::start(|request| {
        // Echo a person whose age is the length of the user's text, so each answer is checkable.
        let text = request.last_message();
        let answer = json!({"name": format!("P{}", text.len()), "age": text.len() % 100});
        Reply::ollama(request, &Answer::new(answer.to_string()).pieces_of(5))
    });
    let llm = client(&server);
    let tasks: Vec<_> = (0..64)
        .map(|i| {
            let llm = llm.clone();
            tokio::spawn(async move {
                let text = "x".repeat(i + 1);
                let person = Person::extract(&llm, &text).await.unwrap();
                assert_eq!(person.age as usize, (i + 1) % 100);
                person
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
    assert_eq!(server.hits(), 64);
}

#[tokio::test]
async fn items_arrive_over_http_while_the_answer_is_still_being_generated() {
    // The second item is generated only once the client holds the first one.
    let (go, wait) = std::sync::mpsc::channel::<()>();
    let wait = std::sync::Mutex::new(Some(wait));
    let server = TestServer::start(move |_request| {
        let (steps, reply) = Reply::live(wire::NDJSON);
        let wait = wait.lock().unwrap().take().expect("one request");
        std::thread::spawn(move || {
            let line =
                |name, kind| wire::ollama_delta("m", &format!("{}\n", entity_line(name, kind)));
            steps.send(Step::Send(line("Ada", "person"))).unwrap();
            wait.recv().unwrap();
            steps.send(Step::Send(line("IBM", "company"))).unwrap();
            steps
                .send(Step::Send(wire::ollama_done("m", "stop", 3, 4)))
                .unwrap();
        });
        reply
    });
    let llm = client(&server);
    let extractor = Extractor::new(&llm);
    let mut stream = extractor.extract_stream::<Entity>("x");
    assert_eq!(
        stream.next().await.unwrap().unwrap(),
        entity("Ada", "person")
    );
    go.send(()).unwrap();
    assert_eq!(
        stream.next().await.unwrap().unwrap(),
        entity("IBM", "company")
    );
    assert!(stream.next().await.is_none());
    assert_eq!(stream.report().unwrap().usage.total(), 7);
}

#[tokio::test]
async fn credentials_in_the_host_go_as_basic_authentication_and_never_into_messages() {
    let server = TestServer::script(vec![
        ollama(Answer::new(r#"{"name": "Ada Lovelace", "age": 36}"#)),
        fixed(Reply::ollama_error(404, "model not found")),
    ]);
    let host = server
        .url()
        .replace("http://", "http://proxy-user:s3cret-pw@");
    let llm = Ollama::builder("test-model")
        .host(host)
        .retry(fast_retry())
        .build()
        .unwrap();
    assert!(!format!("{llm:?}").contains("s3cret-pw"), "{llm:?}");
    let out = Extractor::new(&llm)
        .extract::<Person>("Ada Lovelace, 36.")
        .await
        .unwrap();
    assert_eq!(out.value.name, "Ada Lovelace");
    // base64("proxy-user:s3cret-pw")
    assert_eq!(
        server.requests()[0].header("authorization"),
        Some("Basic cHJveHktdXNlcjpzM2NyZXQtcHc=")
    );
    let err = Extractor::new(&llm)
        .extract::<Person>("Ada Lovelace, 36.")
        .await
        .unwrap_err();
    assert!(!err.to_string().contains("s3cret-pw"), "{err}");
}

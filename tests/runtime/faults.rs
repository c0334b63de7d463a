//! A broken stream is a transient failure, on every HTTP backend: an answer whose connection closes
//! midway, that ends before the server finished, or whose body is not the stream the request asked
//! for is sent again under the backend's retry policy; what the broken answer cost stays in the
//! ledger, and items a list already handed on are not handed on twice. Also: `Retry-After` as an HTTP
//! date, keys scrubbed from the server's text before it is cut, and the one rule every backend applies
//! to an error status.

use crate::support;

use futures_util::StreamExt;
use llm_extract::extract::LoopGuard;
use llm_extract::extract::{ExtractError, ExtractErrorKind, Extractor, Mode, PartialEvent};
use llm_extract::llm::{
    from_stream_fn, Anthropic, ChatEvent, ChatRequest, ChatResponse, ChatStream, Gemini, Llm,
    LlmError, Ollama, OpenAiCompatible, RetryPolicy, Usage,
};
use llm_extract::report::{AttemptError, AttemptKind, Report};
use llm_extract::{Extract, Extraction};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use support::clock::{fast_retry, http_date, ms};
use support::providers::{anthropic, anthropic_error, gemini, gemini_error};
use support::types::{entity, entity_line, Entity, Person};
use support::{fixed, Answer, Ending, Reply, Request, Scripted, TestServer};

const KEY: &str = "sk-test-0123456789abcdef-SECRET";

/// The four wire formats, each with a backend pointed at `server`.
#[derive(Debug, Clone, Copy)]
enum Wire {
    OpenAi,
    Anthropic,
    Gemini,
    Ollama,
}

const WIRES: [Wire; 4] = [Wire::OpenAi, Wire::Anthropic, Wire::Gemini, Wire::Ollama];

impl Wire {
    fn reply(self, request: &Request, answer: &Answer) -> Reply {
        match self {
            Wire::OpenAi => Reply::openai(request, answer),
            Wire::Anthropic => anthropic(request, answer),
            Wire::Gemini => gemini(request, answer),
            Wire::Ollama => Reply::ollama(request, answer),
        }
    }

    fn scripted(self, answer: Answer) -> Scripted {
        Box::new(move |request| self.reply(request, &answer))
    }

    fn backend(self, server: &TestServer) -> Box<dyn Llm> {
        // The builders share no trait; each gets the same limits.
        macro_rules! with_limits {
            ($builder:expr) => {
                Box::new(
                    $builder
                        .idle_timeout(ms(300))
                        .retry(fast_retry())
                        .build()
                        .unwrap(),
                )
            };
        }
        match self {
            Wire::OpenAi => with_limits!(OpenAiCompatible::builder(server.url(), "m").api_key(KEY)),
            Wire::Anthropic => {
                with_limits!(Anthropic::builder("m").base_url(server.url()).api_key(KEY))
            }
            Wire::Gemini => with_limits!(Gemini::builder("m").base_url(server.url()).api_key(KEY)),
            Wire::Ollama => with_limits!(Ollama::builder("m").host(server.url())),
        }
    }

    /// An error status with `message`, in the body this wire's servers send.
    fn error(self, status: u16, message: &str) -> Reply {
        match self {
            Wire::OpenAi => Reply::openai_error(status, message),
            Wire::Anthropic => anthropic_error(status, "error", message),
            Wire::Gemini => gemini_error(status, "ERROR", message),
            Wire::Ollama => Reply::ollama_error(status, message),
        }
    }
}

const ADA: &str = r#"{"name": "Ada", "age": 36}"#;

/// The first attempt of `report` broke (a backend error, text received) and the second one is the
/// answer.
fn assert_broken_then_answered(report: &Report, wire: Wire) {
    assert_eq!(report.attempts.len(), 2, "{wire:?}: {:#?}", report.attempts);
    let broken = &report.attempts[0];
    assert!(
        matches!(broken.error, Some(AttemptError::Llm(ref e)) if e.is_transient()),
        "{wire:?}: {:?}",
        broken.error
    );
    assert_eq!(broken.kind, AttemptKind::First);
    assert!(
        broken.usage.completion_tokens > 0,
        "{wire:?}: the broken answer cost nothing"
    );
    assert!(report.usage.total() > report.attempts[1].usage.total());
    assert!(report.attempts[1].error.is_none(), "{wire:?}");
}

/// A [`Person`] extracted over `wire` from a server whose first answer is `broken` and whose second is
/// [`ADA`] whole; the extraction, and the server.
async fn answered_after(wire: Wire, broken: Answer) -> (Extraction<Person>, TestServer) {
    let ending = broken.ending.clone();
    let server = TestServer::script(vec![wire.scripted(broken), wire.scripted(Answer::new(ADA))]);
    let llm = wire.backend(&server);
    let out = Extractor::new(&*llm)
        .extract::<Person>("Ada, 36")
        .await
        .unwrap_or_else(|e| panic!("{wire:?} {ending:?}: {e}"));
    (out, server)
}

/// What extracting a [`Person`] over `wire` from `server` fails with, after at most `attempts`
/// attempts.
async fn failure(wire: Wire, server: &TestServer, attempts: u32) -> ExtractError {
    let llm = wire.backend(server);
    Extractor::new(&*llm)
        .max_attempts(attempts)
        .extract::<Person>("x")
        .await
        .unwrap_err()
}

/// What an error status means, the same on every backend.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Meaning {
    /// [`LlmError::Auth`] with this status.
    Auth,
    /// [`LlmError::ModelNotFound`].
    NoModel,
    /// [`LlmError::Http`], retried.
    Transient,
    /// [`LlmError::Http`], not retried.
    Refused,
}

#[tokio::test]
async fn every_backend_gives_an_error_status_the_same_meaning() {
    let cases = [
        (400, "max_tokens: must be positive", Meaning::Refused),
        (401, "invalid key", Meaning::Auth),
        (403, "not allowed", Meaning::Auth),
        (404, "model 'm' not found", Meaning::NoModel),
        (404, "no such route", Meaning::Refused),
        (408, "request timeout", Meaning::Transient),
        (409, "conflict", Meaning::Transient),
        (422, "unprocessable", Meaning::Refused),
        (429, "slow down", Meaning::Transient),
        (500, "internal error", Meaning::Transient),
        (529, "overloaded", Meaning::Transient),
    ];
    for wire in WIRES {
        for (status, message, meaning) in cases {
            let server = TestServer::start(move |_| wire.error(status, message));
            let llm = wire.backend(&server);
            let whole = llm.chat(ChatRequest::new("x")).await.unwrap_err();
            let streamed = llm.chat_stream(ChatRequest::new("x")).await.err().unwrap();
            let case = format!("{wire:?} {status} {message}");
            for err in [&whole, &streamed] {
                let got = match err {
                    LlmError::Auth { status: s, .. } if *s == status => Meaning::Auth,
                    LlmError::ModelNotFound { .. } => Meaning::NoModel,
                    LlmError::Http { status: s, .. } if *s == status && err.is_transient() => {
                        Meaning::Transient
                    }
                    LlmError::Http { status: s, .. } if *s == status => Meaning::Refused,
                    other => panic!("{case}: {other:?}"),
                };
                assert_eq!(got, meaning, "{case}: {err:?}");
                assert!(err.to_string().contains(message), "{case}: {err}");
                assert!(!format!("{err:?}").contains(KEY), "{case}: {err:?}");
            }
            if status == 404 && meaning == Meaning::Refused {
                // Another 404 says what to check in the base URL.
                assert!(whole.to_string().contains("is http://"), "{case}: {whole}");
            }
            let sends = if meaning == Meaning::Transient { 4 } else { 1 };
            assert_eq!(
                server.hits(),
                2 * sends,
                "{case}: sent again or not as the rule says"
            );
        }
    }
}

#[tokio::test]
async fn a_connection_closed_mid_answer_is_sent_again_on_every_backend() {
    for wire in WIRES {
        let broken = Answer::new(ADA).pieces_of(4).ending(Ending::Drop);
        let (out, server) = answered_after(wire, broken).await;
        assert_eq!(out.value.age, 36, "{wire:?}");
        assert_eq!(server.hits(), 2, "{wire:?}");
        assert_broken_then_answered(&out.report, wire);
        assert!(
            ADA.starts_with(&out.report.attempts[0].raw),
            "{wire:?}: {:?}",
            out.report.attempts[0].raw
        );
    }
}

#[tokio::test]
async fn an_answer_that_stops_before_its_end_or_goes_silent_is_sent_again() {
    // Ollama reads a clean end without `done` as its own repeat guard cutting the answer (a
    // truncated answer, not a broken stream), so it is left out of the clean-end case.
    for (wire, ending) in [
        (Wire::OpenAi, Ending::Nothing),
        (Wire::Anthropic, Ending::Nothing),
        (Wire::Gemini, Ending::Nothing),
        (Wire::OpenAi, Ending::Stall),
        (Wire::Anthropic, Ending::Stall),
        (Wire::Gemini, Ending::Stall),
        (Wire::Ollama, Ending::Stall),
    ] {
        let (out, _) = answered_after(wire, Answer::new(ADA).ending(ending)).await;
        assert_eq!(out.value.name, "Ada");
        assert_broken_then_answered(&out.report, wire);
    }
}

/// On every wire, after each of two bodies that are not the answer asked for (a proxy's error page, a
/// JSON error, both with status 200), the request is sent again and the answer read; `guard` is the
/// extraction's loop guard (with it the answer streams, without it not). The servers, for a look at
/// what was sent.
async fn answered_after_a_body_that_is_not_the_answer(guard: LoopGuard) -> Vec<(Wire, TestServer)> {
    let mut servers = Vec::new();
    for wire in WIRES {
        for body in [
            Reply::text(200, "<html><body>502 Bad Gateway</body></html>"),
            Reply::json(200, serde_json::json!({"error": {"message": "overloaded"}})),
        ] {
            let server =
                TestServer::script(vec![fixed(body.clone()), wire.scripted(Answer::new(ADA))]);
            let llm = wire.backend(&server);
            let out = Extractor::new(&*llm)
                .loop_guard(guard)
                .extract::<Person>("Ada, 36")
                .await
                .unwrap_or_else(|e| panic!("{wire:?} {body:?}: {e}"));
            assert_eq!(out.value.age, 36);
            assert_eq!(server.hits(), 2, "{wire:?}");
            servers.push((wire, server));
        }
    }
    servers
}

#[tokio::test]
async fn a_body_that_is_not_the_stream_asked_for_is_sent_again() {
    let servers = answered_after_a_body_that_is_not_the_answer(LoopGuard::default()).await;
    for (wire, server) in servers {
        let sent = &server.requests()[1];
        assert!(
            sent.wants_stream() || sent.path.contains("stream"),
            "{wire:?}"
        );
    }
}

#[tokio::test]
async fn a_whole_answer_that_is_not_the_answer_is_sent_again() {
    // Without the loop guard or a watcher the answer is not streamed: the same faults, the same retry.
    let servers = answered_after_a_body_that_is_not_the_answer(LoopGuard::off()).await;
    for (wire, server) in servers {
        let sent = &server.requests()[1];
        assert!(
            !sent.wants_stream() && !sent.path.contains("stream"),
            "{wire:?}"
        );
    }
}

#[tokio::test]
async fn the_stream_says_when_the_answer_starts_over() {
    let server = TestServer::script(vec![
        Wire::OpenAi.scripted(Answer::new(ADA).pieces_of(5).ending(Ending::Drop)),
        Wire::OpenAi.scripted(Answer::new(ADA).pieces_of(5)),
    ]);
    let llm = Wire::OpenAi.backend(&server);
    let mut stream = llm.chat_stream(ChatRequest::new("hi")).await.unwrap();
    let mut text = String::new();
    let mut restarts = 0;
    let mut done = None;
    while let Some(event) = stream.next().await {
        match event.unwrap() {
            ChatEvent::Delta(delta) => text.push_str(&delta),
            ChatEvent::Restart { error, .. } => {
                assert!(error.is_transient(), "{error:?}");
                assert_eq!(
                    text, ADA,
                    "the first stream sent all its text before it broke"
                );
                text.clear();
                restarts += 1;
            }
            ChatEvent::Done(response) => done = Some(response),
            _ => {}
        }
    }
    assert_eq!((restarts, text.as_str()), (1, ADA));
    assert_eq!(done.unwrap().text, ADA);
    // The whole answer, collected: only the second stream's text.
    let server = TestServer::script(vec![
        Wire::OpenAi.scripted(Answer::new(ADA).ending(Ending::Drop)),
        Wire::OpenAi.scripted(Answer::new(ADA)),
    ]);
    let llm = Wire::OpenAi.backend(&server);
    let mut request = ChatRequest::new("hi");
    request.max_tokens = Some(10);
    let whole = Llm::chat(&llm, request).await.unwrap();
    assert_eq!(whole.text, ADA);
}

fn entities(names: &[&str]) -> String {
    names
        .iter()
        .map(|name| format!("{}\n", entity_line(name, "person")))
        .collect()
}

/// The entities a prompted extraction over `wire` from `server` hands on, and its report.
async fn streamed_entities(wire: Wire, server: &TestServer) -> (Vec<Entity>, Report) {
    let llm = wire.backend(server);
    let extractor = Extractor::new(&*llm).mode(Mode::Prompted);
    let mut stream = extractor.extract_stream::<Entity>("x");
    let mut items = Vec::new();
    while let Some(item) = stream.next().await {
        items.push(item.unwrap_or_else(|e| panic!("{wire:?}: {e}")));
    }
    let report = stream.report().unwrap().clone();
    (items, report)
}

fn names(items: &[Entity]) -> Vec<&str> {
    items.iter().map(|item| item.name.as_str()).collect()
}

#[tokio::test]
async fn items_handed_on_before_a_break_are_not_handed_on_again() {
    for wire in WIRES {
        // The first answer breaks after two whole items (and part of a third); the answer sent again
        // starts over, as a greedy model does, and repeats them.
        let first = entities(&["Ada", "Bob", "Cy"]);
        let cut = first.rfind("Cy").unwrap();
        let server = TestServer::script(vec![
            wire.scripted(Answer::new(&first[..cut]).pieces_of(6).ending(Ending::Drop)),
            wire.scripted(Answer::new(entities(&["Ada", "Bob", "Cy", "Dee"]))),
        ]);
        let (items, report) = streamed_entities(wire, &server).await;
        assert_eq!(
            items,
            [
                entity("Ada", "person"),
                entity("Bob", "person"),
                entity("Cy", "person"),
                entity("Dee", "person")
            ],
            "{wire:?}"
        );
        assert_eq!(report.attempts.len(), 2, "{wire:?}");
        assert_eq!(
            (report.attempts[0].items, report.attempts[1].items),
            (2, 2),
            "{wire:?}"
        );
    }
}

#[tokio::test]
async fn a_document_with_the_same_item_twice_keeps_both_after_a_break() {
    // Ada twice on purpose: the break came after the first; the new answer's first Ada is the one
    // already handed on, its second is new.
    let server = TestServer::script(vec![
        Wire::OpenAi.scripted(Answer::new(entities(&["Ada"])).ending(Ending::Drop)),
        Wire::OpenAi.scripted(Answer::new(entities(&["Ada", "Bob", "Ada"]))),
    ]);
    let (items, _) = streamed_entities(Wire::OpenAi, &server).await;
    assert_eq!(names(&items), ["Ada", "Bob", "Ada"]);
}

#[tokio::test]
async fn items_are_not_handed_on_again_after_several_breaks() {
    let broken = || Wire::OpenAi.scripted(Answer::new(entities(&["Ada"])).ending(Ending::Drop));
    let server = TestServer::script(vec![
        broken(),
        broken(),
        broken(),
        Wire::OpenAi.scripted(Answer::new(entities(&["Ada", "Bob"]))),
    ]);
    let (items, report) = streamed_entities(Wire::OpenAi, &server).await;
    assert_eq!(names(&items), ["Ada", "Bob"]);
    let handed_on: Vec<usize> = report.attempts.iter().map(|a| a.items).collect();
    assert_eq!(handed_on, [1, 0, 0, 1]);
}

#[tokio::test]
async fn broken_streams_share_the_retry_budget_with_refused_sends() {
    // 503, then a broken stream, then another 503: three retries of three, and the fourth send fails.
    let broken = || Wire::OpenAi.scripted(Answer::new(ADA).ending(Ending::Drop));
    let server = TestServer::script(vec![
        fixed(Reply::text(503, "busy")),
        broken(),
        fixed(Reply::text(503, "busy")),
        broken(),
        Wire::OpenAi.scripted(Answer::new(ADA)),
    ]);
    let err = failure(Wire::OpenAi, &server, 1).await;
    assert!(
        matches!(err.kind(), ExtractErrorKind::Llm(LlmError::Stream { .. })),
        "{err:?}"
    );
    assert_eq!(server.hits(), 4);
    // The ledger: the first broken answer, then the last one (whose error ended the extraction).
    assert_eq!(err.attempts().len(), 2);
}

#[tokio::test]
async fn a_permanent_failure_mid_stream_is_not_sent_again() {
    // Gemini withholding an answer is final: sending again gives the same.
    let server = TestServer::start(|request| {
        support::providers::gemini_with(request, &Answer::new(ADA), Some("SAFETY"))
    });
    let err = failure(Wire::Gemini, &server, 1).await;
    assert!(
        matches!(err.kind(), ExtractErrorKind::Llm(LlmError::Blocked { .. })),
        "{err:?}"
    );
    assert_eq!(server.hits(), 1);
}

#[test]
fn the_test_formats_http_dates_right() {
    assert_eq!(
        http_date(UNIX_EPOCH + Duration::from_secs(784_111_777)),
        "Sun, 06 Nov 1994 08:49:37 GMT"
    );
}

#[tokio::test]
async fn a_retry_after_date_is_waited_for() {
    // Two seconds ahead, whole seconds: the client waits at least one second (the backoff alone
    // would be milliseconds).
    let server = TestServer::script(vec![
        Box::new(|_: &Request| {
            let date = http_date(SystemTime::now() + Duration::from_secs(2));
            Reply::text(429, "slow down").with_header("retry-after", &date)
        }),
        Wire::OpenAi.scripted(Answer::new(ADA)),
    ]);
    let llm = OpenAiCompatible::builder(server.url(), "m")
        .retry(
            RetryPolicy::new()
                .initial_backoff(ms(5))
                .max_backoff(Duration::from_secs(5)),
        )
        .build()
        .unwrap();
    let started = Instant::now();
    let out = Extractor::new(&llm).extract::<Person>("x").await.unwrap();
    let waited = started.elapsed();
    assert_eq!(out.value.age, 36);
    assert!(
        waited >= ms(900) && waited < Duration::from_secs(4),
        "{waited:?}"
    );
}

/// A message that puts `secret` across character 300, where error text is cut.
fn straddling(secret: &str) -> String {
    format!("{} {secret} and more", "x".repeat(300 - secret.len() / 2))
}

#[tokio::test]
async fn a_key_across_the_cut_of_a_servers_message_is_scrubbed_whole() {
    // In an error status's message, in a stream's error line, and in a body that is not the stream
    // (the last two retried, then reported).
    let error_status = TestServer::start(|_| Reply::openai_error(400, &straddling(KEY)));
    let streamed = TestServer::start(|request| {
        Reply::openai(
            request,
            &Answer::new("{").ending(Ending::ErrorLine(straddling(KEY))),
        )
    });
    let garbage = TestServer::start(|_| Reply::text(200, straddling(KEY)));
    // The error status's message keeps the mark `[redacted]` whole; in the other two the cut can fall
    // before or inside it (a stream's error comes after a prefix, a body's start is cut again), so
    // there only the key's absence is checked.
    for (server, in_view) in [(error_status, true), (streamed, false), (garbage, false)] {
        let err = failure(Wire::OpenAi, &server, 3).await;
        for text in [err.to_string(), format!("{err:?}")] {
            assert!(!in_view || text.contains("[redacted]"), "{text}");
            assert!(
                !text.contains("sk-test-0123"),
                "part of the key leaked: {text}"
            );
        }
    }
}

#[tokio::test]
async fn ollama_scrubs_credentials_of_its_url_from_stream_errors() {
    let server = TestServer::start(|request| {
        Reply::ollama(
            request,
            &Answer::new("{").ending(Ending::ErrorLine(
                "proxy said: bad token hunter2-SECRET".into(),
            )),
        )
    });
    // A token as the URL's user part (Ollama's host takes no password).
    let host = server.url().replace("http://", "http://hunter2-SECRET@");
    let llm = Ollama::builder("m")
        .host(host)
        .retry(fast_retry())
        .build()
        .unwrap();
    let err = Extractor::new(&llm)
        .extract::<Person>("x")
        .await
        .unwrap_err();
    let text = format!("{err} {err:?}");
    assert!(text.contains("proxy said"), "{text}");
    assert!(
        !text.contains("hunter2"),
        "the URL's password leaked: {text}"
    );
}

#[tokio::test]
async fn every_backend_scrubs_its_credentials_from_what_a_stream_echoes() {
    // The key of the hosted backends; for Ollama, which takes no key, the password of its URL.
    const PASSWORD: &str = "hunter2-PASSWORD";
    for wire in WIRES {
        let secret = match wire {
            Wire::Ollama => PASSWORD,
            _ => KEY,
        };
        let echoed = format!("proxy said: bad token {secret}");
        let error_line = TestServer::start(move |request| {
            let broken = Answer::new("{").ending(Ending::ErrorLine(echoed.clone()));
            wire.reply(request, &broken)
        });
        let not_the_stream =
            TestServer::start(move |_| Reply::text(200, format!("<html>denied {secret}</html>")));
        for server in [error_line, not_the_stream] {
            let llm = match wire {
                Wire::Ollama => Box::new(
                    Ollama::builder("m")
                        .host(
                            server
                                .url()
                                .replace("http://", &format!("http://me:{PASSWORD}@")),
                        )
                        .retry(fast_retry())
                        .build()
                        .unwrap(),
                ),
                _ => wire.backend(&server),
            };
            let mut stream = llm.chat_stream(ChatRequest::new("x")).await.unwrap();
            let mut last = None;
            while let Some(event) = stream.next().await {
                last = Some(event);
            }
            let err = last.unwrap().unwrap_err();
            let text = format!("{err} {err:?}");
            assert!(text.contains("[redacted]"), "{wire:?}: {text}");
            assert!(
                !text.contains("hunter2") && !text.contains("sk-test"),
                "{wire:?}: {text}"
            );
        }
    }
}

#[derive(Extract, serde::Deserialize, Debug, Clone, PartialEq)]
struct Named {
    name: String,
}

#[tokio::test]
async fn partial_values_start_over_when_the_stream_restarts() {
    // What a backend streams when its first answer broke after "Gra" and the second one is whole.
    let llm = from_stream_fn(|_| async {
        let events: Vec<Result<ChatEvent, LlmError>> = vec![
            Ok(ChatEvent::Delta(r#"{"name": "Gra"#.into())),
            Ok(ChatEvent::Restart {
                error: LlmError::Stream {
                    message: "the connection broke".into(),
                    received: r#"{"name": "Gra"#.into(),
                },
                usage: Usage::default(),
            }),
            Ok(ChatEvent::Delta(r#"{"name": "#.into())),
            Ok(ChatEvent::Delta(r#""Ada"}"#.into())),
            Ok(ChatEvent::Done(ChatResponse::new(""))),
        ];
        let stream: ChatStream = Box::pin(futures_util::stream::iter(events).then(|event| async {
            tokio::task::yield_now().await;
            event
        }));
        Ok(stream)
    });
    let events: Vec<_> = Named::extract_partial(&llm, "x").collect().await;
    let mut names = Vec::new();
    let mut retries = Vec::new();
    let mut last = None;
    for event in events {
        match event.unwrap() {
            PartialEvent::Snapshot(snapshot) => {
                names.push(serde_json::to_value(&*snapshot).unwrap()["name"].clone())
            }
            PartialEvent::Retry { attempt, kind } => {
                retries.push((attempt, kind));
                names.clear();
            }
            PartialEvent::Final { extraction, .. } => last = Some(extraction),
            _ => {}
        }
    }
    assert_eq!(retries, [(2, AttemptKind::First)]);
    assert!(
        names
            .iter()
            .all(|n| n.as_str().is_none_or(|n| "Ada".starts_with(n))),
        "no snapshot after the restart shows the broken answer: {names:?}"
    );
    let extraction = last.unwrap();
    assert_eq!(extraction.value.name, "Ada");
    let attempts = &extraction.report.attempts;
    assert_eq!(attempts.len(), 2);
    assert_eq!(attempts[0].raw, r#"{"name": "Gra"#);
    assert!(
        attempts[0].usage.completion_tokens > 0,
        "the broken answer cost something"
    );
    assert!(matches!(
        attempts[0].error,
        Some(AttemptError::Llm(LlmError::Stream { .. }))
    ));
    assert_eq!(attempts[1].raw, r#"{"name": "Ada"}"#);
}

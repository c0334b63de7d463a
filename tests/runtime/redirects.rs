//! A key goes only to the origin (scheme, host, port) it was resolved for: a server on 127.0.0.1 that
//! answers with a redirect (301, 302, 307, 308) to a second server on 127.0.0.2 (another host and port)
//! or on another port of its own host gets the error [`LlmError::Redirect`], and the second server never
//! receives a byte, for every backend (OpenAI-compatible, Anthropic, Gemini, Ollama with basic
//! authentication in its host), whole answers and streams alike. A redirect within the origin is
//! followed, the key with it.

use crate::support;

use futures_util::StreamExt;
use llm_extract::llm::{
    Anthropic, ChatRequest, Gemini, Llm, LlmError, Ollama, OpenAiCompatible, RetryPolicy,
};
use support::providers::{anthropic, gemini};
use support::{Answer, Reply, TestServer};

const KEY: &str = "sk-redirect-0123456789-SECRET";
const PASSWORD: &str = "pw-redirect-0123456789";
/// `user:PASSWORD` in base64, as basic authentication sends it.
const BASIC: &str = "dXNlcjpwdy1yZWRpcmVjdC0wMTIzNDU2Nzg5";

/// A server that must never be reached: it records what arrives and answers anything with 200.
fn elsewhere(ip: &str) -> TestServer {
    TestServer::start_on(ip, |_| Reply::text(200, "{}"))
}

/// A server on 127.0.0.1 answering every request with `status` to `target` (the request's path and
/// a `key=` query appended, a credential the error must not show).
fn redirecting(status: u16, target: String) -> TestServer {
    TestServer::start(move |request| {
        let join = if request.path.contains('?') { '&' } else { '?' };
        let location = format!("{target}{}{join}key=leaked-{status}", request.path);
        Reply::text(status, "moved").with_header("location", &location)
    })
}

/// Every backend, sending its credentials to `server`.
fn backends(server: &TestServer) -> Vec<(&'static str, Box<dyn Llm>)> {
    let url = server.url();
    let port = url.rsplit(':').next().unwrap_or_default().to_owned();
    vec![
        (
            "openai",
            Box::new(
                OpenAiCompatible::builder(format!("{url}/v1"), "m")
                    .api_key(KEY)
                    .retry(RetryPolicy::none())
                    .build()
                    .unwrap(),
            ),
        ),
        (
            "anthropic",
            Box::new(
                Anthropic::builder("m")
                    .base_url(&url)
                    .api_key(KEY)
                    .retry(RetryPolicy::none())
                    .build()
                    .unwrap(),
            ),
        ),
        (
            "gemini",
            Box::new(
                Gemini::builder("m")
                    .base_url(&url)
                    .api_key(KEY)
                    .retry(RetryPolicy::none())
                    .build()
                    .unwrap(),
            ),
        ),
        (
            "ollama",
            Box::new(
                Ollama::builder("m")
                    .host(format!("http://user:{PASSWORD}@127.0.0.1:{port}"))
                    .retry(RetryPolicy::none())
                    .build()
                    .unwrap(),
            ),
        ),
    ]
}

/// How a whole answer and a stream from `llm` end: with an error, or `None` when they end well.
async fn errors(llm: &dyn Llm) -> Vec<Option<LlmError>> {
    let whole = llm.chat(ChatRequest::new("x")).await.err();
    let streamed = match llm.chat_stream(ChatRequest::new("x")).await {
        Err(err) => Some(err),
        Ok(mut stream) => loop {
            match stream.next().await {
                Some(Err(err)) => break Some(err),
                Some(Ok(_)) => {}
                None => break None,
            }
        },
    };
    vec![whole, streamed]
}

/// The credential each backend sends, as it appears on the wire.
fn credential(name: &str) -> &'static str {
    if name == "ollama" {
        BASIC
    } else {
        KEY
    }
}

#[tokio::test]
async fn no_redirect_takes_a_key_to_another_host_or_port() {
    let other_host = elsewhere("127.0.0.2");
    let other_port = elsewhere("127.0.0.1");
    for target in [&other_host, &other_port] {
        for status in [301, 302, 307, 308] {
            let first = redirecting(status, target.url());
            for (name, llm) in backends(&first) {
                let ends = errors(llm.as_ref()).await;
                let leaked = String::from_utf8_lossy(&target.raw()).into_owned();
                assert!(
                    leaked.is_empty(),
                    "{name}, {status} to {}: the other server received {leaked}",
                    target.url()
                );
                for err in ends {
                    let Some(err) = err else {
                        panic!("{name} {status}: the request succeeded")
                    };
                    let LlmError::Redirect {
                        status: seen,
                        location,
                    } = &err
                    else {
                        panic!("{name} {status} to {}: {err:?}", target.url())
                    };
                    assert_eq!(*seen, status, "{name}");
                    assert!(location.starts_with(&target.url()), "{name}: {location}");
                    assert!(location.contains("key=[redacted]"), "{name}: {location}");
                    let text = format!("{err} {err:?}");
                    for secret in [KEY, PASSWORD, "leaked-"] {
                        assert!(!text.contains(secret), "{name}: {secret} in {text}");
                    }
                }
                let sent = String::from_utf8_lossy(&first.raw()).into_owned();
                assert!(sent.contains(credential(name)), "{name}: {sent}");
            }
            assert_eq!(
                first.hits(),
                4 * 2,
                "every request went to the first server once"
            );
        }
    }
}

#[tokio::test]
async fn ollamas_other_requests_do_not_follow_a_redirect_elsewhere_either() {
    let target = elsewhere("127.0.0.2");
    let first = redirecting(307, target.url());
    let port = first
        .url()
        .rsplit(':')
        .next()
        .unwrap_or_default()
        .to_owned();
    let llm = Ollama::builder("m")
        .host(format!("http://user:{PASSWORD}@127.0.0.1:{port}"))
        .retry(RetryPolicy::none())
        .build()
        .unwrap();
    let version = llm.version().await.unwrap_err();
    assert!(matches!(version, LlmError::Redirect { .. }), "{version:?}");
    let show = llm.show().await.unwrap_err();
    assert!(matches!(show, LlmError::Redirect { .. }), "{show:?}");
    assert!(target.raw().is_empty());
}

#[tokio::test]
async fn a_redirect_within_the_origin_is_followed_with_the_key() {
    let server = TestServer::start(|request| {
        let answer = Answer::new("{}");
        match request.path.strip_prefix("/moved") {
            Some("/v1/chat/completions") => Reply::openai(request, &answer),
            Some("/v1/messages") => anthropic(request, &answer),
            Some("/api/chat") => Reply::ollama(request, &answer),
            Some(_) => gemini(request, &answer),
            None => {
                let location = format!("/moved{}", request.path);
                Reply::text(307, "moved").with_header("location", &location)
            }
        }
    });
    for (name, llm) in backends(&server) {
        let answer = llm.chat(ChatRequest::new("x")).await.unwrap();
        assert_eq!(answer.text, "{}", "{name}");
    }
    let requests = server.requests();
    assert_eq!(requests.len(), 8);
    let moved: Vec<_> = requests
        .iter()
        .filter(|r| r.path.starts_with("/moved/"))
        .collect();
    assert_eq!(moved.len(), 4);
    let bearer = format!("Bearer {KEY}");
    let basic = format!("Basic {BASIC}");
    assert_eq!(moved[0].header("authorization"), Some(bearer.as_str()));
    assert_eq!(moved[1].header("x-api-key"), Some(KEY));
    assert_eq!(moved[2].header("x-goog-api-key"), Some(KEY));
    assert_eq!(moved[3].header("authorization"), Some(basic.as_str()));
}

#[tokio::test]
async fn a_redirect_loop_within_the_origin_stops() {
    let server = TestServer::start(|request| {
        let location = format!("{}x", request.path);
        Reply::text(307, "moved").with_header("location", &location)
    });
    let (_, llm) = backends(&server).swap_remove(0);
    let err = llm.chat(ChatRequest::new("x")).await.unwrap_err();
    let LlmError::Http {
        status, message, ..
    } = &err
    else {
        panic!("{err:?}")
    };
    assert_eq!(*status, 307);
    assert!(message.contains("more than 10"), "{message}");
    assert_eq!(server.hits(), 11);
    assert!(!err.is_transient());
}

//! The exchange hook of the HTTP backends: every request and response reaches it, a retry as an
//! exchange of its own, streamed answers with their raw events, and no key (the `Authorization` or
//! provider header, the credentials of the URL, a `key=` query parameter) in any byte of it, even
//! when the server echoes them; the bytes of an image are replaced by its size and SHA-256.

use crate::support;

use llm_extract::llm::{
    Anthropic, ChatRequest, Exchange, ExchangeHook, Llm, Media, Message, OpenAiCompatible,
    RetryPolicy,
};
use serde_json::json;
use std::sync::{Arc, Mutex};
use support::providers::anthropic;
use support::{Answer, Reply, TestServer};

const KEY: &str = "sk-exchange-KEY-0123456789";
const PASSWORD: &str = "pw-exchange-PASSWORD";
const QUERY_KEY: &str = "q-exchange-QUERYKEY";

/// A hook keeping every exchange.
fn keeper() -> (ExchangeHook, Arc<Mutex<Vec<Exchange>>>) {
    let seen: Arc<Mutex<Vec<Exchange>>> = Arc::default();
    let keep = Arc::clone(&seen);
    let hook = ExchangeHook::new(move |exchange: &Exchange| {
        keep.lock().unwrap().push(exchange.clone());
    });
    (hook, seen)
}

/// A reply that echoes every header and the path of the request back in its body.
fn echo(status: u16, request: &support::Request) -> Reply {
    Reply::json(
        status,
        json!({"error": {"message": format!("echo {:?} {}", request.headers, request.path)}}),
    )
}

fn assert_clean(seen: &[Exchange], image: &[u8]) {
    let dumped = serde_json::to_string(seen).unwrap();
    for secret in [KEY, PASSWORD, QUERY_KEY, "exchange-KEY", "0123456789"] {
        assert!(!dumped.contains(secret), "{secret} in {dumped}");
    }
    let b64 = Media::png(image.to_vec()).base64().unwrap();
    assert!(!dumped.contains(&b64), "the image's bytes in {dumped}");
}

#[tokio::test]
async fn every_exchange_reaches_the_hook_without_a_key_or_media_bytes() {
    let (hook, seen) = keeper();
    let first = Arc::new(Mutex::new(true));
    let server = TestServer::start(move |request| {
        let mut first = first.lock().unwrap();
        if std::mem::take(&mut *first) {
            // The first request fails transiently, echoing the key and the URL back.
            return echo(503, request);
        }
        Reply::openai(request, &Answer::new(r#"{"name": "Ada"}"#))
    });
    let address = server.url().replace("http://", "");
    let url = format!("http://user:{PASSWORD}@{address}/v1?key={QUERY_KEY}");
    let llm = OpenAiCompatible::builder(url, "m")
        .api_key(KEY)
        .retry(RetryPolicy::new().initial_backoff(std::time::Duration::from_millis(1)))
        .on_exchange(hook)
        .build()
        .unwrap();
    let image = b"\x89PNG\r\n\x1a\n-the-image-bytes-0000".to_vec();
    let request = ChatRequest::default()
        .with_message(Message::user("What is it?").with_media([Media::png(image.clone())]));
    let answer = llm.chat(request.clone()).await.unwrap();
    assert_eq!(answer.text, r#"{"name": "Ada"}"#);
    let stream = llm.chat_stream(request).await.unwrap();
    let collected: Vec<_> = futures_util::StreamExt::collect(stream).await;
    assert!(collected.iter().all(Result::is_ok));

    let seen = seen.lock().unwrap();
    // The failure, its retry, and the stream.
    assert_eq!(seen.len(), 3, "{seen:#?}");
    assert_eq!(seen[0].status, Some(503));
    assert!(seen[0].error.is_some());
    assert!(seen[0].response.contains("echo"), "{}", seen[0].response);
    assert_eq!(seen[1].status, Some(200));
    assert!(seen[1].response.contains("Ada"), "{}", seen[1].response);
    assert!(seen[2].streamed && seen[2].response.contains("data:"));
    for exchange in seen.iter() {
        assert_eq!(exchange.method, "POST");
        assert!(exchange.url.ends_with("key=[redacted]"), "{}", exchange.url);
        let request = exchange.request.as_ref().unwrap();
        let dumped = request.to_string();
        assert!(
            dumped.contains("omitted_media") && dumped.contains("sha256"),
            "{dumped}"
        );
        assert!(exchange
            .request_headers
            .iter()
            .any(|(name, value)| name == "authorization" && value == "[redacted]"));
    }
    assert_clean(&seen, &image);
}

#[tokio::test]
async fn a_provider_header_key_is_redacted_too() {
    let (hook, seen) = keeper();
    let server = TestServer::start(|request| {
        if request.header("x-api-key").is_some() && request.json["stream"] == json!(true) {
            return anthropic(request, &Answer::new(r#"{"name": "Ada"}"#));
        }
        echo(400, request)
    });
    let llm = Anthropic::builder("claude-test")
        .base_url(server.url())
        .api_key(KEY)
        .on_exchange(hook)
        .build()
        .unwrap();
    assert!(llm.chat(ChatRequest::new("hi")).await.is_err());
    let stream = llm.chat_stream(ChatRequest::new("hi")).await.unwrap();
    let _: Vec<_> = futures_util::StreamExt::collect(stream).await;
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 2, "{seen:#?}");
    assert!(
        seen[0].response.contains("[redacted]"),
        "{}",
        seen[0].response
    );
    assert!(seen.iter().all(|e| e
        .request_headers
        .iter()
        .any(|(n, v)| n == "x-api-key" && v == "[redacted]")));
    assert_clean(&seen, b"none");
}

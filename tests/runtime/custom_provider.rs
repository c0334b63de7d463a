//! A provider of the caller's own through the public [`Protocol`]: a small wire form ("lines": a
//! `POST {base}/generate` with the schema in `format`, a whole answer as `{"output", "stop", "usage"}`,
//! a streamed one as NDJSON `{"delta"}` lines then `{"stop", "usage"}`), its key in a header of its
//! own, sent through [`HttpBackend`] to a local server. The security rules hold for it as for the
//! built-in providers: the key goes only where it is named and never over plain http to another
//! machine, no redirect to another origin is followed, no error or exchange shows the key.

use crate::support;

use llm_extract::extract::Extractor;
use llm_extract::llm::{
    Answer, ChatRequest, ChatResponse, Exchange, ExchangeHook, Finish, Framing, HttpBackend, Llm,
    LlmError, Media, MediaLimits, MediaSupport, Message, OfficialApi, Protocol, RetryPolicy, Site,
    Status, StreamReader, Usage,
};
use llm_extract::schema::Dialect;
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};
use support::types::Person;
use support::{Reply, Request, Step, TestServer};

const KEY: &str = "sk-lines-0123456789-SECRET";

/// The "lines" wire form.
#[derive(Debug, Clone, Default)]
struct Lines;

fn usage(value: &Value) -> Usage {
    Usage {
        prompt_tokens: value["usage"]["in"].as_u64().unwrap_or(0),
        completion_tokens: value["usage"]["out"].as_u64().unwrap_or(0),
        ..Usage::default()
    }
}

fn finish(stop: &str) -> Finish {
    match stop {
        "limit" => Finish::Length,
        _ => Finish::Stop,
    }
}

impl Protocol for Lines {
    const NAME: &'static str = "lines";
    const FRAMING: Framing = Framing::Ndjson;
    const API: Option<OfficialApi> = Some(OfficialApi::new(
        "api.lines.example",
        "LINES_TEST_API_KEY",
        false,
    ));
    const KEY_HEADER: Option<&'static str> = Some("x-lines-key");
    const CONNECT_HINT: &'static str = "is the lines server running?";
    type Stream = LinesStream;
    const MEDIA: MediaSupport = MediaSupport::none("lines", "the lines API reads text only");
    const MEDIA_LIMITS: MediaLimits = MediaLimits::none();
    const LOGPROBS: bool = false;
    const MODEL_HINT: &'static str = "GET {base}/models lists the models";
    const ENDPOINT_HINT: &'static str = "is {base} the API root?";

    fn dialect(&self) -> Dialect {
        Dialect::Generic
    }

    fn endpoint(&self, site: &Site, _stream: bool) -> String {
        site.url("/generate")
    }

    fn body(&self, site: &Site, request: &ChatRequest, stream: bool) -> Result<Value, LlmError> {
        let messages: Vec<Value> = request
            .messages
            .iter()
            .map(|m| json!({"role": m.role, "text": m.content}))
            .collect();
        Ok(json!({
            "model": site.model,
            "system": request.system,
            "messages": messages,
            "format": request.schema,
            "stream": stream,
        }))
    }

    fn read(&self, answer: &Value) -> Result<ChatResponse, LlmError> {
        let text = answer["output"].as_str().unwrap_or_default();
        let mut response = ChatResponse::new(text)
            .with_finish(finish(answer["stop"].as_str().unwrap_or("end")))
            .with_model("lines-1");
        response.usage = usage(answer);
        Ok(response)
    }

    fn classify(&self, status: u16, body: &Value) -> Option<Status> {
        // This API answers a bad key with 400 and a code.
        (status == 400 && body["code"] == "bad_key").then_some(Status::Auth)
    }
}

/// One streamed answer of the "lines" form.
#[derive(Default)]
struct LinesStream;

impl StreamReader for LinesStream {
    const UNFINISHED: &'static str = "no line with \"stop\"";

    fn event(&mut self, data: &str, answer: &mut Answer) -> Result<(), LlmError> {
        let value: Value = serde_json::from_str(data).map_err(|e| LlmError::InvalidResponse {
            message: format!("a line of the stream is not JSON ({e})"),
            body: data.to_owned(),
        })?;
        if let Some(delta) = value["delta"].as_str() {
            answer.text(delta);
        }
        if let Some(stop) = value["stop"].as_str() {
            answer.finish = Some(finish(stop));
            answer.usage = usage(&value);
            answer.done();
        }
        Ok(())
    }
}

/// The "lines" server: a whole answer or a stream of `text`, by the request's `stream`.
fn lines_reply(request: &Request, text: &str) -> Reply {
    if request.json["stream"] == json!(true) {
        let mut steps: Vec<Step> = text
            .chars()
            .collect::<Vec<_>>()
            .chunks(5)
            .map(|piece| {
                let piece: String = piece.iter().collect();
                Step::Send(format!("{}\n", json!({"delta": piece})).into_bytes())
            })
            .collect();
        steps.push(Step::Send(
            format!(
                "{}\n",
                json!({"stop": "end", "usage": {"in": 11, "out": 7}})
            )
            .into_bytes(),
        ));
        return Reply::Chunked {
            status: 200,
            content_type: "application/x-ndjson".into(),
            steps,
        };
    }
    Reply::json(
        200,
        json!({"output": text, "stop": "end", "usage": {"in": 11, "out": 7}}),
    )
}

fn client(server: &TestServer) -> HttpBackend<Lines> {
    HttpBackend::builder(Lines, format!("{}/api/", server.url()), "lines-small")
        .api_key(KEY)
        .retry(RetryPolicy::none())
        .build()
        .unwrap()
}

#[tokio::test]
async fn an_extraction_goes_through_a_protocol_of_ones_own() {
    let server = TestServer::start(|request| lines_reply(request, r#"{"name": "Ada", "age": 36}"#));
    let llm = client(&server);
    // Whole and streamed answers (`extract` streams).
    let answer = llm.chat(ChatRequest::new("Ada, 36")).await.unwrap();
    assert_eq!(answer.usage.prompt_tokens, 11);
    let out = Extractor::new(&llm)
        .extract::<Person>("Ada, 36")
        .await
        .unwrap();
    assert_eq!((out.value.name.as_str(), out.value.age), ("Ada", 36));
    assert_eq!(out.report.usage.completion_tokens, 7);
    let backend = out.report.attempts[0].backend.as_ref().unwrap();
    assert_eq!(backend.provider, "lines");
    assert_eq!(backend.model.as_deref(), Some("lines-small"));

    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    for request in &requests {
        assert_eq!(request.path, "/api/generate");
        assert_eq!(request.header("x-lines-key"), Some(KEY));
        assert_eq!(request.header("authorization"), None);
        assert_eq!(request.json["model"], "lines-small");
    }
    // The schema went in the protocol's own field.
    assert_eq!(requests[1].json["format"]["type"], "object");
    assert_eq!(requests[1].json["stream"], true);
}

#[tokio::test]
async fn the_security_rules_hold_for_a_protocol_of_ones_own() {
    // A key over plain http to another machine: refused when built, nothing sent.
    let err = HttpBackend::builder(Lines, "http://192.0.2.7/api", "m")
        .api_key(KEY)
        .build()
        .unwrap_err();
    assert!(matches!(err, LlmError::InsecureKey { .. }), "{err:?}");
    // The provider's own variable goes to its own API alone.
    let server = TestServer::start(|request| lines_reply(request, "{}"));
    let llm = HttpBackend::builder(Lines, format!("{}/api", server.url()), "m")
        .env_lookup(|name| (name == "LINES_TEST_API_KEY").then(|| KEY.to_owned()))
        .build()
        .unwrap();
    assert!(!llm.has_key());

    // No redirect to another origin, and no key in the error.
    let elsewhere = TestServer::start(|request| lines_reply(request, "{}"));
    let target = elsewhere.url();
    let redirecting = TestServer::start(move |request| {
        Reply::text(307, "moved").with_header("location", &format!("{target}{}", request.path))
    });
    let err = client(&redirecting)
        .chat(ChatRequest::new("x"))
        .await
        .unwrap_err();
    assert!(matches!(err, LlmError::Redirect { .. }), "{err:?}");
    assert_eq!(elsewhere.hits(), 0);

    // A server that echoes the key: the error and every exchange redact it; the protocol's own
    // reading of an error body (400 `bad_key`) is an authentication error.
    let seen: Arc<Mutex<Vec<Exchange>>> = Arc::default();
    let keep = Arc::clone(&seen);
    let echoing = TestServer::start(|request| {
        Reply::json(
            400,
            json!({"code": "bad_key", "message": format!("bad key {:?}", request.header("x-lines-key"))}),
        )
    });
    let llm = HttpBackend::builder(Lines, format!("{}/api", echoing.url()), "m")
        .api_key(KEY)
        .on_exchange(ExchangeHook::new(move |e: &Exchange| {
            keep.lock().unwrap().push(e.clone())
        }))
        .build()
        .unwrap();
    let err = llm.chat(ChatRequest::new("x")).await.unwrap_err();
    assert!(matches!(err, LlmError::Auth { .. }), "{err:?}");
    for text in [format!("{err}"), format!("{err:?}"), format!("{llm:?}")] {
        assert!(
            !text.contains(KEY) && !text.contains("0123456789"),
            "{text}"
        );
    }
    let dumped = serde_json::to_string(&*seen.lock().unwrap()).unwrap();
    assert!(
        dumped.contains("bad key") && !dumped.contains("0123456789"),
        "{dumped}"
    );

    // Media the protocol does not take: refused before sending.
    let server = TestServer::start(|request| lines_reply(request, "{}"));
    let image = Message::user("x").with_media([Media::png(vec![1, 2, 3])]);
    let err = client(&server)
        .chat(ChatRequest::default().with_message(image))
        .await
        .unwrap_err();
    assert!(matches!(err, LlmError::Media(_)), "{err:?}");
    assert_eq!(server.hits(), 0);
}

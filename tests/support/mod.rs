//! A local model server for tests: a real HTTP/1.1 listener on 127.0.0.1 that speaks Ollama's NDJSON and
//! the OpenAI SSE wire formats with scripted answers, and misbehaves on demand (error statuses, garbage,
//! a dropped connection, a stall, a slow trickle, an oversized body).
//!
//! ```ignore
//! mod support;
//! use support::{Answer, Reply, TestServer};
//!
//! let server = TestServer::start(|request| Reply::ollama(request, &Answer::new(r#"{"name":"Ada"}"#)));
//! let llm = llm_extract::Ollama::builder("test").host(server.url()).build()?;
//! // ... run an extraction, then look at what the client sent:
//! assert_eq!(server.requests()[0].json["model"], "test");
//! ```
//!
//! The server runs on its own thread and runtime, so it serves async tests and blocking callers alike;
//! it stops when the [`TestServer`] is dropped. It is written by hand on tokio (no HTTP framework) so a
//! test can script exactly the bytes, pauses and broken connections it needs.
#![allow(dead_code)]

pub mod clock;
#[cfg(feature = "llama-cpp")]
pub mod engine;
pub mod media;
pub mod providers;
pub mod types;

use serde_json::{json, Value};
use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// The largest request head or body the server accepts.
const MAX_REQUEST_BYTES: usize = 8 * 1024 * 1024;

/// A request as the server received it.
#[derive(Debug, Clone)]
pub struct Request {
    /// `GET`, `POST`, ...
    pub method: String,
    /// The path, e.g. `/api/chat`.
    pub path: String,
    /// Header names in lower case, with their values.
    pub headers: Vec<(String, String)>,
    /// The body as text.
    pub body: String,
    /// The body as JSON (`Value::Null` when it is not JSON).
    pub json: Value,
}

impl Request {
    /// The value of header `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
    }

    /// Whether the client asked for a streamed answer (`stream` defaults to true on Ollama's API and
    /// to false on OpenAI's).
    pub fn wants_stream(&self) -> bool {
        let default = self.path.starts_with("/api/");
        self.json
            .get("stream")
            .and_then(Value::as_bool)
            .unwrap_or(default)
    }

    /// The messages of a chat request as `(role, content)` pairs.
    pub fn messages(&self) -> Vec<(String, String)> {
        self.json["messages"]
            .as_array()
            .map(|messages| {
                messages
                    .iter()
                    .map(|m| {
                        (
                            m["role"].as_str().unwrap_or_default().to_owned(),
                            m["content"].as_str().unwrap_or_default().to_owned(),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The content of the last message.
    pub fn last_message(&self) -> String {
        self.messages()
            .pop()
            .map(|(_, content)| content)
            .unwrap_or_default()
    }
}

/// One step of a streamed (chunked) response.
#[derive(Debug, Clone)]
pub enum Step {
    /// Send these bytes as one chunk.
    Send(Vec<u8>),
    /// Pause.
    Wait(Duration),
    /// Close the connection abruptly, without ending the chunked body.
    Drop,
    /// Stop sending but keep the connection open (until the client gives up or the server stops).
    Stall,
}

/// What the server does with one request.
#[derive(Debug, Clone)]
pub enum Reply {
    /// A complete response with a `Content-Length`.
    Full {
        /// The status code.
        status: u16,
        /// Extra headers.
        headers: Vec<(String, String)>,
        /// The `Content-Type`.
        content_type: String,
        /// The body.
        body: Vec<u8>,
    },
    /// A chunked response, sent step by step.
    Chunked {
        /// The status code.
        status: u16,
        /// The `Content-Type`.
        content_type: String,
        /// What to send, wait for, or break.
        steps: Vec<Step>,
    },
    /// Close the connection without answering.
    Hangup,
    /// Wait, then send the inner reply (a server slow to answer at all).
    Delayed(Duration, Box<Reply>),
    /// A chunked response whose steps arrive through a channel; see [`Reply::live`].
    Live {
        /// The status code.
        status: u16,
        /// The `Content-Type`.
        content_type: String,
        /// The steps, taken by the first request this reply serves.
        steps: LiveSteps,
    },
}

/// The receiving end of a live reply, shared so that `Reply` stays `Clone`.
pub type LiveSteps = Arc<Mutex<Option<tokio::sync::mpsc::UnboundedReceiver<Step>>>>;

impl Reply {
    /// A JSON response.
    pub fn json(status: u16, body: Value) -> Reply {
        Reply::Full {
            status,
            headers: Vec::new(),
            content_type: "application/json".into(),
            body: body.to_string().into_bytes(),
        }
    }

    /// A text response.
    pub fn text(status: u16, body: impl Into<String>) -> Reply {
        Reply::Full {
            status,
            headers: Vec::new(),
            content_type: "text/plain".into(),
            body: body.into().into_bytes(),
        }
    }

    /// This reply, sent after `delay`.
    pub fn after(self, delay: Duration) -> Reply {
        Reply::Delayed(delay, Box::new(self))
    }

    /// Adds a header to a full response.
    pub fn with_header(mut self, name: &str, value: &str) -> Reply {
        if let Reply::Full { headers, .. } = &mut self {
            headers.push((name.into(), value.into()));
        }
        self
    }

    /// Ollama's error body `{"error": message}` with `status`.
    pub fn ollama_error(status: u16, message: &str) -> Reply {
        Reply::json(status, json!({ "error": message }))
    }

    /// OpenAI's error body `{"error": {"message", "type", "code"}}` with `status`.
    pub fn openai_error(status: u16, message: &str) -> Reply {
        Reply::json(
            status,
            json!({"error": {"message": message, "type": "invalid_request_error", "code": status}}),
        )
    }

    /// `answer` in Ollama's `/api/chat` format: NDJSON when the request streams, one object otherwise.
    pub fn ollama(request: &Request, answer: &Answer) -> Reply {
        let model = request.json["model"].as_str().unwrap_or("test").to_owned();
        let done_reason = if answer.length { "length" } else { "stop" };
        if !request.wants_stream() {
            let mut message = json!({"role": "assistant", "content": answer.text});
            if let Some(thinking) = &answer.thinking {
                message["thinking"] = json!(thinking);
            }
            return Reply::json(
                200,
                json!({
                    "model": model, "created_at": "2024-12-06T00:46:58.265747Z",
                    "message": message, "done_reason": done_reason, "done": true,
                    "prompt_eval_count": answer.prompt_tokens, "eval_count": answer.completion_tokens
                }),
            );
        }
        let mut frames = Vec::new();
        if let Some(thinking) = &answer.thinking {
            frames.push(wire::ollama_thinking(&model, thinking));
        }
        frames.extend(
            answer
                .pieces()
                .iter()
                .map(|piece| wire::ollama_delta(&model, piece)),
        );
        let mut steps = answer.steps(frames.into_iter());
        match &answer.ending {
            Ending::Complete => steps.push(Step::Send(wire::ollama_done(
                &model,
                done_reason,
                answer.prompt_tokens,
                answer.completion_tokens,
            ))),
            Ending::ErrorLine(message) => steps.push(Step::Send(wire::ollama_error(message))),
            Ending::Drop => steps.push(Step::Drop),
            Ending::Stall => steps.push(Step::Stall),
            Ending::Nothing => {}
        }
        Reply::Chunked {
            status: 200,
            content_type: wire::NDJSON.into(),
            steps,
        }
    }

    /// `answer` in OpenAI's `/v1/chat/completions` format: SSE when the request streams, one object
    /// otherwise. Usage is sent as a last chunk only when the request asked for it.
    pub fn openai(request: &Request, answer: &Answer) -> Reply {
        let model = request.json["model"].as_str().unwrap_or("test").to_owned();
        let finish = if answer.length { "length" } else { "stop" };
        if !request.wants_stream() {
            return Reply::json(
                200,
                json!({
                    "id": "chatcmpl-1", "object": "chat.completion", "model": model,
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": answer.text}, "finish_reason": finish}],
                    "usage": {"prompt_tokens": answer.prompt_tokens, "completion_tokens": answer.completion_tokens,
                              "total_tokens": answer.prompt_tokens + answer.completion_tokens}
                }),
            );
        }
        let mut frames = vec![wire::openai_delta(&model, "")];
        frames.extend(
            answer
                .pieces()
                .iter()
                .map(|piece| wire::openai_delta(&model, piece)),
        );
        let mut steps = answer.steps(frames.into_iter());
        match &answer.ending {
            Ending::Complete => {
                steps.push(Step::Send(wire::openai_finish(&model, finish)));
                if request.json["stream_options"]["include_usage"] == json!(true) {
                    steps.push(Step::Send(wire::openai_usage(
                        &model,
                        answer.prompt_tokens,
                        answer.completion_tokens,
                    )));
                }
                steps.push(Step::Send(wire::openai_done()));
            }
            Ending::ErrorLine(message) => steps.push(Step::Send(wire::openai_error(message))),
            Ending::Drop => steps.push(Step::Drop),
            Ending::Stall => steps.push(Step::Stall),
            Ending::Nothing => {}
        }
        Reply::Chunked {
            status: 200,
            content_type: wire::SSE.into(),
            steps,
        }
    }

    /// A streamed reply whose steps are produced while it is being sent, e.g. by a real model on another
    /// thread: push [`Step`]s (built with [`wire`]) into the returned sender; dropping the sender ends the
    /// body cleanly. Use [`wire::NDJSON`] or [`wire::SSE`] as the content type.
    pub fn live(content_type: &str) -> (tokio::sync::mpsc::UnboundedSender<Step>, Reply) {
        let (sender, receiver) = tokio::sync::mpsc::unbounded_channel();
        let reply = Reply::Live {
            status: 200,
            content_type: content_type.into(),
            steps: Arc::new(Mutex::new(Some(receiver))),
        };
        (sender, reply)
    }
}

/// The frames of each wire format, for scripted and live replies.
pub mod wire {
    use serde_json::{json, Value};

    /// Ollama's streaming content type.
    pub const NDJSON: &str = "application/x-ndjson";
    /// OpenAI's streaming content type.
    pub const SSE: &str = "text/event-stream";

    fn line(value: Value) -> Vec<u8> {
        format!("{value}\n").into_bytes()
    }

    fn event(value: Value) -> Vec<u8> {
        format!("data: {value}\n\n").into_bytes()
    }

    /// An Ollama NDJSON line carrying answer text.
    pub fn ollama_delta(model: &str, text: &str) -> Vec<u8> {
        line(
            json!({"model": model, "message": {"role": "assistant", "content": text}, "done": false}),
        )
    }

    /// An Ollama NDJSON line carrying thinking text.
    pub fn ollama_thinking(model: &str, thinking: &str) -> Vec<u8> {
        line(
            json!({"model": model, "message": {"role": "assistant", "content": "", "thinking": thinking}, "done": false}),
        )
    }

    /// Ollama's last line: `done: true` with the reason and the token counts.
    pub fn ollama_done(
        model: &str,
        reason: &str,
        prompt_tokens: u64,
        completion_tokens: u64,
    ) -> Vec<u8> {
        line(
            json!({"model": model, "message": {"role": "assistant", "content": ""}, "done": true,
                    "done_reason": reason, "prompt_eval_count": prompt_tokens, "eval_count": completion_tokens}),
        )
    }

    /// An Ollama mid-stream error line.
    pub fn ollama_error(message: &str) -> Vec<u8> {
        line(json!({ "error": message }))
    }

    /// An OpenAI SSE chunk carrying answer text.
    pub fn openai_delta(model: &str, text: &str) -> Vec<u8> {
        event(
            json!({"id": "c", "model": model, "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": null}]}),
        )
    }

    /// An OpenAI SSE chunk with the finish reason.
    pub fn openai_finish(model: &str, reason: &str) -> Vec<u8> {
        event(
            json!({"id": "c", "model": model, "choices": [{"index": 0, "delta": {}, "finish_reason": reason}]}),
        )
    }

    /// OpenAI's usage chunk (sent when `stream_options.include_usage` is set).
    pub fn openai_usage(model: &str, prompt_tokens: u64, completion_tokens: u64) -> Vec<u8> {
        event(json!({"id": "c", "model": model, "choices": [],
                     "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                               "total_tokens": prompt_tokens + completion_tokens}}))
    }

    /// OpenAI's end of stream.
    pub fn openai_done() -> Vec<u8> {
        b"data: [DONE]\n\n".to_vec()
    }

    /// An OpenAI late error event.
    pub fn openai_error(message: &str) -> Vec<u8> {
        event(json!({"error": {"message": message, "type": "server_error"}}))
    }
}

/// How a scripted streamed answer ends.
#[derive(Debug, Clone)]
pub enum Ending {
    /// Normally: Ollama's `done: true` line, or OpenAI's finish chunk, usage and `[DONE]`.
    Complete,
    /// With an error line in the wire format (`{"error": ...}` / `data: {"error": ...}`).
    ErrorLine(String),
    /// With the connection closed abruptly mid-body.
    Drop,
    /// With the server going silent, connection open.
    Stall,
    /// With a clean end of the body but no end marker.
    Nothing,
}

/// A scripted model answer.
#[derive(Debug, Clone)]
pub struct Answer {
    /// The answer's text.
    pub text: String,
    /// Thinking text sent before the answer.
    pub thinking: Option<String>,
    /// Whether it finishes with `length` (the token limit).
    pub length: bool,
    /// Prompt tokens reported.
    pub prompt_tokens: u64,
    /// Completion tokens reported.
    pub completion_tokens: u64,
    /// Characters per streamed piece.
    pub piece_chars: usize,
    /// Pause before each piece.
    pub delay: Duration,
    /// How the stream ends.
    pub ending: Ending,
}

impl Answer {
    /// An answer with `text`, finishing normally, 10 prompt and 5 completion tokens, streamed 7
    /// characters at a time.
    pub fn new(text: impl Into<String>) -> Answer {
        Answer {
            text: text.into(),
            thinking: None,
            length: false,
            prompt_tokens: 10,
            completion_tokens: 5,
            piece_chars: 7,
            delay: Duration::ZERO,
            ending: Ending::Complete,
        }
    }

    /// Finishes with `length`.
    pub fn cut(mut self) -> Answer {
        self.length = true;
        self
    }

    /// Reports this usage.
    pub fn usage(mut self, prompt_tokens: u64, completion_tokens: u64) -> Answer {
        self.prompt_tokens = prompt_tokens;
        self.completion_tokens = completion_tokens;
        self
    }

    /// Streams `chars` characters per piece.
    pub fn pieces_of(mut self, chars: usize) -> Answer {
        self.piece_chars = chars.max(1);
        self
    }

    /// Pauses `delay` before each piece.
    pub fn delay(mut self, delay: Duration) -> Answer {
        self.delay = delay;
        self
    }

    /// Sends `thinking` first, in the thinking channel.
    pub fn thinking(mut self, thinking: impl Into<String>) -> Answer {
        self.thinking = Some(thinking.into());
        self
    }

    /// Ends the stream this way.
    pub fn ending(mut self, ending: Ending) -> Answer {
        self.ending = ending;
        self
    }

    fn pieces(&self) -> Vec<String> {
        let chars: Vec<char> = self.text.chars().collect();
        chars
            .chunks(self.piece_chars)
            .map(|c| c.iter().collect())
            .collect()
    }

    fn steps(&self, chunks: impl Iterator<Item = Vec<u8>>) -> Vec<Step> {
        let mut steps = Vec::new();
        for chunk in chunks {
            if !self.delay.is_zero() {
                steps.push(Step::Wait(self.delay));
            }
            steps.push(Step::Send(chunk));
        }
        steps
    }
}

type Handler = dyn Fn(&Request) -> Reply + Send + Sync;

/// One scripted reply: a function of the request, so it can match the format the client asked for.
pub type Scripted = Box<Handler>;

/// A running test server. Dropping it stops the server.
pub struct TestServer {
    addr: SocketAddr,
    requests: Arc<Mutex<Vec<Request>>>,
    raw: Arc<Mutex<Vec<u8>>>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl TestServer {
    /// Starts a server answering every request with `handler`.
    pub fn start(handler: impl Fn(&Request) -> Reply + Send + Sync + 'static) -> TestServer {
        TestServer::start_on("127.0.0.1", handler)
    }

    /// Starts a server on the loopback address `ip` (e.g. `127.0.0.2`, another host than 127.0.0.1 to a
    /// client) answering every request with `handler`.
    pub fn start_on(
        ip: &str,
        handler: impl Fn(&Request) -> Reply + Send + Sync + 'static,
    ) -> TestServer {
        let handler: Arc<Handler> = Arc::new(handler);
        let requests = Arc::new(Mutex::new(Vec::new()));
        let raw = Arc::new(Mutex::new(Vec::new()));
        let listener = std::net::TcpListener::bind((ip, 0)).expect("bind a loopback address");
        listener.set_nonblocking(true).expect("nonblocking");
        let addr = listener.local_addr().expect("local address");
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let recorded = Arc::clone(&requests);
        let received = Arc::clone(&raw);
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("server runtime");
            runtime.block_on(async move {
                let listener = TcpListener::from_std(listener).expect("tokio listener");
                let accept = async {
                    loop {
                        let Ok((socket, _)) = listener.accept().await else {
                            continue;
                        };
                        let handler = Arc::clone(&handler);
                        let recorded = Arc::clone(&recorded);
                        let received = Arc::clone(&received);
                        tokio::spawn(serve(socket, handler, recorded, received));
                    }
                };
                tokio::select! {
                    _ = accept => {}
                    _ = stopped => {}
                }
            });
            // Dropping the runtime drops every connection still open (a stalled one included).
            runtime.shutdown_timeout(Duration::from_millis(100));
        });
        TestServer {
            addr,
            requests,
            raw,
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    /// Starts a server giving the replies `make` returns, one per request in order (once they are
    /// used up, every request gets a 500 saying so). `make` sees the request, so each scripted reply can
    /// match the wire format and streaming the client asked for.
    pub fn script(replies: Vec<Scripted>) -> TestServer {
        let queue = Mutex::new(VecDeque::from(replies));
        TestServer::start(move |request| match queue.lock().unwrap().pop_front() {
            Some(reply) => reply(request),
            None => Reply::text(500, "the test script has no more replies"),
        })
    }

    /// `http://127.0.0.1:port`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Every request received so far.
    pub fn requests(&self) -> Vec<Request> {
        self.requests.lock().unwrap().clone()
    }

    /// How many requests were received.
    pub fn hits(&self) -> usize {
        self.requests.lock().unwrap().len()
    }

    /// Every byte received, on every connection, as it arrived (a request cut short included).
    pub fn raw(&self) -> Vec<u8> {
        self.raw.lock().unwrap().clone()
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// A scripted reply that answers with `answer` in Ollama's format.
pub fn ollama(answer: Answer) -> Scripted {
    Box::new(move |request| Reply::ollama(request, &answer))
}

/// A scripted reply that answers with `answer` in OpenAI's format.
pub fn openai(answer: Answer) -> Scripted {
    Box::new(move |request| Reply::openai(request, &answer))
}

/// A scripted reply that is always `reply`.
pub fn fixed(reply: Reply) -> Scripted {
    Box::new(move |_| reply.clone())
}

/// Serves one connection: requests one after another (keep-alive) until it closes.
async fn serve(
    mut socket: TcpStream,
    handler: Arc<Handler>,
    recorded: Arc<Mutex<Vec<Request>>>,
    received: Arc<Mutex<Vec<u8>>>,
) {
    let mut buffer = Vec::new();
    loop {
        let Some(request) = read_request(&mut socket, &mut buffer, &received).await else {
            return;
        };
        recorded.lock().unwrap().push(request.clone());
        let reply = handler(&request);
        if !write_reply(&mut socket, reply).await {
            return;
        }
    }
}

/// Reads one request, keeping every byte read in `received` too; `None` when the connection closed or
/// the request is malformed.
async fn read_request(
    socket: &mut TcpStream,
    buffer: &mut Vec<u8>,
    received: &Mutex<Vec<u8>>,
) -> Option<Request> {
    let head_end = loop {
        if let Some(end) = find(buffer, b"\r\n\r\n") {
            break end;
        }
        if buffer.len() > MAX_REQUEST_BYTES || !read_more(socket, buffer, received).await {
            return None;
        }
    };
    let head = String::from_utf8_lossy(&buffer[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut request_line = lines.next()?.split(' ');
    let method = request_line.next()?.to_owned();
    let path = request_line.next()?.to_owned();
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.trim().to_ascii_lowercase(), value.trim().to_owned()))
        .collect();
    let length: usize = headers
        .iter()
        .find(|(name, _)| name == "content-length")
        .and_then(|(_, value)| value.parse().ok())
        .unwrap_or(0);
    let body_start = head_end + 4;
    while buffer.len() < body_start + length {
        if length > MAX_REQUEST_BYTES || !read_more(socket, buffer, received).await {
            return None;
        }
    }
    let body = String::from_utf8_lossy(&buffer[body_start..body_start + length]).into_owned();
    buffer.drain(..body_start + length);
    let json = serde_json::from_str(&body).unwrap_or(Value::Null);
    Some(Request {
        method,
        path,
        headers,
        body,
        json,
    })
}

async fn read_more(
    socket: &mut TcpStream,
    buffer: &mut Vec<u8>,
    received: &Mutex<Vec<u8>>,
) -> bool {
    let mut chunk = [0u8; 8192];
    match socket.read(&mut chunk).await {
        Ok(0) | Err(_) => false,
        Ok(n) => {
            received.lock().unwrap().extend_from_slice(&chunk[..n]);
            buffer.extend_from_slice(&chunk[..n]);
            true
        }
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Writes a reply; `false` when the connection must close.
async fn write_reply(socket: &mut TcpStream, mut reply: Reply) -> bool {
    while let Reply::Delayed(delay, inner) = reply {
        tokio::time::sleep(delay).await;
        reply = *inner;
    }
    match reply {
        Reply::Hangup | Reply::Delayed(..) => false,
        Reply::Full {
            status,
            headers,
            content_type,
            body,
        } => {
            let mut head = format!(
                "HTTP/1.1 {status} {}\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\n",
                reason(status),
                body.len()
            );
            for (name, value) in headers {
                head.push_str(&format!("{name}: {value}\r\n"));
            }
            head.push_str("\r\n");
            socket.write_all(head.as_bytes()).await.is_ok() && socket.write_all(&body).await.is_ok()
        }
        Reply::Chunked {
            status,
            content_type,
            steps,
        } => {
            if !write_chunked_head(socket, status, &content_type).await {
                return false;
            }
            for step in steps {
                if !write_step(socket, step).await {
                    return false;
                }
            }
            socket.write_all(b"0\r\n\r\n").await.is_ok()
        }
        Reply::Live {
            status,
            content_type,
            steps,
        } => {
            let Some(mut steps) = steps.lock().unwrap().take() else {
                return false; // a live reply serves one request only
            };
            if !write_chunked_head(socket, status, &content_type).await {
                return false;
            }
            while let Some(step) = steps.recv().await {
                if !write_step(socket, step).await {
                    return false;
                }
            }
            socket.write_all(b"0\r\n\r\n").await.is_ok()
        }
    }
}

async fn write_chunked_head(socket: &mut TcpStream, status: u16, content_type: &str) -> bool {
    let head = format!(
        "HTTP/1.1 {status} {}\r\ncontent-type: {content_type}\r\ntransfer-encoding: chunked\r\n\r\n",
        reason(status)
    );
    socket.write_all(head.as_bytes()).await.is_ok()
}

/// Carries out one step of a chunked body; `false` when the connection must close.
async fn write_step(socket: &mut TcpStream, step: Step) -> bool {
    match step {
        Step::Send(bytes) => {
            if bytes.is_empty() {
                return true;
            }
            let mut chunk = format!("{:x}\r\n", bytes.len()).into_bytes();
            chunk.extend_from_slice(&bytes);
            chunk.extend_from_slice(b"\r\n");
            socket.write_all(&chunk).await.is_ok() && socket.flush().await.is_ok()
        }
        Step::Wait(pause) => {
            tokio::time::sleep(pause).await;
            true
        }
        Step::Drop => false,
        Step::Stall => {
            tokio::time::sleep(Duration::from_secs(3600)).await;
            false
        }
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => "Status",
    }
}

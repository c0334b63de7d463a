//! The Ollama backend: the native `POST /api/chat` API, streamed as NDJSON.
//!
//! Wire facts (see the project's `backends.md` §1): `format` carries the schema, `options.num_predict` is
//! always sent (Ollama's own default is unbounded), a stream ends with a `done: true` line whose
//! `done_reason` is `"length"` when the answer was cut, and a stream that ends without that line was cut
//! too (Ollama's repeat guard). An error in the middle of a stream arrives as a `{"error": ...}` line.

use super::http::{self, http_builder_methods, HttpClient, HttpOptions, Outgoing, WireFormat};
use super::{
    BoxFuture, ChatEvent, ChatRequest, ChatResponse, ChatStream, Finish, Llm, LlmError, Usage,
};
use crate::schema::Dialect;
use serde_json::{json, Map, Value};
use std::collections::VecDeque;
use std::sync::Arc;

/// Where Ollama listens when `OLLAMA_HOST` is not set.
pub const DEFAULT_HOST: &str = "http://127.0.0.1:11434";

/// The number of tokens a request may generate when it does not say (`options.num_predict`).
const DEFAULT_MAX_TOKENS: u32 = 4096;

/// A model served by Ollama. Cheap to clone (the client and settings are shared).
///
/// ```no_run
/// use llm_extract::llm::Ollama;
/// use std::time::Duration;
///
/// # fn main() -> Result<(), llm_extract::llm::LlmError> {
/// // Honours OLLAMA_HOST ("host", "host:port" or a URL); defaults to http://127.0.0.1:11434.
/// let llm = Ollama::new("llama3.2")?;
/// // Or spelled out:
/// let llm = Ollama::builder("llama3.2")
///     .host("http://gpu-box:11434")
///     .idle_timeout(Duration::from_secs(30))
///     .build()?;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct Ollama {
    inner: Arc<Inner>,
}

struct Inner {
    base: String,
    model: String,
    http: HttpClient,
    max_tokens: u32,
    think: Option<Think>,
    keep_alive: Option<String>,
    num_ctx: Option<u32>,
}

impl std::fmt::Debug for Inner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ollama")
            .field("base", &http::redact_url(&self.base))
            .field("model", &self.model)
            .field("http", &self.http)
            .field("max_tokens", &self.max_tokens)
            .field("think", &self.think)
            .field("keep_alive", &self.keep_alive)
            .field("num_ctx", &self.num_ctx)
            .finish()
    }
}

/// Whether a thinking model thinks before answering (Ollama's `think`; when unset, Ollama turns thinking
/// on for models that can).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Think {
    /// No thinking.
    Off,
    /// Thinking on.
    On,
    /// Thinking effort "low" (models with levels).
    Low,
    /// Thinking effort "medium".
    Medium,
    /// Thinking effort "high".
    High,
}

impl Think {
    fn to_json(self) -> Value {
        match self {
            Think::Off => json!(false),
            Think::On => json!(true),
            Think::Low => json!("low"),
            Think::Medium => json!("medium"),
            Think::High => json!("high"),
        }
    }
}

/// Builds an [`Ollama`].
#[derive(Clone)]
pub struct OllamaBuilder {
    model: String,
    host: Option<String>,
    http: HttpOptions,
    max_tokens: u32,
    think: Option<Think>,
    keep_alive: Option<String>,
    num_ctx: Option<u32>,
}

impl std::fmt::Debug for OllamaBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OllamaBuilder")
            .field("model", &self.model)
            .field("host", &self.host.as_deref().map(http::redact_url))
            .field("http", &self.http)
            .field("max_tokens", &self.max_tokens)
            .field("think", &self.think)
            .field("keep_alive", &self.keep_alive)
            .field("num_ctx", &self.num_ctx)
            .finish()
    }
}

impl OllamaBuilder {
    /// The server: `host`, `host:port`, `:port` or a URL, read like `OLLAMA_HOST` is (default: the
    /// `OLLAMA_HOST` variable, else `http://127.0.0.1:11434`).
    pub fn host(mut self, host: impl Into<String>) -> Self {
        self.host = Some(host.into());
        self
    }

    /// Tokens to generate when a request does not set `max_tokens` (default 4096). Always sent, since
    /// Ollama's own default lets a model run on until ten times its context.
    pub fn default_max_tokens(mut self, tokens: u32) -> Self {
        self.max_tokens = tokens;
        self
    }

    /// Whether a thinking model thinks (sent as `think`); unset by default, which lets Ollama decide.
    pub fn think(mut self, think: Think) -> Self {
        self.think = Some(think);
        self
    }

    /// How long the server keeps the model loaded after a request (e.g. `"10m"`).
    pub fn keep_alive(mut self, duration: impl Into<String>) -> Self {
        self.keep_alive = Some(duration.into());
        self
    }

    /// The context window to load the model with (`options.num_ctx`).
    pub fn context_length(mut self, tokens: u32) -> Self {
        self.num_ctx = Some(tokens);
        self
    }

    http_builder_methods!();

    /// Builds the backend.
    pub fn build(self) -> Result<Ollama, LlmError> {
        let base =
            match self.host {
                Some(host) => parse_host(&host)?,
                None => parse_host(&std::env::var("OLLAMA_HOST").unwrap_or_default()).map_err(
                    |err| match err {
                        LlmError::Config { message } => LlmError::Config {
                            message: format!("{message} (read from OLLAMA_HOST)"),
                        },
                        other => other,
                    },
                )?,
            };
        if self.model.trim().is_empty() {
            return Err(LlmError::Config {
                message: "the Ollama model name is empty; pass one like \"llama3.2\"".into(),
            });
        }
        Ok(Ollama {
            inner: Arc::new(Inner {
                base,
                model: self.model,
                http: HttpClient::new(self.http)?,
                max_tokens: self.max_tokens,
                think: self.think,
                keep_alive: self.keep_alive,
                num_ctx: self.num_ctx,
            }),
        })
    }
}

/// What `/api/show` says about a model.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ModelInfo {
    /// What the model can do, e.g. `completion`, `thinking`, `tools`, `vision`.
    pub capabilities: Vec<String>,
    /// The context window the model was trained with, if reported.
    pub context_length: Option<u64>,
    /// The model family, e.g. `llama`.
    pub family: Option<String>,
    /// The parameter size, e.g. `3.2B`.
    pub parameter_size: Option<String>,
    /// The quantization level, e.g. `Q4_K_M`.
    pub quantization: Option<String>,
    /// The whole answer, for anything else.
    pub raw: Value,
}

impl ModelInfo {
    /// Whether the model lists `capability`.
    pub fn has(&self, capability: &str) -> bool {
        self.capabilities.iter().any(|c| c == capability)
    }

    fn from_json(raw: Value) -> Self {
        let text = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_owned);
        let details = raw.get("details");
        ModelInfo {
            capabilities: raw
                .get("capabilities")
                .and_then(Value::as_array)
                .map(|caps| {
                    caps.iter()
                        .filter_map(|c| c.as_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default(),
            context_length: raw
                .get("model_info")
                .and_then(Value::as_object)
                .and_then(|info| {
                    info.iter()
                        .find(|(key, _)| key.ends_with(".context_length"))
                        .and_then(|(_, v)| v.as_u64())
                }),
            family: text(details.and_then(|d| d.get("family"))),
            parameter_size: text(details.and_then(|d| d.get("parameter_size"))),
            quantization: text(details.and_then(|d| d.get("quantization_level"))),
            raw,
        }
    }
}

impl Ollama {
    /// The model `model` (e.g. `"llama3.2"` or `"qwen3:4b"`) on the server `OLLAMA_HOST` names, with default
    /// settings.
    pub fn new(model: impl Into<String>) -> Result<Self, LlmError> {
        Self::builder(model).build()
    }

    /// A builder for the model `model`.
    pub fn builder(model: impl Into<String>) -> OllamaBuilder {
        OllamaBuilder {
            model: model.into(),
            host: None,
            http: HttpOptions::default(),
            max_tokens: DEFAULT_MAX_TOKENS,
            think: None,
            keep_alive: None,
            num_ctx: None,
        }
    }

    /// The model's name.
    pub fn model(&self) -> &str {
        &self.inner.model
    }

    /// The server's base URL, with any credentials it was given (`user:password@`): show it through
    /// [`redact_url`](crate::llm::redact_url).
    pub fn host(&self) -> &str {
        &self.inner.base
    }

    /// The server's version (`GET /api/version`).
    pub async fn version(&self) -> Result<String, LlmError> {
        let url = self.url("/api/version");
        let version = self
            .inner
            .http
            .send_and_read(&self.outgoing(&url, None), |bytes| {
                let value = http::json_body(bytes)?;
                match value.get("version").and_then(Value::as_str) {
                    Some(version) => Ok(version.to_owned()),
                    None => Err(invalid(
                        "no \"version\" in the answer of /api/version",
                        &value,
                    )),
                }
            })
            .await;
        self.map_error(version)
    }

    /// What the server knows about the model (`POST /api/show`): capabilities, context length, details.
    /// Fails with [`LlmError::ModelNotFound`] when the server does not have it.
    pub async fn show(&self) -> Result<ModelInfo, LlmError> {
        let url = self.url("/api/show");
        let request = json!({ "model": self.inner.model });
        let value = self
            .inner
            .http
            .send_and_read(&self.outgoing(&url, Some(&request)), http::json_body)
            .await;
        Ok(ModelInfo::from_json(self.map_error(value)?))
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.inner.base)
    }

    fn outgoing<'a>(&self, url: &'a str, body: Option<&'a Value>) -> Outgoing<'a> {
        Outgoing {
            url,
            body,
            bearer: None,
            key_header: None,
            headers: &[],
            connect_hint: "is Ollama running there? Start it with `ollama serve`, or set OLLAMA_HOST to where it listens",
        }
    }

    fn body(&self, request: &ChatRequest, stream: bool) -> Value {
        let inner = &self.inner;
        let messages = request.wire_messages();
        let mut options = Map::new();
        options.insert(
            "num_predict".into(),
            json!(request.max_tokens.unwrap_or(inner.max_tokens)),
        );
        if let Some(t) = request.temperature {
            options.insert("temperature".into(), json!(t));
        }
        if let Some(seed) = request.seed {
            options.insert("seed".into(), json!(seed));
        }
        if let Some(penalty) = request.repeat_penalty {
            options.insert("repeat_penalty".into(), json!(penalty));
        }
        if !request.stop.is_empty() {
            options.insert("stop".into(), json!(request.stop));
        }
        if let Some(n) = inner.num_ctx {
            options.insert("num_ctx".into(), json!(n));
        }
        let mut body = json!({
            "model": inner.model,
            "messages": messages,
            "stream": stream,
            "options": options,
        });
        if let Some(map) = body.as_object_mut() {
            if let Some(schema) = &request.schema {
                map.insert("format".into(), schema.clone());
            }
            if let Some(think) = inner.think {
                map.insert("think".into(), think.to_json());
            }
            if let Some(keep_alive) = &inner.keep_alive {
                map.insert("keep_alive".into(), json!(keep_alive));
            }
        }
        body
    }

    /// Turns the generic HTTP errors into Ollama's meaning of them.
    fn map_error<T>(&self, result: Result<T, LlmError>) -> Result<T, LlmError> {
        result.map_err(|err| self.refine(err))
    }

    /// Scrubs the credentials of the server's URL from `err` (first, so that the hints added here are
    /// not cut with the server's text), then gives a generic HTTP error Ollama's meaning.
    fn refine(&self, err: LlmError) -> LlmError {
        let base = &self.inner.base;
        match http::scrub(err, None, base) {
            LlmError::Http {
                status: 404,
                message,
                ..
            } if message.contains("model") => LlmError::ModelNotFound {
                hint: format!(
                    "run `ollama pull {}` on the server at {}, or check the name with `ollama list`",
                    self.inner.model,
                    http::redact_url(base)
                ),
                model: self.inner.model.clone(),
                message,
            },
            LlmError::Http {
                status: 404,
                message,
                retry_after,
            } => LlmError::Http {
                status: 404,
                message: format!(
                    "{message} (is {} an Ollama server? check OLLAMA_HOST)",
                    http::redact_url(base)
                ),
                retry_after,
            },
            LlmError::Http {
                status: status @ (401 | 403),
                message,
                ..
            } => LlmError::Auth { status, message },
            other => other,
        }
    }
}

impl Llm for Ollama {
    fn dialect(&self) -> Dialect {
        Dialect::Ollama
    }

    fn chat(&self, request: ChatRequest) -> BoxFuture<'_, Result<ChatResponse, LlmError>> {
        Box::pin(async move {
            let url = self.url("/api/chat");
            let body = self.body(&request, false);
            let response = self
                .inner
                .http
                .send_and_read(&self.outgoing(&url, Some(&body)), read_response)
                .await;
            self.map_error(response)
        })
    }

    fn chat_stream(&self, request: ChatRequest) -> BoxFuture<'_, Result<ChatStream, LlmError>> {
        Box::pin(async move {
            let url = self.url("/api/chat");
            let body = self.body(&request, true);
            let this = self.clone();
            self.inner
                .http
                .stream(
                    &self.outgoing(&url, Some(&body)),
                    NdjsonWire::default,
                    move |e| this.refine(e),
                )
                .await
        })
    }
}

/// A non-streamed `/api/chat` answer.
fn read_response(bytes: &[u8]) -> Result<ChatResponse, LlmError> {
    let value = http::json_body(bytes)?;
    if let Some(message) = http::error_text(&value) {
        // A success status with an error object: transient, as a body that is not the answer.
        return Err(LlmError::InvalidResponse {
            message: "the server answered an error with a success status".into(),
            body: message,
        });
    }
    let chunk = Chunk::read(&value)?;
    Ok(ChatResponse {
        text: chunk.content.unwrap_or_default(),
        thinking: chunk.thinking.filter(|t| !t.is_empty()),
        usage: chunk.usage,
        finish: if chunk.done {
            chunk.finish
        } else {
            Finish::Length
        },
        model: chunk.model,
    })
}

/// The fields of one `/api/chat` object (a stream line or the whole non-streamed answer).
struct Chunk {
    content: Option<String>,
    thinking: Option<String>,
    done: bool,
    finish: Finish,
    usage: Usage,
    model: Option<String>,
}

impl Chunk {
    fn read(value: &Value) -> Result<Chunk, LlmError> {
        if !value.is_object() {
            return Err(invalid("an answer line is not a JSON object", value));
        }
        let message = value.get("message");
        let text = |key: &str| {
            message
                .and_then(|m| m.get(key))
                .and_then(Value::as_str)
                .map(str::to_owned)
        };
        let count = |key: &str| value.get(key).and_then(Value::as_u64).unwrap_or(0);
        Ok(Chunk {
            content: text("content"),
            thinking: text("thinking"),
            done: value.get("done").and_then(Value::as_bool).unwrap_or(false),
            finish: match value.get("done_reason").and_then(Value::as_str) {
                None | Some("stop") | Some("") => Finish::Stop,
                Some("length") => Finish::Length,
                Some(other) => Finish::Other(other.to_owned()),
            },
            usage: Usage {
                prompt_tokens: count("prompt_eval_count"),
                completion_tokens: count("eval_count"),
                estimated: false,
                ..Usage::default()
            },
            model: value
                .get("model")
                .and_then(Value::as_str)
                .map(str::to_owned),
        })
    }
}

/// Ollama's NDJSON stream: one object per line, the last with `done: true`.
#[derive(Default)]
struct NdjsonWire {
    text: String,
    thinking: String,
    model: Option<String>,
    done: bool,
}

impl WireFormat for NdjsonWire {
    fn line(&mut self, line: &str, events: &mut VecDeque<ChatEvent>) -> Result<(), LlmError> {
        if line.trim().is_empty() {
            return Ok(());
        }
        let value: Value = serde_json::from_str(line).map_err(|e| LlmError::InvalidResponse {
            message: format!("a line of the stream is not JSON ({e})"),
            body: line.to_owned(),
        })?;
        if let Some(message) = http::error_text(&value) {
            return Err(LlmError::Stream {
                message: format!("the server reported an error mid-answer: {message}"),
                partial: String::new(),
            });
        }
        let chunk = Chunk::read(&value)?;
        if self.model.is_none() {
            self.model = chunk.model;
        }
        if let Some(thinking) = chunk.thinking.filter(|t| !t.is_empty()) {
            self.thinking.push_str(&thinking);
            events.push_back(ChatEvent::Thinking(thinking));
        }
        if let Some(content) = chunk.content.filter(|c| !c.is_empty()) {
            self.text.push_str(&content);
            events.push_back(ChatEvent::Delta(content));
        }
        if chunk.done {
            self.done = true;
            events.push_back(ChatEvent::Done(self.summary(chunk.finish, chunk.usage)));
        }
        Ok(())
    }

    fn end(&mut self, events: &mut VecDeque<ChatEvent>) -> Result<(), LlmError> {
        if !self.done {
            // No `done: true` line: Ollama cut the answer (its repeat guard does this).
            self.done = true;
            events.push_back(ChatEvent::Done(
                self.summary(Finish::Length, Usage::default()),
            ));
        }
        Ok(())
    }

    fn finished(&self) -> bool {
        self.done
    }
}

impl NdjsonWire {
    fn summary(&mut self, finish: Finish, usage: Usage) -> ChatResponse {
        ChatResponse {
            text: std::mem::take(&mut self.text),
            thinking: Some(std::mem::take(&mut self.thinking)).filter(|t| !t.is_empty()),
            usage,
            finish,
            model: self.model.take(),
        }
    }
}

fn invalid(message: &str, value: &Value) -> LlmError {
    LlmError::InvalidResponse {
        message: message.to_owned(),
        body: value.to_string(),
    }
}

/// Reads `OLLAMA_HOST` the way Ollama does: an optional scheme (default `http`; an explicit `http` or
/// `https` defaults the port to 80 or 443), a host (default `127.0.0.1`), a port (default 11434) and an
/// optional path prefix. A port that is not a number from 1 to 65535 is an error (Ollama itself falls
/// back to the default port, so a typo would reach another server).
pub(crate) fn parse_host(raw: &str) -> Result<String, LlmError> {
    let raw = raw.trim().trim_end_matches('/');
    if raw.is_empty() {
        return Ok(DEFAULT_HOST.to_owned());
    }
    let shown = http::redact_url(raw);
    let (scheme, rest, default_port) = match raw.split_once("://") {
        None => ("http", raw, 11434),
        Some((scheme, rest)) if scheme.eq_ignore_ascii_case("http") => ("http", rest, 80),
        Some((scheme, rest)) if scheme.eq_ignore_ascii_case("https") => ("https", rest, 443),
        Some((scheme, _)) => {
            return Err(LlmError::Config {
                message: format!(
                    "the Ollama host {shown:?} has the scheme {scheme:?}; use http:// or https://"
                ),
            })
        }
    };
    let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
    // Credentials for a proxy in front of the server (`user:password@host`) stay in the URL: the HTTP
    // client sends them as basic authentication, and every message shows them redacted.
    let (userinfo, hostport) = match authority.rsplit_once('@') {
        Some((userinfo, hostport)) => (format!("{userinfo}@"), hostport),
        None => (String::new(), authority),
    };
    let (host, port) = split_host_port(hostport);
    let host = if host.is_empty() { "127.0.0.1" } else { host };
    let port = match port.filter(|p| !p.is_empty()) {
        None => default_port,
        Some(p) => match p.parse::<u16>() {
            Ok(port) if port > 0 => port,
            _ => {
                return Err(LlmError::Config {
                    message: format!(
                        "the Ollama host {shown:?} has the port {p:?}, which is not a port number \
                         (1 to 65535); use one like 127.0.0.1:11434"
                    ),
                })
            }
        },
    };
    let host = if host.contains(':') {
        format!("[{host}]")
    } else {
        host.to_owned()
    };
    let path = if path.is_empty() {
        String::new()
    } else {
        format!("/{path}")
    };
    let url = format!("{scheme}://{userinfo}{host}:{port}{path}");
    match reqwest::Url::parse(&url) {
        Ok(_) => Ok(url),
        Err(e) => Err(LlmError::Config {
            message: format!("the Ollama host {shown:?} is not a valid address ({e})"),
        }),
    }
}

/// Splits `host:port`, `[v6]:port`, `[v6]`, a bare IPv6 address or a bare host.
fn split_host_port(hostport: &str) -> (&str, Option<&str>) {
    if let Some(bracketed) = hostport.strip_prefix('[') {
        return match bracketed.split_once(']') {
            Some((host, rest)) => (host, rest.strip_prefix(':')),
            None => (bracketed, None),
        };
    }
    match hostport.matches(':').count() {
        1 => hostport
            .split_once(':')
            .map_or((hostport, None), |(h, p)| (h, Some(p))),
        _ => (hostport, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_are_read_like_ollama_reads_them() {
        let cases = [
            ("", "http://127.0.0.1:11434"),
            ("   ", "http://127.0.0.1:11434"),
            ("0.0.0.0", "http://0.0.0.0:11434"),
            ("example.com", "http://example.com:11434"),
            ("example.com:8080", "http://example.com:8080"),
            (":8080", "http://127.0.0.1:8080"),
            ("http://example.com", "http://example.com:80"),
            ("https://example.com", "https://example.com:443"),
            ("https://example.com:8443/", "https://example.com:8443"),
            ("http://example.com/ollama", "http://example.com:80/ollama"),
            ("::1", "http://[::1]:11434"),
            ("[::1]:9000", "http://[::1]:9000"),
            ("localhost:", "http://localhost:11434"),
            ("user:pw@example.com", "http://user:pw@example.com:11434"),
            (
                "https://user:p%40ss@example.com:8443/x",
                "https://user:p%40ss@example.com:8443/x",
            ),
            ("me@[::1]:9000", "http://me@[::1]:9000"),
        ];
        for (raw, expected) in cases {
            assert_eq!(parse_host(raw).unwrap(), expected, "{raw:?}");
        }
    }

    #[test]
    fn a_port_that_is_not_one_is_refused() {
        for raw in [
            "localhost:notaport",
            "host:99999",
            "http://host:65536/",
            "host:0",
            "[::1]:-1",
            ":1e3",
        ] {
            let err = parse_host(raw).unwrap_err();
            assert!(matches!(err, LlmError::Config { .. }), "{raw:?}: {err:?}");
            assert!(err.to_string().contains("not a port number"), "{err}");
        }
        let err = parse_host("http://user:pw@host:99999").unwrap_err();
        assert!(!err.to_string().contains("pw"), "{err}");
        let err = parse_host("http://user:pw@host:notaport").unwrap_err();
        assert!(err.to_string().contains("\"notaport\""), "{err}");
        assert!(!err.to_string().contains("pw"), "{err}");
        assert!(matches!(
            Ollama::builder("m").host("127.0.0.1:99999").build(),
            Err(LlmError::Config { .. })
        ));
        assert!(matches!(
            parse_host("ftp://example.com"),
            Err(LlmError::Config { .. })
        ));
    }

    #[test]
    fn request_body_always_carries_num_predict() {
        let llm = Ollama::builder("m").host("localhost").build().unwrap();
        let request = ChatRequest::new("hi")
            .with_system("sys")
            .with_schema("T", json!({"type": "object"}))
            .with_temperature(0.0)
            .with_seed(7);
        let body = llm.body(&request, true);
        assert_eq!(body["options"]["num_predict"], json!(DEFAULT_MAX_TOKENS));
        assert_eq!(body["options"]["seed"], json!(7));
        assert_eq!(body["format"], json!({"type": "object"}));
        assert_eq!(
            body["messages"][0],
            json!({"role": "system", "content": "sys"})
        );
        assert_eq!(
            body["messages"][1],
            json!({"role": "user", "content": "hi"})
        );
        assert_eq!(body["stream"], json!(true));
        assert!(body.get("think").is_none());
        let body = llm.body(&request.with_max_tokens(12), false);
        assert_eq!(body["options"]["num_predict"], json!(12));
    }

    #[test]
    fn ndjson_wire_decodes_deltas_thinking_and_the_end() {
        let mut wire = NdjsonWire::default();
        let mut events = VecDeque::new();
        let lines = [
            r#"{"model":"m","message":{"role":"assistant","content":"","thinking":"hmm"},"done":false}"#,
            r#"{"model":"m","message":{"role":"assistant","content":"{\"a\""},"done":false}"#,
            r#"{"model":"m","message":{"role":"assistant","content":":1}"},"done":false}"#,
            r#"{"model":"m","message":{"role":"assistant","content":""},"done":true,"done_reason":"length","prompt_eval_count":9,"eval_count":3}"#,
        ];
        for line in lines {
            wire.line(line, &mut events).unwrap();
        }
        assert!(wire.finished());
        let done = events.into_iter().last().unwrap();
        let ChatEvent::Done(done) = done else {
            panic!("no Done")
        };
        assert_eq!(done.text, "{\"a\":1}");
        assert_eq!(done.thinking.as_deref(), Some("hmm"));
        assert_eq!(done.finish, Finish::Length);
        assert_eq!(done.usage.total(), 12);
    }

    #[test]
    fn a_stream_without_done_is_truncated_and_an_error_line_fails() {
        let mut wire = NdjsonWire::default();
        let mut events = VecDeque::new();
        wire.line(r#"{"message":{"content":"x"},"done":false}"#, &mut events)
            .unwrap();
        wire.end(&mut events).unwrap();
        assert!(matches!(
            events.back(),
            Some(ChatEvent::Done(ChatResponse {
                finish: Finish::Length,
                ..
            }))
        ));
        let err = NdjsonWire::default()
            .line(r#"{"error":"out of memory"}"#, &mut VecDeque::new())
            .unwrap_err();
        assert!(matches!(err, LlmError::Stream { .. }));
        assert!(err.to_string().contains("out of memory"));
    }

    #[test]
    fn model_info_reads_capabilities_and_context() {
        let info = ModelInfo::from_json(json!({
            "capabilities": ["completion", "thinking"],
            "details": {"family": "qwen3", "parameter_size": "4B", "quantization_level": "Q4_K_M"},
            "model_info": {"qwen3.context_length": 40960, "general.architecture": "qwen3"}
        }));
        assert!(info.has("thinking"));
        assert!(!info.has("vision"));
        assert_eq!(info.context_length, Some(40960));
        assert_eq!(info.family.as_deref(), Some("qwen3"));
    }
}

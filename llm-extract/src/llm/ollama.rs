//! The Ollama wire format: the native `POST /api/chat` API, streamed as NDJSON.
//!
//! `format` carries the schema, `options.num_predict` is always sent (Ollama's own default is
//! unbounded), a stream ends with a `done: true` line whose `done_reason` is `"length"` when the answer
//! was cut, and a stream that ends without that line was cut too (Ollama's repeat guard). An error in
//! the middle of a stream arrives as a `{"error": ...}` line.

use super::backend::StreamReader;
use super::backend::{
    self, http_backend, insecure_key_builder_method, wire_setters, Answer, Backend, Common,
    Framing, Protocol, Site,
};
use super::credentials::OfficialApi;
use super::env::env_builder_method;
use super::http::{self, http_builder_methods};
use super::ollama_host::parse_host;
use super::{
    ChatRequest, ChatResponse, Finish, LlmError, MediaLimits, MediaSupport, Message, Usage,
};
use crate::schema::Dialect;
use serde_json::{json, Map, Value};

/// The number of tokens a request may generate when it does not say (`options.num_predict`).
const DEFAULT_MAX_TOKENS: u32 = 4096;

/// A model served by Ollama. Cheap to clone (the client and settings are shared).
///
/// Credentials in the host (`user:password@`, for a proxy in front of the server) are sent as basic
/// authentication, over plain `http` only to this machine unless
/// [`allow_insecure_key`](OllamaBuilder::allow_insecure_key) says so, and never shown unredacted. A
/// request follows a redirect only within the origin (scheme, host, port) it was sent to: a redirect
/// anywhere else ends it with [`LlmError::Redirect`].
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
#[derive(Clone)]
pub struct Ollama {
    backend: Backend<ChatWire>,
}

http_backend!(Ollama);

/// The settings of Ollama's `/api/chat` wire format.
#[derive(Debug, Clone)]
struct ChatWire {
    max_tokens: u32,
    think: Option<Think>,
    keep_alive: Option<String>,
    num_ctx: Option<u32>,
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
#[derive(Debug, Clone)]
pub struct OllamaBuilder {
    common: Common,
    wire: ChatWire,
}

impl OllamaBuilder {
    /// The server: `host`, `host:port`, `:port` or a URL, read like `OLLAMA_HOST` is (default: the
    /// `OLLAMA_HOST` variable, else `http://127.0.0.1:11434`).
    pub fn host(mut self, host: impl Into<String>) -> Self {
        self.common.base_url = Some(host.into());
        self
    }

    /// Tokens to generate when a request does not set `max_tokens` (default 4096). Always sent, since
    /// Ollama's own default lets a model run on until ten times its context.
    pub fn default_max_tokens(mut self, tokens: u32) -> Self {
        self.wire.max_tokens = tokens;
        self
    }

    wire_setters! {
        /// Whether a thinking model thinks (sent as `think`); unset by default, which lets Ollama decide.
        think: Think;
    }

    /// How long the server keeps the model loaded after a request (e.g. `"10m"`).
    pub fn keep_alive(mut self, duration: impl Into<String>) -> Self {
        self.wire.keep_alive = Some(duration.into());
        self
    }

    /// The context window to load the model with (`options.num_ctx`).
    pub fn context_length(mut self, tokens: u32) -> Self {
        self.wire.num_ctx = Some(tokens);
        self
    }

    http_builder_methods!();

    insecure_key_builder_method!();

    env_builder_method!();

    /// Builds the backend. Credentials in the host (`user:password@`, sent as basic authentication)
    /// go over plain `http` only to this machine unless
    /// [`allow_insecure_key`](Self::allow_insecure_key) says otherwise.
    pub fn build(self) -> Result<Ollama, LlmError> {
        let base = match &self.common.base_url {
            Some(host) => parse_host(host)?,
            None => parse_host(&self.common.env.var("OLLAMA_HOST").unwrap_or_default()).map_err(
                |err| match err {
                    LlmError::Config { message } => LlmError::Config {
                        message: format!("{message} (read from OLLAMA_HOST)"),
                    },
                    other => other,
                },
            )?,
        };
        if self.common.model.trim().is_empty() {
            return Err(LlmError::Config {
                message: "the Ollama model name is empty; pass one like \"llama3.2\"".into(),
            });
        }
        Ok(Ollama {
            backend: Backend::build(self.wire, base, self.common)?,
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
            common: Common::new(None, model.into()),
            wire: ChatWire {
                max_tokens: DEFAULT_MAX_TOKENS,
                think: None,
                keep_alive: None,
                num_ctx: None,
            },
        }
    }

    /// The server's base URL, with any credentials it was given (`user:password@`): show it through
    /// [`redact_url`](crate::llm::redact_url).
    pub fn host(&self) -> &str {
        self.backend.base()
    }

    /// The server's version (`GET /api/version`).
    pub async fn version(&self) -> Result<String, LlmError> {
        let url = super::backend::join_url(self.backend.base(), "/api/version");
        let read = |bytes: &[u8]| {
            let value = http::json_body(bytes)?;
            match value.get("version").and_then(Value::as_str) {
                Some(version) => Ok(version.to_owned()),
                None => Err(backend::invalid(
                    "no \"version\" in the answer of /api/version",
                    &value,
                )),
            }
        };
        self.backend.call(&url, None, read).await
    }

    /// What the server knows about the model (`POST /api/show`): capabilities, context length, details.
    /// Fails with [`LlmError::ModelNotFound`] when the server does not have it.
    pub async fn show(&self) -> Result<ModelInfo, LlmError> {
        let url = super::backend::join_url(self.backend.base(), "/api/show");
        let request = json!({ "model": self.backend.model() });
        let value = self.backend.call(&url, Some(&request), http::json_body);
        Ok(ModelInfo::from_json(value.await?))
    }
}

/// A user message's images as Ollama's `images`: raw base64, without a `data:` prefix (the only form
/// [`ChatWire::MEDIA`] lets through).
fn images_field(message: &Message, object: &mut Map<String, Value>) {
    let images: Vec<Value> = message
        .media
        .iter()
        .filter_map(|media| media.base64())
        .map(Value::String)
        .collect();
    object.insert("images".into(), Value::Array(images));
}

impl Protocol for ChatWire {
    const NAME: &'static str = "Ollama";
    const FRAMING: Framing = Framing::Ndjson;
    const API: Option<OfficialApi> = None;
    const KEY_HEADER: Option<&'static str> = None;
    const CONNECT_HINT: &'static str =
        "is Ollama running there? Start it with `ollama serve`, or set OLLAMA_HOST to where it listens";
    const MODEL_HINT: &'static str =
        "run `ollama pull {model}` on the server at {base}, or check the name with `ollama list`";
    const ENDPOINT_HINT: &'static str = "is {base} an Ollama server? check OLLAMA_HOST";
    type Stream = Lines;
    // `/api/chat` takes images as base64 in a message's `images`, and neither PDFs nor URLs
    // (https://github.com/ollama/ollama/blob/main/docs/api.md#chat-request-with-images).
    const MEDIA: MediaSupport = MediaSupport {
        backend: "Ollama",
        images: true,
        pdfs: false,
        image_urls: false,
        pdf_urls: false,
        hint: "Ollama's chat API takes images as their bytes only and no PDF: attach the image's \
               bytes, send a PDF's pages as images, or read its text and extract from that",
    };
    // Ollama documents no size or count limit (the model's context is the limit).
    const MEDIA_LIMITS: MediaLimits = MediaLimits::none();
    const LOGPROBS: bool = false;

    fn dialect(&self) -> Dialect {
        Dialect::Gbnf
    }

    fn endpoint(&self, site: &Site, _stream: bool) -> String {
        site.url("/api/chat")
    }

    fn body(&self, site: &Site, request: &ChatRequest, stream: bool) -> Result<Value, LlmError> {
        let inner = self;
        let messages = request.wire_messages(images_field);
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
            "model": site.model,
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
        Ok(body)
    }

    fn read(&self, answer: &Value) -> Result<ChatResponse, LlmError> {
        read_response(answer)
    }
}

/// A non-streamed `/api/chat` answer.
fn read_response(value: &Value) -> Result<ChatResponse, LlmError> {
    let chunk = Chunk::read(value)?;
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
        // Ollama's API gives no token log-probabilities.
        logprobs: None,
        cached: false,
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
            return Err(backend::invalid(
                "an answer line is not a JSON object",
                value,
            ));
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

/// Ollama's NDJSON stream: one object a line, the last with `done: true`.
#[derive(Default)]
struct Lines;

impl StreamReader for Lines {
    const UNFINISHED: &'static str = "no done line";

    fn event(&mut self, line: &str, answer: &mut Answer) -> Result<(), LlmError> {
        let chunk = Chunk::read(&backend::answer_event(line)?)?;
        if answer.model.is_none() {
            answer.model = chunk.model;
        }
        answer.thought(chunk.thinking.as_deref().unwrap_or_default());
        answer.text(chunk.content.as_deref().unwrap_or_default());
        if chunk.done {
            answer.finish = Some(chunk.finish);
            answer.usage = chunk.usage;
            answer.done();
        }
        Ok(())
    }

    fn end(&mut self, answer: &mut Answer) -> Result<(), LlmError> {
        // No `done: true` line: Ollama cut the answer (its repeat guard does this).
        answer.finish = Some(Finish::Length);
        answer.done();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::ChatEvent;
    use std::collections::VecDeque;

    /// The events a stream of this body gives, and how it ended.
    fn read(body: &str) -> (VecDeque<ChatEvent>, Result<(), LlmError>) {
        backend::read_body::<Lines>(Framing::Ndjson, body)
    }

    #[test]
    fn a_host_that_is_not_one_fails_the_build() {
        assert!(matches!(
            Ollama::builder("m").host("127.0.0.1:99999").build(),
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
        let body = llm.backend.request_body(&request, true).unwrap();
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
        let body = llm
            .backend
            .request_body(&request.with_max_tokens(12), false)
            .unwrap();
        assert_eq!(body["options"]["num_predict"], json!(12));
    }

    #[test]
    fn ndjson_wire_decodes_deltas_thinking_and_the_end() {
        let lines = [
            r#"{"model":"m","message":{"role":"assistant","content":"","thinking":"hmm"},"done":false}"#,
            r#"{"model":"m","message":{"role":"assistant","content":"{\"a\""},"done":false}"#,
            r#"{"model":"m","message":{"role":"assistant","content":":1}"},"done":false}"#,
            r#"{"model":"m","message":{"role":"assistant","content":""},"done":true,"done_reason":"length","prompt_eval_count":9,"eval_count":3}"#,
        ];
        let (events, end) = read(&lines.join("\n"));
        end.unwrap();
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
        let (events, end) = read("{\"message\":{\"content\":\"x\"},\"done\":false}\n\n");
        end.unwrap();
        assert!(matches!(
            events.back(),
            Some(ChatEvent::Done(ChatResponse {
                finish: Finish::Length,
                ..
            }))
        ));
        let (_, end) = read(r#"{"error":"out of memory"}"#);
        let err = end.unwrap_err();
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

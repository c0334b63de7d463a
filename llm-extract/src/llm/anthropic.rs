//! The Anthropic backend: the Messages API, `POST {base}/v1/messages`, streamed as server-sent events.
//!
//! The key goes in `x-api-key`, the API version in `anthropic-version`. A schema goes out one of two
//! ways ([`AnthropicOutput`]): as the native JSON output format (`output_config.format`, or the earlier
//! beta `output_format` with its `anthropic-beta` header), or as one tool the model must call
//! (`tools` + `tool_choice: {"type": "tool", ...}`), whose `input` is then the answer. Either way the
//! answer arrives as text deltas (`text_delta`, or the tool's `input_json_delta.partial_json`), so items
//! of a list come out as each completes.

use super::credentials::{KeyChoice, OfficialApi};
use super::http::{self, http_builder_methods, HttpClient, HttpOptions, Outgoing};
use super::http::{Secret, SseFrames, WireFormat};
use super::{
    BoxFuture, ChatEvent, ChatRequest, ChatResponse, ChatStream, Finish, Llm, LlmError, Role, Usage,
};
use crate::schema::Dialect;
use serde_json::{json, Map, Value};
use std::collections::VecDeque;
use std::sync::Arc;

/// The API root used when none is given.
const DEFAULT_BASE: &str = "https://api.anthropic.com";
/// The `anthropic-version` header sent unless the builder says otherwise.
const DEFAULT_VERSION: &str = "2023-06-01";
/// The beta that enabled `output_format` before structured outputs became generally available.
const STRUCTURED_OUTPUTS_BETA: &str = "structured-outputs-2025-11-13";
/// The environment variable the key is read from by default.
const KEY_ENV: &str = "ANTHROPIC_API_KEY";
/// Anthropic's own API, the one server [`KEY_ENV`] goes to unasked.
const ANTHROPIC_API: OfficialApi = OfficialApi {
    host: "api.anthropic.com",
    key_env: KEY_ENV,
    key_required: true,
};

/// How a request's schema is sent to Anthropic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum AnthropicOutput {
    /// `output_config: {"format": {"type": "json_schema", "schema": ...}}`: the answer is JSON text
    /// constrained to the schema (structured outputs). The default.
    #[default]
    Json,
    /// The earlier beta form, `output_format: {"type": "json_schema", "schema": ...}` with the header
    /// `anthropic-beta: structured-outputs-2025-11-13`, for deployments (gateways, some clouds) that
    /// have not moved to `output_config` yet.
    BetaJson,
    /// One tool, `tools: [{name, description, input_schema, strict}]`, forced with
    /// `tool_choice: {"type": "tool", "name": ...}`; the answer is the call's `input`. Models without
    /// structured outputs support tools; [`Mode::Tool`](crate::extract::Mode::Tool) asks for this per
    /// request whatever the backend's setting.
    Tool,
}

/// A Claude model behind Anthropic's Messages API. Cheap to clone.
///
/// The API key is held as a [`Secret`]: it never appears in `Debug` output or in errors. A key goes only
/// where it is named: without [`api_key`](AnthropicBuilder::api_key) or
/// [`api_key_env`](AnthropicBuilder::api_key_env), `ANTHROPIC_API_KEY` is sent to Anthropic's own API
/// (`https://api.anthropic.com`, where it is required) and to no other base URL, which then gets no key;
/// and no key goes over plain `http` to a host other than this machine unless
/// [`allow_insecure_key`](AnthropicBuilder::allow_insecure_key) says so.
///
/// ```no_run
/// use llm_extract::llm::{Anthropic, AnthropicOutput};
///
/// # fn main() -> Result<(), llm_extract::llm::LlmError> {
/// // Key from ANTHROPIC_API_KEY, native JSON output.
/// let claude = Anthropic::new("claude-sonnet-4-5")?;
/// // Through a gateway, the schema as a forced tool.
/// let gateway = Anthropic::builder("claude-haiku-4-5")
///     .base_url("https://gateway.example.com/anthropic")
///     .api_key_env("GATEWAY_KEY")
///     .output(AnthropicOutput::Tool)
///     .build()?;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct Anthropic {
    inner: Arc<Inner>,
}

struct Inner {
    endpoint: String,
    base: String,
    model: String,
    key: Option<Secret>,
    headers: Vec<(&'static str, String)>,
    output: AnthropicOutput,
    strict_tool: bool,
    default_max_tokens: u32,
    http: HttpClient,
}

impl std::fmt::Debug for Inner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Anthropic")
            .field("base", &http::redact_url(&self.base))
            .field("model", &self.model)
            .field("key", &self.key)
            .field("headers", &self.headers)
            .field("output", &self.output)
            .field("strict_tool", &self.strict_tool)
            .field("default_max_tokens", &self.default_max_tokens)
            .field("http", &self.http)
            .finish()
    }
}

/// Builds an [`Anthropic`] backend.
#[derive(Clone)]
pub struct AnthropicBuilder {
    base_url: String,
    model: String,
    key: KeyChoice,
    version: String,
    output: AnthropicOutput,
    strict_tool: bool,
    default_max_tokens: u32,
    http: HttpOptions,
}

impl std::fmt::Debug for AnthropicBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AnthropicBuilder")
            .field("base_url", &http::redact_url(&self.base_url))
            .field("model", &self.model)
            .field("key", &self.key)
            .field("version", &self.version)
            .field("output", &self.output)
            .field("strict_tool", &self.strict_tool)
            .field("default_max_tokens", &self.default_max_tokens)
            .field("http", &self.http)
            .finish()
    }
}

impl AnthropicBuilder {
    /// The API root (default `https://api.anthropic.com`); requests go to `{base}/v1/messages`. A root
    /// already ending in `/v1` is used as it is. For proxies and gateways.
    pub fn base_url(mut self, url: impl Into<String>) -> Self {
        self.base_url = url.into();
        self
    }

    /// The API key, sent in `x-api-key`.
    pub fn api_key(mut self, key: impl Into<Secret>) -> Self {
        self.key.key = Some(key.into());
        self
    }

    /// Reads the API key from the environment variable `name` when the backend is built (an error if it
    /// is unset). Without this or [`api_key`](Self::api_key), `ANTHROPIC_API_KEY` is read for
    /// `https://api.anthropic.com` only.
    pub fn api_key_env(mut self, name: impl Into<String>) -> Self {
        self.key.key_env = Some(name.into());
        self
    }

    /// Lets the key go over plain `http` to a host other than this machine (default `false`: building
    /// such a backend fails with [`LlmError::InsecureKey`], as anyone on the network between could read
    /// the key). For a trusted network only.
    pub fn allow_insecure_key(mut self, allow: bool) -> Self {
        self.key.allow_insecure = allow;
        self
    }

    /// The `anthropic-version` header (default `2023-06-01`).
    pub fn version(mut self, version: impl Into<String>) -> Self {
        self.version = version.into();
        self
    }

    /// How a schema is sent (default [`AnthropicOutput::Json`]). A request with
    /// [`ChatRequest::tool_call`] set always uses [`AnthropicOutput::Tool`].
    pub fn output(mut self, output: AnthropicOutput) -> Self {
        self.output = output;
        self
    }

    /// Whether the forced tool is sent with `strict: true` (default `true`: the schema is rendered in
    /// [`Dialect::Anthropic`], which strict tools accept). Turn it off for models without strict tool use.
    pub fn strict_tool(mut self, strict: bool) -> Self {
        self.strict_tool = strict;
        self
    }

    /// The `max_tokens` sent when a request sets none (the Messages API requires one; default 4096).
    pub fn default_max_tokens(mut self, max_tokens: u32) -> Self {
        self.default_max_tokens = max_tokens;
        self
    }

    http_builder_methods!();

    /// Builds the backend, with the key chosen as the type's documentation says.
    pub fn build(self) -> Result<Anthropic, LlmError> {
        let base = normalize_base(&self.base_url)?;
        let key = self.key.resolve(&base, ANTHROPIC_API)?;
        let endpoint = if base.ends_with("/v1") {
            format!("{base}/messages")
        } else {
            format!("{base}/v1/messages")
        };
        let mut headers = vec![("anthropic-version", self.version)];
        if self.output == AnthropicOutput::BetaJson {
            headers.push(("anthropic-beta", STRUCTURED_OUTPUTS_BETA.to_owned()));
        }
        Ok(Anthropic {
            inner: Arc::new(Inner {
                endpoint,
                base,
                model: self.model,
                key,
                headers,
                output: self.output,
                strict_tool: self.strict_tool,
                default_max_tokens: self.default_max_tokens,
                http: HttpClient::new(self.http)?,
            }),
        })
    }
}

impl Anthropic {
    /// The model `model` (e.g. `claude-sonnet-4-5`) at `https://api.anthropic.com`, with the key from
    /// `ANTHROPIC_API_KEY`.
    pub fn new(model: impl Into<String>) -> Result<Self, LlmError> {
        Self::builder(model).build()
    }

    /// A builder for the model `model`.
    pub fn builder(model: impl Into<String>) -> AnthropicBuilder {
        AnthropicBuilder {
            base_url: DEFAULT_BASE.to_owned(),
            model: model.into(),
            key: KeyChoice::default(),
            version: DEFAULT_VERSION.to_owned(),
            output: AnthropicOutput::default(),
            strict_tool: true,
            default_max_tokens: 4096,
            http: HttpOptions::default(),
        }
    }

    /// The model's name.
    pub fn model(&self) -> &str {
        &self.inner.model
    }

    /// The API root requests go to.
    pub fn base_url(&self) -> &str {
        &self.inner.base
    }

    /// Whether requests carry an API key.
    pub fn has_key(&self) -> bool {
        self.inner.key.is_some()
    }

    fn outgoing<'a>(&'a self, body: &'a Value) -> Outgoing<'a> {
        Outgoing {
            url: &self.inner.endpoint,
            body: Some(body),
            bearer: self.inner.key.as_ref(),
            key_header: Some("x-api-key"),
            headers: &self.inner.headers,
            connect_hint: "is the API reachable from here? Check the base URL (and any proxy)",
        }
    }

    /// How `request`'s schema goes out.
    /// A schema in its dialect's non-strict form ([`ChatRequest::schema_relaxed`]) goes out as a tool
    /// without `strict`: the native output format takes strict schemas only.
    fn output_for(&self, request: &ChatRequest) -> AnthropicOutput {
        if request.tool_call || request.schema_relaxed {
            AnthropicOutput::Tool
        } else {
            self.inner.output
        }
    }

    fn body(&self, request: &ChatRequest, stream: bool) -> Value {
        let inner = &self.inner;
        // The Messages API takes the system prompt in its own field; a system message inside the
        // conversation joins it.
        let mut system: Vec<&str> = request.system.iter().map(String::as_str).collect();
        let mut messages = Vec::with_capacity(request.messages.len());
        for message in &request.messages {
            match message.role {
                Role::System => system.push(&message.content),
                role => messages.push(json!({"role": role, "content": message.content})),
            }
        }
        let mut body = Map::new();
        body.insert("model".into(), json!(inner.model));
        body.insert(
            "max_tokens".into(),
            json!(request.max_tokens.unwrap_or(inner.default_max_tokens)),
        );
        if !system.is_empty() {
            body.insert("system".into(), json!(system.join("\n\n")));
        }
        body.insert("messages".into(), Value::Array(messages));
        body.insert("stream".into(), json!(stream));
        if let Some(t) = request.temperature {
            body.insert("temperature".into(), json!(t.clamp(0.0, 1.0)));
        }
        if !request.stop.is_empty() {
            body.insert("stop_sequences".into(), json!(request.stop));
        }
        if let Some(schema) = &request.schema {
            let format = json!({"type": "json_schema", "schema": schema});
            match self.output_for(request) {
                AnthropicOutput::Json => {
                    body.insert("output_config".into(), json!({ "format": format }));
                }
                AnthropicOutput::BetaJson => {
                    body.insert("output_format".into(), format);
                }
                AnthropicOutput::Tool => {
                    let name = http::tool_name(request.schema_name.as_deref());
                    let mut tool = json!({
                        "name": name,
                        "description": "Record the answer: call this tool with the extracted value as its input.",
                        "input_schema": schema,
                    });
                    if inner.strict_tool && !request.schema_relaxed {
                        tool["strict"] = json!(true);
                    }
                    body.insert("tools".into(), json!([tool]));
                    body.insert("tool_choice".into(), json!({"type": "tool", "name": name}));
                }
            }
        }
        Value::Object(body)
    }

    /// Refines a status error into the variant a caller can act on, and scrubs the key from everything
    /// (first, so that the hints added here are not cut with the server's text).
    fn map_error(&self, err: LlmError) -> LlmError {
        match http::scrub(err, self.inner.key.as_ref(), &self.inner.base) {
            LlmError::Http {
                status: 404,
                message,
                ..
            } => LlmError::ModelNotFound {
                hint: format!(
                    "check the model name (e.g. claude-sonnet-4-5); GET {}/v1/models lists the models \
                     this key can use",
                    http::redact_url(&self.inner.base)
                ),
                model: self.inner.model.clone(),
                message,
            },
            LlmError::Http {
                status: status @ (401 | 403),
                message,
                ..
            } => LlmError::Auth {
                status,
                message: format!(
                    "{message} ({})",
                    ANTHROPIC_API.auth_hint(self.has_key(), "x-api-key")
                ),
            },
            other => other,
        }
    }
}

impl Llm for Anthropic {
    fn dialect(&self) -> Dialect {
        Dialect::Anthropic
    }

    fn chat(&self, request: ChatRequest) -> BoxFuture<'_, Result<ChatResponse, LlmError>> {
        Box::pin(async move {
            let body = self.body(&request, false);
            self.inner
                .http
                .send_and_read(&self.outgoing(&body), |bytes| {
                    read_message(&http::json_body(bytes)?)
                })
                .await
                .map_err(|e| self.map_error(e))
        })
    }

    fn chat_stream(&self, request: ChatRequest) -> BoxFuture<'_, Result<ChatStream, LlmError>> {
        Box::pin(async move {
            let body = self.body(&request, true);
            let this = self.clone();
            self.inner
                .http
                .stream(&self.outgoing(&body), MessageEvents::default, move |e| {
                    this.map_error(e)
                })
                .await
        })
    }
}

/// A whole (non-streamed) message: the text blocks, or the tool call's `input`, are the answer;
/// thinking blocks are reasoning.
fn read_message(value: &Value) -> Result<ChatResponse, LlmError> {
    if value.get("type").and_then(Value::as_str) == Some("error") {
        // A success status with an error object: transient, as a body that is not the answer.
        return Err(LlmError::InvalidResponse {
            message: "the server answered an error with a success status".into(),
            body: http::error_text(value).unwrap_or_default(),
        });
    }
    let blocks = value
        .get("content")
        .and_then(Value::as_array)
        .ok_or_else(|| LlmError::InvalidResponse {
            message: "the message has no content blocks".into(),
            body: value.to_string(),
        })?;
    let mut text = String::new();
    let mut thinking = String::new();
    for block in blocks {
        match block.get("type").and_then(Value::as_str) {
            Some("text") => text.push_str(block.get("text").and_then(Value::as_str).unwrap_or("")),
            Some("tool_use") => {
                if let Some(input) = block.get("input") {
                    text.push_str(&input.to_string());
                }
            }
            Some("thinking") => {
                thinking.push_str(block.get("thinking").and_then(Value::as_str).unwrap_or(""))
            }
            _ => {}
        }
    }
    let mut usage = Usage::default();
    read_usage(value.get("usage"), &mut usage);
    Ok(ChatResponse {
        text,
        thinking: Some(thinking).filter(|t| !t.is_empty()),
        usage,
        finish: stop_reason(value.get("stop_reason")).unwrap_or_default(),
        model: value
            .get("model")
            .and_then(Value::as_str)
            .map(str::to_owned),
    })
}

/// `stop_reason` as a [`Finish`]: `max_tokens` (and a full context window) truncate the answer.
fn stop_reason(value: Option<&Value>) -> Option<Finish> {
    Some(match value.and_then(Value::as_str)? {
        "end_turn" | "stop_sequence" | "tool_use" => Finish::Stop,
        "max_tokens" | "model_context_window_exceeded" => Finish::Length,
        other => Finish::Other(other.to_owned()),
    })
}

/// Updates `usage` with the counts `value` holds. The prompt is everything the model read: fresh input
/// plus what came from or went into the cache.
fn read_usage(value: Option<&Value>, usage: &mut Usage) {
    let Some(value) = value.filter(|u| u.is_object()) else {
        return;
    };
    let count = |key: &str| value.get(key).and_then(Value::as_u64);
    if let Some(n) = count("cache_read_input_tokens") {
        usage.cache_read_tokens = n;
    }
    if let Some(n) = count("cache_creation_input_tokens") {
        usage.cache_write_tokens = n;
    }
    if let Some(n) = count("input_tokens") {
        usage.prompt_tokens = n
            .saturating_add(usage.cache_read_tokens)
            .saturating_add(usage.cache_write_tokens);
    }
    if let Some(n) = count("output_tokens") {
        usage.completion_tokens = n;
    }
}

/// What a content block streams.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Block {
    /// Text or a tool's input: the answer.
    Answer,
    /// A tool call that has not streamed any input yet (`{}` if it never does).
    EmptyTool,
    /// Reasoning.
    Thinking,
    /// Anything else (redacted thinking, server tools, ...): ignored.
    Other,
}

/// The Messages API's event stream: `message_start`, `content_block_start`, `content_block_delta`,
/// `content_block_stop`, `message_delta`, `message_stop`, plus `ping` and `error`; any other event
/// type is ignored, as Anthropic's versioning policy asks.
#[derive(Default)]
struct MessageEvents {
    frames: SseFrames,
    blocks: Vec<(u64, Block)>,
    text: String,
    thinking: String,
    usage: Usage,
    finish: Option<Finish>,
    model: Option<String>,
    done: bool,
}

impl MessageEvents {
    fn block(&mut self, index: u64) -> Option<&mut Block> {
        self.blocks
            .iter_mut()
            .find(|(i, _)| *i == index)
            .map(|(_, block)| block)
    }

    fn answer(&mut self, text: &str, events: &mut VecDeque<ChatEvent>) {
        if !text.is_empty() {
            self.text.push_str(text);
            events.push_back(ChatEvent::Delta(text.to_owned()));
        }
    }

    fn event(&mut self, data: &str, events: &mut VecDeque<ChatEvent>) -> Result<(), LlmError> {
        let event: Value = serde_json::from_str(data).map_err(|e| LlmError::InvalidResponse {
            message: format!("an event of the stream is not JSON ({e})"),
            body: data.to_owned(),
        })?;
        let index = event.get("index").and_then(Value::as_u64).unwrap_or(0);
        match event.get("type").and_then(Value::as_str).unwrap_or("") {
            "message_start" => {
                let message = event.get("message");
                self.model = message
                    .and_then(|m| m.get("model"))
                    .and_then(Value::as_str)
                    .map(str::to_owned);
                read_usage(message.and_then(|m| m.get("usage")), &mut self.usage);
            }
            "content_block_start" => {
                let block = event.get("content_block");
                let kind = match block.and_then(|b| b.get("type")).and_then(Value::as_str) {
                    Some("text") => Block::Answer,
                    Some("tool_use") => Block::EmptyTool,
                    Some("thinking") => Block::Thinking,
                    _ => Block::Other,
                };
                self.blocks.push((index, kind));
                if kind == Block::Answer {
                    let text = block
                        .and_then(|b| b.get("text"))
                        .and_then(Value::as_str)
                        .unwrap_or("");
                    self.answer(text, events);
                }
            }
            "content_block_delta" => {
                let delta = event.get("delta");
                let field = |key: &str| {
                    delta
                        .and_then(|d| d.get(key))
                        .and_then(Value::as_str)
                        .unwrap_or("")
                };
                match delta.and_then(|d| d.get("type")).and_then(Value::as_str) {
                    Some("text_delta") => self.answer(field("text"), events),
                    Some("input_json_delta") => {
                        let json = field("partial_json");
                        if let Some(block) = self.block(index) {
                            if *block == Block::EmptyTool && !json.is_empty() {
                                *block = Block::Answer;
                            }
                        }
                        self.answer(json, events);
                    }
                    Some("thinking_delta") => {
                        let thinking = field("thinking");
                        if !thinking.is_empty() {
                            self.thinking.push_str(thinking);
                            events.push_back(ChatEvent::Thinking(thinking.to_owned()));
                        }
                    }
                    _ => {}
                }
            }
            "content_block_stop" => {
                if matches!(self.block(index), Some(Block::EmptyTool)) {
                    // A tool called with no input streams no delta: its input is `{}`.
                    self.answer("{}", events);
                }
            }
            "message_delta" => {
                if let Some(finish) =
                    stop_reason(event.get("delta").and_then(|d| d.get("stop_reason")))
                {
                    self.finish = Some(finish);
                }
                read_usage(event.get("usage"), &mut self.usage);
            }
            "message_stop" => self.finish_with(events),
            "error" => {
                let error = event.get("error");
                let kind = error
                    .and_then(|e| e.get("type"))
                    .and_then(Value::as_str)
                    .unwrap_or("error");
                let message = error
                    .and_then(|e| e.get("message"))
                    .and_then(Value::as_str)
                    .unwrap_or("no message");
                return Err(LlmError::Stream {
                    message: format!("the server reported {kind} mid-answer: {message}"),
                    partial: String::new(),
                });
            }
            _ => {} // `ping` and event types added later
        }
        Ok(())
    }

    fn finish_with(&mut self, events: &mut VecDeque<ChatEvent>) {
        self.done = true;
        events.push_back(ChatEvent::Done(ChatResponse {
            text: std::mem::take(&mut self.text),
            thinking: Some(std::mem::take(&mut self.thinking)).filter(|t| !t.is_empty()),
            usage: self.usage,
            finish: self.finish.take().unwrap_or_default(),
            model: self.model.take(),
        }));
    }
}

impl WireFormat for MessageEvents {
    fn line(&mut self, line: &str, events: &mut VecDeque<ChatEvent>) -> Result<(), LlmError> {
        match self.frames.line(line) {
            Some(data) => self.event(&data, events),
            None => Ok(()),
        }
    }

    fn end(&mut self, events: &mut VecDeque<ChatEvent>) -> Result<(), LlmError> {
        if let Some(data) = self.frames.flush() {
            self.event(&data, events)?;
        }
        if let Some(err) = self.frames.not_an_event_stream() {
            return Err(err);
        }
        if self.done {
            return Ok(());
        }
        if self.finish.is_some() {
            // A stop reason but no `message_stop`: the answer is complete.
            self.finish_with(events);
            return Ok(());
        }
        Err(LlmError::Stream {
            message: "the stream ended before the server finished the message (no stop_reason, no \
                      message_stop)"
                .into(),
            partial: String::new(),
        })
    }

    fn finished(&self) -> bool {
        self.done
    }

    fn usage(&self) -> Usage {
        self.usage
    }
}

/// The API root without a trailing slash.
pub(crate) fn normalize_base(raw: &str) -> Result<String, LlmError> {
    let trimmed = raw.trim().trim_end_matches('/');
    let shown = http::redact_url(trimmed);
    let url = reqwest::Url::parse(trimmed).map_err(|e| LlmError::Config {
        message: format!(
            "the base URL {shown:?} is not a valid URL ({e}); use one like https://api.example.com"
        ),
    })?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(LlmError::Config {
            message: format!("the base URL {shown:?} must start with http:// or https://"),
        });
    }
    Ok(trimmed.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::Message;

    fn backend(output: AnthropicOutput) -> Anthropic {
        Anthropic::builder("claude-test")
            .api_key("sk-ant-secret")
            .output(output)
            .build()
            .unwrap()
    }

    #[test]
    fn the_system_prompt_goes_in_its_own_field_and_the_schema_where_the_output_says() {
        let request = ChatRequest::new("hi")
            .with_system("be brief")
            .with_message(Message::system("and exact"))
            .with_schema("Vec<Person>", json!({"type": "object"}))
            .with_temperature(1.5);
        let json = backend(AnthropicOutput::Json).body(&request, true);
        assert_eq!(json["system"], "be brief\n\nand exact");
        assert_eq!(json["messages"], json!([{"role": "user", "content": "hi"}]));
        assert_eq!(json["max_tokens"], 4096);
        assert_eq!(json["temperature"], 1.0);
        assert_eq!(
            json["output_config"],
            json!({"format": {"type": "json_schema", "schema": {"type": "object"}}})
        );
        assert!(json.get("tools").is_none() && json.get("output_format").is_none());

        let beta = backend(AnthropicOutput::BetaJson);
        assert_eq!(
            beta.body(&request, true)["output_format"]["schema"],
            json!({"type": "object"})
        );
        assert!(beta
            .inner
            .headers
            .contains(&("anthropic-beta", STRUCTURED_OUTPUTS_BETA.to_owned())));

        for tool in [
            backend(AnthropicOutput::Tool).body(&request, false),
            backend(AnthropicOutput::Json).body(&request.clone().with_tool_call(true), false),
        ] {
            assert_eq!(tool["tools"][0]["name"], "Vec_Person_");
            assert_eq!(tool["tools"][0]["input_schema"], json!({"type": "object"}));
            assert_eq!(tool["tools"][0]["strict"], true);
            assert_eq!(
                tool["tool_choice"],
                json!({"type": "tool", "name": "Vec_Person_"})
            );
            assert!(tool.get("output_config").is_none());
        }
        assert!(!format!("{:?}", backend(AnthropicOutput::Json)).contains("sk-ant-secret"));
        let mut relaxed = request.clone();
        relaxed.schema_relaxed = true;
        let body = backend(AnthropicOutput::Json).body(&relaxed, false);
        assert!(body.get("output_config").is_none(), "{body}");
        assert_eq!(body["tools"][0]["input_schema"], json!({"type": "object"}));
        assert!(body["tools"][0].get("strict").is_none(), "{body}");
    }

    #[test]
    fn anthropic_api_key_goes_to_anthropic_alone_and_no_key_over_plain_http_elsewhere() {
        // The only test of this crate that sets ANTHROPIC_API_KEY.
        std::env::set_var(KEY_ENV, "sk-ant-implicit");
        let official = Anthropic::new("m").unwrap();
        assert_eq!(official.inner.key, Some(Secret::new("sk-ant-implicit")));
        for elsewhere in [
            "http://127.0.0.1:8000",
            "https://gateway.example.com/anthropic",
            "https://generativelanguage.googleapis.com",
        ] {
            let llm = Anthropic::builder("m").base_url(elsewhere).build().unwrap();
            assert!(!llm.has_key(), "{elsewhere}");
        }
        let err = Anthropic::builder("m")
            .base_url("http://10.255.255.1:1")
            .api_key_env(KEY_ENV)
            .build()
            .unwrap_err();
        assert!(matches!(err, LlmError::InsecureKey { .. }), "{err:?}");
        let allowed = Anthropic::builder("m")
            .base_url("http://10.255.255.1:1")
            .api_key_env(KEY_ENV)
            .allow_insecure_key(true)
            .build()
            .unwrap();
        assert!(allowed.has_key());
    }

    #[test]
    fn endpoints_follow_the_base_url() {
        let at = |base: &str| {
            Anthropic::builder("m")
                .api_key("k")
                .base_url(base)
                .build()
                .unwrap()
                .inner
                .endpoint
                .clone()
        };
        assert_eq!(at("https://h/"), "https://h/v1/messages");
        assert_eq!(at("https://h/proxy/v1"), "https://h/proxy/v1/messages");
        assert!(matches!(
            Anthropic::builder("m").api_key("k").base_url("h:1").build(),
            Err(LlmError::Config { .. })
        ));
    }

    #[test]
    fn a_whole_message_reads_text_tool_input_thinking_usage_and_stop_reason() {
        let done = read_message(&json!({
            "type": "message", "model": "claude-test",
            "content": [
                {"type": "thinking", "thinking": "hmm", "signature": "s"},
                {"type": "tool_use", "id": "t", "name": "Person", "input": {"name": "Ada"}}
            ],
            "stop_reason": "max_tokens",
            "usage": {"input_tokens": 3, "cache_read_input_tokens": 10, "cache_creation_input_tokens": 5, "output_tokens": 7}
        }))
        .unwrap();
        assert_eq!(done.text, r#"{"name":"Ada"}"#);
        assert_eq!(done.thinking.as_deref(), Some("hmm"));
        assert_eq!(done.finish, Finish::Length);
        assert_eq!(
            (
                done.usage.prompt_tokens,
                done.usage.cache_read_tokens,
                done.usage.cache_write_tokens,
                done.usage.completion_tokens
            ),
            (18, 10, 5, 7)
        );
    }

    #[test]
    fn stream_events_become_deltas_whichever_block_carries_the_answer() {
        let mut wire = MessageEvents::default();
        let mut events = VecDeque::new();
        let stream = concat!(
            "event: message_start\n",
            "data: {\"type\":\"message_start\",\"message\":{\"model\":\"claude-test\",\"usage\":{\"input_tokens\":9,\"output_tokens\":1}}}\n\n",
            "event: ping\ndata: {\"type\": \"ping\"}\n\n",
            "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"thinking\",\"thinking\":\"\"}}\n\n",
            "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"let me see\"}}\n\n",
            "data: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"P\",\"input\":{}}}\n\n",
            "data: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"a\\\"\"}}\n\n",
            "event: future_event\ndata: {\"type\":\"future_event\"}\n\n",
            "data: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\":1}\"}}\n\n",
            "data: {\"type\":\"content_block_stop\",\"index\":1}\n\n",
            "data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},\"usage\":{\"output_tokens\":12}}\n\n",
            "data: {\"type\":\"message_stop\"}\n\n",
        );
        for line in stream.split('\n') {
            wire.line(line, &mut events).unwrap();
        }
        let deltas: String = events
            .iter()
            .filter_map(|e| match e {
                ChatEvent::Delta(d) => Some(d.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(deltas, r#"{"a":1}"#);
        let Some(ChatEvent::Done(done)) = events.back() else {
            panic!("no Done: {events:?}")
        };
        assert_eq!(done.thinking.as_deref(), Some("let me see"));
        assert_eq!(
            (done.usage.prompt_tokens, done.usage.completion_tokens),
            (9, 12)
        );
        assert_eq!(done.finish, Finish::Stop);
        assert!(wire.finished());
    }

    #[test]
    fn a_tool_without_input_deltas_answers_an_empty_object_and_an_error_event_ends_the_stream() {
        let mut wire = MessageEvents::default();
        let mut events = VecDeque::new();
        for data in [
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","input":{}}}"#,
            r#"{"type":"content_block_stop","index":0}"#,
        ] {
            wire.event(data, &mut events).unwrap();
        }
        assert_eq!(events.pop_front(), Some(ChatEvent::Delta("{}".into())));
        let err = wire
            .event(
                r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
                &mut events,
            )
            .unwrap_err();
        assert!(matches!(err, LlmError::Stream { .. }));
        assert!(err.to_string().contains("overloaded_error"), "{err}");
        assert!(matches!(
            MessageEvents::default().end(&mut events),
            Err(LlmError::Stream { .. })
        ));
    }

    proptest::proptest! {
        /// Whatever the answer's characters and however it is cut into deltas, text or tool input, the
        /// deltas put back together are the answer.
        #[test]
        fn deltas_reassemble_any_answer(
            text in "\\PC{0,60}",
            cuts in proptest::collection::vec(1usize..8, 1..10),
            tool in proptest::bool::ANY,
        ) {
            let chars: Vec<char> = text.chars().collect();
            let mut pieces = Vec::new();
            let mut at = 0;
            for cut in cuts.iter().cycle() {
                if at >= chars.len() {
                    break;
                }
                let end = (at + cut).min(chars.len());
                pieces.push(chars[at..end].iter().collect::<String>());
                at = end;
            }
            let (start, kind, field) = if tool {
                (json!({"type": "tool_use", "input": {}}), "input_json_delta", "partial_json")
            } else {
                (json!({"type": "text", "text": ""}), "text_delta", "text")
            };
            let mut stream = format!(
                "event: content_block_start\ndata: {}\n\n",
                json!({"type": "content_block_start", "index": 0, "content_block": start})
            );
            for piece in &pieces {
                let delta = json!({"type": "content_block_delta", "index": 0, "delta": {"type": kind, field: piece}});
                stream.push_str(&format!("event: content_block_delta\ndata: {delta}\n\n"));
            }
            stream.push_str("data: {\"type\": \"content_block_stop\", \"index\": 0}\n\n");
            stream.push_str("data: {\"type\": \"message_stop\"}\n\n");
            let mut wire = MessageEvents::default();
            let mut events = VecDeque::new();
            for line in stream.split('\n') {
                wire.line(line, &mut events).unwrap();
            }
            let Some(ChatEvent::Done(done)) = events.pop_back() else {
                panic!("no Done");
            };
            let deltas: String = events
                .iter()
                .filter_map(|e| match e {
                    ChatEvent::Delta(d) => Some(d.as_str()),
                    _ => None,
                })
                .collect();
            let expected = if tool && text.is_empty() { "{}" } else { text.as_str() };
            proptest::prop_assert_eq!(&deltas, expected);
            proptest::prop_assert_eq!(done.text.as_str(), expected);
        }
    }
}

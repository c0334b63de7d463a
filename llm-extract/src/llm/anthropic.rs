//! The Anthropic wire format: the Messages API, `POST {base}/v1/messages`, streamed as server-sent
//! events.
//!
//! The key goes in `x-api-key`, the API version in `anthropic-version`. A schema goes out one of two
//! ways ([`AnthropicOutput`]): as the native JSON output format (`output_config.format`, or the earlier
//! beta `output_format` with its `anthropic-beta` header), or as one tool the model must call
//! (`tools` + `tool_choice: {"type": "tool", ...}`), whose `input` is then the answer. Either way the
//! answer arrives as text deltas (`text_delta`, or the tool's `input_json_delta.partial_json`), so items
//! of a list come out as each completes.

use super::backend::{
    self, http_backend, key_builder_methods, wire_setters, Answer, Backend, Common, Site,
};
use super::backend::{Framing, Protocol, StreamReader};
use super::credentials::OfficialApi;
use super::http::{self, http_builder_methods};
use super::prompt_cache::CacheTtl;
use super::{
    ChatRequest, ChatResponse, Finish, LlmError, MediaLimits, MediaSupport, Message, PromptCache,
    Role, Usage,
};
use crate::schema::Dialect;
use serde_json::{json, Map, Value};

/// The API root used when none is given.
const DEFAULT_BASE: &str = "https://api.anthropic.com";
/// The `anthropic-version` header sent unless the builder says otherwise.
const DEFAULT_VERSION: &str = "2023-06-01";
/// The beta that enabled `output_format` before structured outputs became generally available.
const STRUCTURED_OUTPUTS_BETA: &str = "structured-outputs-2025-11-13";
/// Anthropic's own API, the one server `ANTHROPIC_API_KEY` goes to unasked.
const ANTHROPIC_API: OfficialApi = OfficialApi {
    host: "api.anthropic.com",
    key_env: "ANTHROPIC_API_KEY",
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
/// The API key is held as a [`Secret`](crate::llm::Secret): it never appears in `Debug` output or in errors. A key goes only
/// where it is named: without [`api_key`](AnthropicBuilder::api_key) or
/// [`api_key_env`](AnthropicBuilder::api_key_env), `ANTHROPIC_API_KEY` is sent to Anthropic's own API
/// (`https://api.anthropic.com`, where it is required) and to no other base URL, which then gets no key;
/// and no key goes over plain `http` to a host other than this machine unless
/// [`allow_insecure_key`](AnthropicBuilder::allow_insecure_key) says so.
///
/// A request follows a redirect only within the origin (scheme, host, port) it was sent to: a redirect
/// anywhere else, where the key must not go, ends it with [`LlmError::Redirect`](crate::llm::LlmError::Redirect).
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
#[derive(Clone)]
pub struct Anthropic {
    backend: Backend<MessagesWire>,
}

http_backend!(Anthropic, keyed);

impl Anthropic {
    /// The backend as a provider's batch API uses it.
    pub(crate) fn batch_wire(&self) -> std::sync::Arc<dyn crate::llm::BatchWire> {
        std::sync::Arc::new(self.backend.clone())
    }
}

/// The settings of the Messages API's wire format.
#[derive(Debug, Clone)]
struct MessagesWire {
    version: String,
    output: AnthropicOutput,
    strict_tool: bool,
    default_max_tokens: u32,
    prompt_cache: PromptCache,
}

/// Builds an [`Anthropic`] backend.
#[derive(Debug, Clone)]
pub struct AnthropicBuilder {
    common: Common,
    wire: MessagesWire,
}

impl AnthropicBuilder {
    /// The API root (default `https://api.anthropic.com`); requests go to `{base}/v1/messages`. A root
    /// already ending in `/v1` is used as it is. For proxies and gateways.
    pub fn base_url(mut self, url: impl Into<String>) -> Self {
        self.common.base_url = Some(url.into());
        self
    }

    key_builder_methods!(
        "in `x-api-key`",
        "ANTHROPIC_API_KEY",
        "https://api.anthropic.com"
    );

    wire_setters! {
        /// The `anthropic-version` header (default `2023-06-01`).
        version: impl Into<String>;

        /// How a schema is sent (default [`AnthropicOutput::Json`]). A request with
        /// [`ChatRequest::tool_call`] set always uses [`AnthropicOutput::Tool`].
        output: AnthropicOutput;

        /// Whether the forced tool is sent with `strict: true` (default `true`: the schema is rendered in
        /// [`Dialect::Anthropic`], which strict tools accept). Turn it off for models without strict tool use.
        strict_tool: bool;

        /// The `max_tokens` sent when a request sets none (the Messages API requires one; default 4096).
        default_max_tokens: u32;

        /// Where `cache_control` breakpoints go (default [`PromptCache::new`]: after the system prompt,
        /// after the worked examples and after the input's shared context
        /// ([`ChatRequest::stable_input`]), five minutes, once the prefix reaches the model's minimum
        /// cacheable length; [`PromptCache::off`] for none). The usage then counts the prompt tokens
        /// read from and written to the cache ([`Usage::cache_read_tokens`],
        /// [`Usage::cache_write_tokens`]).
        prompt_cache: PromptCache;
    }

    http_builder_methods!();

    /// Builds the backend, with the key chosen as the type's documentation says.
    pub fn build(self) -> Result<Anthropic, LlmError> {
        let raw = self.common.base_url.as_deref().unwrap_or(DEFAULT_BASE);
        let base = backend::normalize_base(raw, None, "https://api.example.com")?;
        self.wire.prompt_cache.validate()?;
        Ok(Anthropic {
            backend: Backend::build(self.wire, base, self.common)?,
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
            common: Common::new(None, model.into()),
            wire: MessagesWire {
                version: DEFAULT_VERSION.to_owned(),
                output: AnthropicOutput::default(),
                strict_tool: true,
                default_max_tokens: 4096,
                prompt_cache: PromptCache::new(),
            },
        }
    }
}

impl MessagesWire {
    /// The one tool `request`'s schema goes out as, when it goes out as a tool.
    fn tool(&self, request: &ChatRequest) -> Option<Value> {
        let schema = request.schema.as_ref()?;
        if self.output_for(request) != AnthropicOutput::Tool {
            return None;
        }
        let name = http::tool_name(request.schema_name.as_deref());
        let mut tool = json!({
            "name": name,
            "description": "Record the answer: call this tool with the extracted value as its input.",
            "input_schema": schema,
        });
        if self.strict_tool && !request.schema_relaxed {
            tool["strict"] = json!(true);
        }
        Some(tool)
    }

    /// How `request`'s schema goes out.
    /// A schema in its dialect's non-strict form ([`ChatRequest::schema_relaxed`]) goes out as a tool
    /// without `strict`: the native output format takes strict schemas only.
    fn output_for(&self, request: &ChatRequest) -> AnthropicOutput {
        if request.tool_call || request.schema_relaxed {
            AnthropicOutput::Tool
        } else {
            self.output
        }
    }
}

/// A user message with media as Anthropic's content blocks: each image an `image` block and each PDF a
/// `document` block (titled with the part's name), whose `source` is `base64` with the media type or
/// `url`; then the text, unless it is empty (the image alone is the input, and Anthropic refuses an
/// empty text block).
fn media_blocks(message: &Message) -> Value {
    let mut blocks: Vec<Value> = message
        .media
        .iter()
        .map(|media| {
            let source = match (media.url(), media.base64()) {
                (Some(url), _) => json!({"type": "url", "url": url}),
                (None, data) => json!({
                    "type": "base64",
                    "media_type": media.media_type().as_str(),
                    "data": data.unwrap_or_default(),
                }),
            };
            if media.media_type().is_image() {
                json!({"type": "image", "source": source})
            } else {
                let mut block = json!({"type": "document", "source": source});
                if let Some(name) = media.name() {
                    block["title"] = json!(name);
                }
                block
            }
        })
        .collect();
    if !message.content.is_empty() {
        blocks.push(json!({"type": "text", "text": message.content}));
    }
    Value::Array(blocks)
}

/// Puts a `cache_control` breakpoint with `ttl` (if any) on the last of `blocks`.
fn mark_last(blocks: &mut Value, ttl: Option<CacheTtl>) {
    let (Some(ttl), Some(last)) = (ttl, blocks.as_array_mut().and_then(|b| b.last_mut())) else {
        return;
    };
    last["cache_control"] = ttl.control();
}

impl Protocol for MessagesWire {
    const NAME: &'static str = "Anthropic";
    const FRAMING: Framing = Framing::Sse;
    const API: Option<OfficialApi> = Some(ANTHROPIC_API);
    const KEY_HEADER: Option<&'static str> = Some("x-api-key");
    const CONNECT_HINT: &'static str =
        "is the API reachable from here? Check the base URL (and any proxy)";
    const MODEL_HINT: &'static str =
        "check the model name (e.g. claude-sonnet-4-5); GET {base}/v1/models lists the models this key can use";
    const ENDPOINT_HINT: &'static str = "is {base} the API root? requests go to {base}/v1/messages";
    type Stream = MessageEvents;
    const MEDIA: MediaSupport = MediaSupport {
        backend: "Anthropic",
        images: true,
        pdfs: true,
        image_urls: true,
        pdf_urls: true,
        hint: "",
    };
    const MEDIA_LIMITS: MediaLimits = MediaLimits::anthropic();
    const LOGPROBS: bool = false;

    fn dialect(&self) -> Dialect {
        Dialect::Anthropic
    }

    fn endpoint(&self, site: &Site, _stream: bool) -> String {
        if site.base.ends_with("/v1") {
            format!("{}/messages", site.base)
        } else {
            format!("{}/v1/messages", site.base)
        }
    }

    fn headers(&self) -> Vec<(&'static str, String)> {
        let mut headers = vec![("anthropic-version", self.version.clone())];
        if self.output == AnthropicOutput::BetaJson {
            headers.push(("anthropic-beta", STRUCTURED_OUTPUTS_BETA.to_owned()));
        }
        headers
    }

    fn body(&self, site: &Site, request: &ChatRequest, stream: bool) -> Result<Value, LlmError> {
        let inner = self;
        let tool = inner.tool(request);
        let tool_bytes = tool.as_ref().map_or(0, |t| t.to_string().len());
        let breakpoints = inner
            .prompt_cache
            .breakpoints(request, &site.model, tool_bytes);
        // The Messages API takes the system prompt in its own field; a system message inside the
        // conversation joins it.
        let mut system: Vec<&str> = request.system.iter().map(String::as_str).collect();
        let mut messages = Vec::with_capacity(request.messages.len());
        for (index, message) in request.messages.iter().enumerate() {
            let cached = breakpoints.after_message(index);
            let context = breakpoints.within_message(index);
            match message.role {
                Role::System => system.push(&message.content),
                // The shared context at the start of the input (no media, checked with the
                // breakpoint) is a block of its own, with its breakpoint; the rest follows it.
                role if context.is_some() => {
                    let (head, rest) = message.content.split_at(request.stable_input);
                    let mut blocks =
                        json!([{"type": "text", "text": head}, {"type": "text", "text": rest}]);
                    if let (Some(ttl), Some(first)) = (context, blocks.get_mut(0)) {
                        first["cache_control"] = ttl.control();
                    }
                    mark_last(&mut blocks, cached);
                    messages.push(json!({"role": role, "content": blocks}))
                }
                // An empty text cannot be a block (Anthropic refuses one): it carries no breakpoint.
                role if message.media.is_empty()
                    && (cached.is_none() || message.content.is_empty()) =>
                {
                    messages.push(json!({"role": role, "content": message.content}))
                }
                role => {
                    let mut blocks = media_blocks(message);
                    mark_last(&mut blocks, cached);
                    messages.push(json!({"role": role, "content": blocks}))
                }
            }
        }
        let mut body = Map::new();
        body.insert("model".into(), json!(site.model));
        body.insert(
            "max_tokens".into(),
            json!(request.max_tokens.unwrap_or(inner.default_max_tokens)),
        );
        if !system.is_empty() {
            let system = system.join("\n\n");
            let system = match breakpoints.system {
                Some(ttl) => {
                    json!([{"type": "text", "text": system, "cache_control": ttl.control()}])
                }
                None => json!(system),
            };
            body.insert("system".into(), system);
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
            match inner.output_for(request) {
                AnthropicOutput::Json => {
                    body.insert("output_config".into(), json!({ "format": format }));
                }
                AnthropicOutput::BetaJson => {
                    body.insert("output_format".into(), format);
                }
                AnthropicOutput::Tool => {
                    if let Some(tool) = tool {
                        let name = tool["name"].clone();
                        body.insert("tools".into(), json!([tool]));
                        body.insert("tool_choice".into(), json!({"type": "tool", "name": name}));
                    }
                }
            }
        }
        Ok(Value::Object(body))
    }

    fn read(&self, answer: &Value) -> Result<ChatResponse, LlmError> {
        read_message(answer)
    }
}

/// A whole (non-streamed) message: the text blocks, or the tool call's `input`, are the answer;
/// thinking blocks are reasoning.
fn read_message(value: &Value) -> Result<ChatResponse, LlmError> {
    let blocks = value
        .get("content")
        .and_then(Value::as_array)
        .ok_or_else(|| backend::invalid("the message has no content blocks", value))?;
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
        // Anthropic's API gives no token log-probabilities.
        logprobs: None,
        model: value
            .get("model")
            .and_then(Value::as_str)
            .map(str::to_owned),
        cached: false,
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
    blocks: Vec<(u64, Block)>,
}

impl MessageEvents {
    fn block(&mut self, index: u64) -> Option<&mut Block> {
        self.blocks
            .iter_mut()
            .find(|(i, _)| *i == index)
            .map(|(_, block)| block)
    }
}

impl StreamReader for MessageEvents {
    const UNFINISHED: &'static str = "no stop_reason, no message_stop";

    fn event(&mut self, data: &str, answer: &mut Answer) -> Result<(), LlmError> {
        let event = backend::json_event(data)?;
        let index = event.get("index").and_then(Value::as_u64).unwrap_or(0);
        match event.get("type").and_then(Value::as_str).unwrap_or("") {
            "message_start" => {
                let message = event.get("message");
                answer.model = message
                    .and_then(|m| m.get("model"))
                    .and_then(Value::as_str)
                    .map(str::to_owned);
                read_usage(message.and_then(|m| m.get("usage")), &mut answer.usage);
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
                    let text = block.and_then(|b| b.get("text")).and_then(Value::as_str);
                    answer.text(text.unwrap_or_default());
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
                    Some("text_delta") => answer.text(field("text")),
                    Some("input_json_delta") => {
                        let json = field("partial_json");
                        if let Some(block) = self.block(index) {
                            if *block == Block::EmptyTool && !json.is_empty() {
                                *block = Block::Answer;
                            }
                        }
                        answer.text(json);
                    }
                    Some("thinking_delta") => answer.thought(field("thinking")),
                    _ => {}
                }
            }
            "content_block_stop" => {
                if matches!(self.block(index), Some(Block::EmptyTool)) {
                    // A tool called with no input streams no delta: its input is `{}`.
                    answer.text("{}");
                }
            }
            "message_delta" => {
                if let Some(finish) =
                    stop_reason(event.get("delta").and_then(|d| d.get("stop_reason")))
                {
                    answer.finish = Some(finish);
                }
                read_usage(event.get("usage"), &mut answer.usage);
            }
            "message_stop" => answer.done(),
            "error" => {
                let error = event.get("error");
                let text = |key: &str| error.and_then(|e| e.get(key)).and_then(Value::as_str);
                return Err(LlmError::Stream {
                    message: format!(
                        "the server reported {} mid-answer: {}",
                        text("type").unwrap_or("error"),
                        text("message").unwrap_or("no message")
                    ),
                    received: String::new(),
                });
            }
            _ => {} // `ping` and event types added later
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::ChatEvent;
    use crate::llm::{Message, Secret};
    use std::collections::VecDeque;

    fn body_of(llm: &Anthropic, request: &ChatRequest, stream: bool) -> Value {
        llm.backend.request_body(request, stream).unwrap()
    }

    /// The answer text of `events`.
    fn deltas(events: &VecDeque<ChatEvent>) -> String {
        let text = events.iter().filter_map(|e| match e {
            ChatEvent::Delta(d) => Some(d.as_str()),
            _ => None,
        });
        text.collect()
    }

    /// The events a stream of these lines gives, and how it ended.
    fn read(body: &str) -> (VecDeque<ChatEvent>, Result<(), LlmError>) {
        backend::read_body::<MessageEvents>(Framing::Sse, body)
    }

    fn backend(output: AnthropicOutput) -> Anthropic {
        Anthropic::builder("claude-test")
            .api_key("sk-ant-secret")
            .output(output)
            .build()
            .unwrap()
    }

    #[test]
    fn breakpoints_mark_the_system_prompt_and_the_last_worked_example_once_long_enough() {
        let long = "rule. ".repeat(700); // about 1,400 tokens: above Sonnet's 1,024
        let mut request = ChatRequest::default()
            .with_system(long.as_str())
            .with_message(Message::user("example input"))
            .with_message(Message::assistant("{\"a\":1}"))
            .with_message(Message::user("the document"));
        request.stable_messages = 2;
        let llm = Anthropic::builder("claude-sonnet-4-5")
            .api_key("k")
            .build()
            .unwrap();
        let json = body_of(&llm, &request, true);
        assert_eq!(
            json["system"],
            json!([{"type": "text", "text": long, "cache_control": {"type": "ephemeral"}}])
        );
        assert_eq!(
            json["messages"][0],
            json!({"role": "user", "content": "example input"})
        );
        assert_eq!(
            json["messages"][1]["content"],
            json!([{"type": "text", "text": "{\"a\":1}", "cache_control": {"type": "ephemeral"}}])
        );
        assert_eq!(json["messages"][2]["content"], "the document");
        // Below the model's minimum (Haiku 4.5: 4,096 tokens), no breakpoint; off, none either.
        let haiku = Anthropic::builder("claude-haiku-4-5")
            .api_key("k")
            .build()
            .unwrap();
        let short = body_of(&haiku, &request, true);
        assert_eq!(short["system"], json!(long));
        assert_eq!(short["messages"][1]["content"], "{\"a\":1}");
        let off = Anthropic::builder("claude-sonnet-4-5")
            .api_key("k")
            .prompt_cache(PromptCache::off())
            .build()
            .unwrap();
        assert_eq!(body_of(&off, &request, true)["system"], json!(long));
        // An hour on the system prompt, five minutes on the input: in order, and on the input.
        let hour = Anthropic::builder("claude-sonnet-4-5")
            .api_key("k")
            .prompt_cache(
                PromptCache::new()
                    .system(Some(CacheTtl::OneHour))
                    .examples(None)
                    .input(Some(CacheTtl::FiveMinutes)),
            )
            .build()
            .unwrap();
        let json = body_of(&hour, &request, true);
        assert_eq!(
            json["system"][0]["cache_control"],
            json!({"type": "ephemeral", "ttl": "1h"})
        );
        assert_eq!(json["messages"][1]["content"], "{\"a\":1}");
        assert_eq!(
            json["messages"][2]["content"][0]["cache_control"],
            json!({"type": "ephemeral"})
        );
    }

    #[test]
    fn the_shared_context_of_the_input_is_a_block_of_its_own_with_its_breakpoint() {
        let context = "Glossary: a lessee rents. ".repeat(200); // about 1,700 tokens
        let input = format!("{context}Text: the chunk");
        let mut request = ChatRequest::default()
            .with_system("be exact")
            .with_message(Message::user(input.as_str()));
        request.stable_input = context.len();
        let llm = |cache: PromptCache| {
            Anthropic::builder("claude-sonnet-4-5")
                .api_key("k")
                .prompt_cache(cache)
                .build()
                .unwrap()
        };
        let json = body_of(&llm(PromptCache::new()), &request, true);
        // The system prompt alone is too short to be cached; the context after it is long enough.
        assert_eq!(json["system"], "be exact");
        assert_eq!(
            json["messages"][0]["content"],
            json!([
                {"type": "text", "text": context, "cache_control": {"type": "ephemeral"}},
                {"type": "text", "text": "Text: the chunk"},
            ])
        );
        // With the input's breakpoint too, both blocks carry one.
        let both = PromptCache::new()
            .system(Some(CacheTtl::OneHour))
            .examples(Some(CacheTtl::OneHour))
            .context(Some(CacheTtl::OneHour))
            .input(Some(CacheTtl::FiveMinutes));
        let json = body_of(&llm(both), &request, true);
        let blocks = &json["messages"][0]["content"];
        assert_eq!(
            blocks[0]["cache_control"],
            json!({"type": "ephemeral", "ttl": "1h"})
        );
        assert_eq!(blocks[1]["cache_control"], json!({"type": "ephemeral"}));
        // Off, or an input with media (they come first and differ), and the message is one text.
        let off = PromptCache::new().context(None);
        assert_eq!(
            body_of(&llm(off), &request, true)["messages"][0]["content"],
            input
        );
        request.messages[0] =
            Message::user(input.as_str()).with_media(vec![crate::llm::Media::png(vec![1, 2, 3])]);
        let json = body_of(&llm(PromptCache::new()), &request, true);
        let blocks = json["messages"][0]["content"].as_array().unwrap().clone();
        assert_eq!(blocks.len(), 2, "{blocks:?}");
        assert!(blocks.iter().all(|b| b.get("cache_control").is_none()));
        assert_eq!(blocks[1]["text"], input);
    }

    #[test]
    fn the_system_prompt_goes_in_its_own_field_and_the_schema_where_the_output_says() {
        let request = ChatRequest::new("hi")
            .with_system("be brief")
            .with_message(Message::system("and exact"))
            .with_schema("Vec<Person>", json!({"type": "object"}))
            .with_temperature(1.5);
        let json = body_of(&backend(AnthropicOutput::Json), &request, true);
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
            body_of(&beta, &request, true)["output_format"]["schema"],
            json!({"type": "object"})
        );
        assert!(beta
            .backend
            .protocol()
            .headers()
            .contains(&("anthropic-beta", STRUCTURED_OUTPUTS_BETA.to_owned())));

        for tool in [
            body_of(&backend(AnthropicOutput::Tool), &request, false),
            body_of(
                &backend(AnthropicOutput::Json),
                &request.clone().with_tool_call(true),
                false,
            ),
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
        let body = body_of(&backend(AnthropicOutput::Json), &relaxed, false);
        assert!(body.get("output_config").is_none(), "{body}");
        assert_eq!(body["tools"][0]["input_schema"], json!({"type": "object"}));
        assert!(body["tools"][0].get("strict").is_none(), "{body}");
    }

    #[test]
    fn anthropic_api_key_goes_to_anthropic_alone_and_no_key_over_plain_http_elsewhere() {
        let env =
            |name: &str| (name == ANTHROPIC_API.key_env).then(|| "sk-ant-implicit".to_owned());
        let official = Anthropic::builder("m").env_lookup(env).build().unwrap();
        assert_eq!(
            official.backend.key().cloned(),
            Some(Secret::new("sk-ant-implicit"))
        );
        for elsewhere in [
            "http://127.0.0.1:8000",
            "https://gateway.example.com/anthropic",
            "https://generativelanguage.googleapis.com",
        ] {
            let llm = Anthropic::builder("m")
                .base_url(elsewhere)
                .env_lookup(env)
                .build()
                .unwrap();
            assert!(!llm.has_key(), "{elsewhere}");
        }
        let err = Anthropic::builder("m")
            .base_url("http://10.255.255.1:1")
            .api_key_env(ANTHROPIC_API.key_env)
            .env_lookup(env)
            .build()
            .unwrap_err();
        assert!(matches!(err, LlmError::InsecureKey { .. }), "{err:?}");
        let allowed = Anthropic::builder("m")
            .base_url("http://10.255.255.1:1")
            .api_key_env(ANTHROPIC_API.key_env)
            .env_lookup(env)
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
                .backend
                .endpoint(true)
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
        let (events, end) = read(concat!(
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
        ));
        end.unwrap();
        assert_eq!(deltas(&events), r#"{"a":1}"#);
        let Some(ChatEvent::Done(done)) = events.back() else {
            panic!("no Done: {events:?}")
        };
        assert_eq!(done.thinking.as_deref(), Some("let me see"));
        assert_eq!(
            (done.usage.prompt_tokens, done.usage.completion_tokens),
            (9, 12)
        );
        assert_eq!(done.finish, Finish::Stop);
    }

    #[test]
    fn a_tool_without_input_deltas_answers_an_empty_object_and_an_error_event_ends_the_stream() {
        let (events, end) = read(concat!(
            "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"input\":{}}}\n\n",
            "data: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
            "data: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n",
        ));
        assert_eq!(events, [ChatEvent::Delta("{}".into())]);
        let err = end.unwrap_err();
        assert!(matches!(err, LlmError::Stream { .. }));
        assert!(err.to_string().contains("overloaded_error"), "{err}");
        let (_, end) = read("data: {\"type\":\"message_start\"}\n\n");
        assert!(matches!(end, Err(LlmError::Stream { .. })), "{end:?}");
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
            let (mut events, end) = read(&stream);
            end.unwrap();
            let Some(ChatEvent::Done(done)) = events.pop_back() else {
                panic!("no Done");
            };
            let deltas = deltas(&events);
            let expected = if tool && text.is_empty() { "{}" } else { text.as_str() };
            proptest::prop_assert_eq!(&deltas, expected);
            proptest::prop_assert_eq!(done.text.as_str(), expected);
        }
    }
}

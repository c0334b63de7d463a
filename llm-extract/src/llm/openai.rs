//! The OpenAI-compatible backend: `POST {base}/chat/completions`, streamed as server-sent events.
//!
//! Works with vLLM, llama-server, LM Studio, Ollama's `/v1` and OpenAI itself (see the project's
//! `backends.md` §2). The schema goes in `response_format: {"type": "json_schema", "json_schema": {name,
//! schema, strict}}`, the only form every one of them honours; a stream ends with `data: [DONE]`, and usage
//! comes in a last chunk when `stream_options.include_usage` is set. With [`ChatRequest::tool_call`]
//! ([`Mode::Tool`](crate::extract::Mode::Tool)) the schema goes out as one forced function instead
//! (`tools` + `tool_choice`), and the call's `arguments` stream in as the answer.

use super::credentials::{KeyChoice, OfficialApi};
use super::http::{
    self, http_builder_methods, HttpClient, HttpOptions, Outgoing, Secret, WireFormat,
};
use super::{
    BoxFuture, ChatEvent, ChatRequest, ChatResponse, ChatStream, Finish, Llm, LlmError, Usage,
};
use crate::schema::Dialect;
use serde_json::{json, Map, Value};
use std::collections::VecDeque;
use std::sync::Arc;

/// OpenAI's own API, the one server `OPENAI_API_KEY` goes to unasked.
const OPENAI_API: OfficialApi = OfficialApi {
    host: "api.openai.com",
    key_env: "OPENAI_API_KEY",
    key_required: false,
};

/// A model behind an OpenAI-compatible chat completions API. Cheap to clone.
///
/// The API key, if any, is held as a [`Secret`]: it never appears in `Debug` output or in errors. A key
/// goes only where it is named: without [`api_key`](OpenAiBuilder::api_key) or
/// [`api_key_env`](OpenAiBuilder::api_key_env), `OPENAI_API_KEY` (if set) is sent to OpenAI's own API
/// (`https://api.openai.com`) and to no other server; and no key goes over plain `http` to a host other
/// than this machine unless [`allow_insecure_key`](OpenAiBuilder::allow_insecure_key) says so.
///
/// ```no_run
/// use llm_extract::llm::OpenAiCompatible;
/// use llm_extract::Dialect;
///
/// # fn main() -> Result<(), llm_extract::llm::LlmError> {
/// // A local llama-server or vLLM, no key; "/v1" is added to a bare host.
/// let local = OpenAiCompatible::new("http://127.0.0.1:8080", "any")?;
/// // A hosted API, key from the environment variable named for it, strict structured outputs.
/// let hosted = OpenAiCompatible::builder("https://api.example.com/v1", "gpt-4o-mini")
///     .api_key_env("EXAMPLE_API_KEY")
///     .dialect(Dialect::OpenAiStrict)
///     .build()?;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct OpenAiCompatible {
    inner: Arc<Inner>,
}

struct Inner {
    endpoint: String,
    base: String,
    model: String,
    key: Option<Secret>,
    http: HttpClient,
    dialect: Dialect,
    strict: bool,
    include_usage: bool,
    max_tokens_key: &'static str,
    repeat_penalty: bool,
    tool_choice_required: bool,
}

impl std::fmt::Debug for Inner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenAiCompatible")
            .field("base", &http::redact_url(&self.base))
            .field("model", &self.model)
            .field("key", &self.key)
            .field("http", &self.http)
            .field("dialect", &self.dialect)
            .field("strict", &self.strict)
            .field("include_usage", &self.include_usage)
            .field("max_tokens_key", &self.max_tokens_key)
            .field("tool_choice_required", &self.tool_choice_required)
            .finish()
    }
}

/// Builds an [`OpenAiCompatible`].
#[derive(Clone)]
pub struct OpenAiBuilder {
    base_url: String,
    model: String,
    key: KeyChoice,
    http: HttpOptions,
    dialect: Dialect,
    strict: bool,
    include_usage: bool,
    max_completion_tokens: bool,
    repeat_penalty: bool,
    tool_choice_required: bool,
}

impl std::fmt::Debug for OpenAiBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenAiBuilder")
            .field("base_url", &http::redact_url(&self.base_url))
            .field("model", &self.model)
            .field("key", &self.key)
            .field("http", &self.http)
            .field("dialect", &self.dialect)
            .field("strict", &self.strict)
            .field("include_usage", &self.include_usage)
            .field("max_completion_tokens", &self.max_completion_tokens)
            .field("tool_choice_required", &self.tool_choice_required)
            .finish()
    }
}

impl OpenAiBuilder {
    /// The API key, sent as a bearer token.
    pub fn api_key(mut self, key: impl Into<Secret>) -> Self {
        self.key.key = Some(key.into());
        self
    }

    /// Reads the API key from the environment variable `name` when the backend is built (an error if it is
    /// unset, so a typo does not turn into an anonymous request). Without this or
    /// [`api_key`](Self::api_key), `OPENAI_API_KEY` is read for OpenAI's own API only.
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

    /// The schema dialect the server enforces (default [`Dialect::OpenAiStrict`]). llama-server converts
    /// schemas with llama.cpp's converter, so [`Dialect::Ollama`] describes it exactly.
    pub fn dialect(mut self, dialect: Dialect) -> Self {
        self.dialect = dialect;
        self
    }

    /// The `strict` flag of `response_format.json_schema` (default `true`).
    pub fn strict(mut self, strict: bool) -> Self {
        self.strict = strict;
        self
    }

    /// Whether a streamed request asks for usage (`stream_options.include_usage`, default `true`); turn it
    /// off for a server that rejects the option.
    pub fn include_usage(mut self, include: bool) -> Self {
        self.include_usage = include;
        self
    }

    /// Sends the token limit as `max_completion_tokens` instead of `max_tokens` (OpenAI's reasoning models
    /// accept only the former; most other servers only the latter). Default `false`.
    pub fn max_completion_tokens(mut self, yes: bool) -> Self {
        self.max_completion_tokens = yes;
        self
    }

    /// Also sends a request's repeat penalty as llama-server's own `repeat_penalty` (the multiplicative
    /// penalty Ollama and the embedded engine use), beside the standard `frequency_penalty`. Default
    /// `false`: OpenAI itself rejects fields it does not know.
    pub fn repeat_penalty(mut self, yes: bool) -> Self {
        self.repeat_penalty = yes;
        self
    }

    /// Forces the tool of [`Mode::Tool`](crate::extract::Mode::Tool) with `tool_choice: "required"` and
    /// `parallel_tool_calls: false` instead of naming the function (`{"type": "function", "function":
    /// {"name"}}`, the default). llama-server takes only the string forms: it drops a named choice with
    /// a warning and falls back to `"auto"`, so the model may answer in text. With the one tool this
    /// mode sends, `"required"` asks for the same call. Default `false`.
    pub fn tool_choice_required(mut self, yes: bool) -> Self {
        self.tool_choice_required = yes;
        self
    }

    http_builder_methods!();

    /// Builds the backend.
    pub fn build(self) -> Result<OpenAiCompatible, LlmError> {
        let base = normalize_base(&self.base_url)?;
        let key = self.key.resolve(&base, OPENAI_API)?;
        Ok(OpenAiCompatible {
            inner: Arc::new(Inner {
                endpoint: format!("{base}/chat/completions"),
                base,
                model: self.model,
                key,
                http: HttpClient::new(self.http)?,
                dialect: self.dialect,
                strict: self.strict,
                include_usage: self.include_usage,
                max_tokens_key: if self.max_completion_tokens {
                    "max_completion_tokens"
                } else {
                    "max_tokens"
                },
                repeat_penalty: self.repeat_penalty,
                tool_choice_required: self.tool_choice_required,
            }),
        })
    }
}

impl OpenAiCompatible {
    /// The model `model` at `base_url` (the API root, e.g. `http://host:8000/v1`; a bare `http://host:port`
    /// gets `/v1`), without an API key.
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> Result<Self, LlmError> {
        Self::builder(base_url, model).build()
    }

    /// A builder for the model `model` at `base_url`.
    pub fn builder(base_url: impl Into<String>, model: impl Into<String>) -> OpenAiBuilder {
        OpenAiBuilder {
            base_url: base_url.into(),
            model: model.into(),
            key: KeyChoice::default(),
            http: HttpOptions::default(),
            dialect: Dialect::OpenAiStrict,
            strict: true,
            include_usage: true,
            max_completion_tokens: false,
            repeat_penalty: false,
            tool_choice_required: false,
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
            key_header: None,
            headers: &[],
            connect_hint: "is the server running there? Check the base URL",
        }
    }

    fn body(&self, request: &ChatRequest, stream: bool) -> Value {
        let inner = &self.inner;
        let messages = request.wire_messages();
        let mut body = Map::new();
        body.insert("model".into(), json!(inner.model));
        body.insert("messages".into(), json!(messages));
        body.insert("stream".into(), json!(stream));
        if stream && inner.include_usage {
            body.insert("stream_options".into(), json!({"include_usage": true}));
        }
        if let Some(n) = request.max_tokens {
            body.insert(inner.max_tokens_key.into(), json!(n));
        }
        if let Some(t) = request.temperature {
            body.insert("temperature".into(), json!(t));
        }
        if let Some(seed) = request.seed {
            body.insert("seed".into(), json!(seed));
        }
        if let Some(penalty) = request.repeat_penalty {
            // The standard field every OpenAI-compatible server takes (llama-server included): a
            // multiplicative penalty of 1.3 becomes a frequency penalty of 0.3, within OpenAI's [-2, 2].
            body.insert(
                "frequency_penalty".into(),
                json!((penalty - 1.0).clamp(-2.0, 2.0)),
            );
            if inner.repeat_penalty {
                body.insert("repeat_penalty".into(), json!(penalty));
            }
        }
        if !request.stop.is_empty() {
            body.insert("stop".into(), json!(request.stop));
        }
        if let (Some(schema), true) = (&request.schema, request.tool_call) {
            // Tool mode: one function the model must call; its arguments are the answer.
            let name = http::tool_name(request.schema_name.as_deref());
            body.insert(
                "tools".into(),
                json!([{
                    "type": "function",
                    "function": {
                        "name": name,
                        "description": "Record the answer: call this function with the extracted value as its arguments.",
                        "parameters": schema,
                        "strict": inner.strict && !request.schema_relaxed,
                    }
                }]),
            );
            if inner.tool_choice_required {
                // The one tool is the only one the model may call, once.
                body.insert("tool_choice".into(), json!("required"));
                body.insert("parallel_tool_calls".into(), json!(false));
            } else {
                body.insert(
                    "tool_choice".into(),
                    json!({"type": "function", "function": {"name": name}}),
                );
            }
        } else if let Some(schema) = &request.schema {
            body.insert(
                "response_format".into(),
                json!({
                    "type": "json_schema",
                    "json_schema": {
                        "name": http::tool_name(request.schema_name.as_deref()),
                        "schema": schema,
                        "strict": inner.strict && !request.schema_relaxed,
                    }
                }),
            );
        }
        Value::Object(body)
    }

    /// Gives the generic HTTP errors their meaning here, and scrubs the key from everything (first, so
    /// that the hints added here are not cut with the server's text).
    fn map_error(&self, err: LlmError) -> LlmError {
        match http::scrub(err, self.inner.key.as_ref(), &self.inner.base) {
            LlmError::Http {
                status: 404,
                message,
                ..
            } if message.to_lowercase().contains("model") => LlmError::ModelNotFound {
                hint: format!(
                    "check the model name; GET {}/models lists the models this server has",
                    http::redact_url(&self.inner.base)
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
                    "{message} (is {} the API root? it usually ends in /v1)",
                    http::redact_url(&self.inner.base)
                ),
                retry_after,
            },
            LlmError::Http {
                status: status @ (401 | 403),
                message,
                ..
            } => LlmError::Auth {
                status,
                message: format!(
                    "{message} ({})",
                    OPENAI_API.auth_hint(self.has_key(), "Authorization: Bearer")
                ),
            },
            other => other,
        }
    }
}

impl Llm for OpenAiCompatible {
    fn dialect(&self) -> Dialect {
        self.inner.dialect
    }

    fn chat(&self, request: ChatRequest) -> BoxFuture<'_, Result<ChatResponse, LlmError>> {
        Box::pin(async move {
            let body = self.body(&request, false);
            self.inner
                .http
                .send_and_read(&self.outgoing(&body), |bytes| {
                    read_completion(&http::json_body(bytes)?)
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
                .stream(&self.outgoing(&body), SseWire::default, move |e| {
                    this.map_error(e)
                })
                .await
        })
    }
}

/// A non-streamed completion.
fn read_completion(value: &Value) -> Result<ChatResponse, LlmError> {
    if let Some(message) = http::error_text(value) {
        // A success status with an error object: transient, as a body that is not the answer.
        return Err(LlmError::InvalidResponse {
            message: "the server answered an error with a success status".into(),
            body: message,
        });
    }
    let choice = value
        .get("choices")
        .and_then(|c| c.get(0))
        .ok_or_else(|| invalid("the answer has no choices", value))?;
    let message = choice.get("message");
    let field = |key: &str| {
        message
            .and_then(|m| m.get(key))
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    let refusal = field("refusal");
    let text = field("content")
        .filter(|content| !content.is_empty())
        .or_else(|| tool_arguments(message.and_then(|m| m.get("tool_calls"))))
        .or_else(|| refusal.clone())
        .unwrap_or_default();
    let finish = match refusal {
        Some(_) => Finish::Other("refusal".into()),
        None => finish_reason(choice.get("finish_reason")).unwrap_or(Finish::Stop),
    };
    Ok(ChatResponse {
        text,
        thinking: field("reasoning_content")
            .or_else(|| field("reasoning"))
            .filter(|t| !t.is_empty()),
        usage: usage(value.get("usage")).unwrap_or_default(),
        finish,
        model: value
            .get("model")
            .and_then(Value::as_str)
            .map(str::to_owned),
    })
}

/// The arguments of the first tool call: the answer. Tool mode asks for one call; later ones (llama-server
/// makes them, even with `parallel_tool_calls: false`) are ignored, not appended to the first. A streamed
/// piece names its call by `index`; a whole message lists its calls in order.
fn tool_arguments(calls: Option<&Value>) -> Option<String> {
    let (_, first) = calls?
        .as_array()?
        .iter()
        .enumerate()
        .find(|(position, call)| {
            let index = call.get("index").and_then(Value::as_u64);
            index.unwrap_or(*position as u64) == 0
        })?;
    first
        .pointer("/function/arguments")
        .and_then(Value::as_str)
        .filter(|a| !a.is_empty())
        .map(str::to_owned)
}

fn finish_reason(value: Option<&Value>) -> Option<Finish> {
    match value.and_then(Value::as_str)? {
        "stop" | "tool_calls" => Some(Finish::Stop),
        "length" => Some(Finish::Length),
        other => Some(Finish::Other(other.to_owned())),
    }
}

fn usage(value: Option<&Value>) -> Option<Usage> {
    let usage = value.filter(|u| u.is_object())?;
    let count = |key: &str| usage.get(key).and_then(Value::as_u64).unwrap_or(0);
    Some(Usage {
        prompt_tokens: count("prompt_tokens"),
        completion_tokens: count("completion_tokens"),
        estimated: false,
        ..Usage::default()
    })
}

/// Server-sent events: `data: <chunk>` lines, ending with `data: [DONE]`.
#[derive(Default)]
struct SseWire {
    text: String,
    thinking: String,
    finish: Option<Finish>,
    usage: Usage,
    model: Option<String>,
    done: bool,
    /// Whether any `data:` line came.
    data: bool,
    /// The first line that is no SSE field, if any.
    stray: Option<String>,
}

impl WireFormat for SseWire {
    fn line(&mut self, line: &str, events: &mut VecDeque<ChatEvent>) -> Result<(), LlmError> {
        // Only `data:` fields matter; comments (`:`), `event:`, `id:`, `retry:` and the blank lines between
        // events are skipped. Each data line is taken as one event: no server splits a chunk across lines.
        let Some(data) = line.strip_prefix("data:") else {
            let field = ["event:", "id:", "retry:"]
                .iter()
                .any(|f| line.starts_with(f));
            if self.stray.is_none() && !line.is_empty() && !line.starts_with(':') && !field {
                self.stray = Some(line.to_owned());
            }
            return Ok(());
        };
        self.data = true;
        let data = data.trim();
        if data.is_empty() {
            return Ok(());
        }
        if data == "[DONE]" {
            self.finish_with(events);
            return Ok(());
        }
        let chunk: Value = serde_json::from_str(data).map_err(|e| LlmError::InvalidResponse {
            message: format!("an event of the stream is not JSON ({e})"),
            body: data.to_owned(),
        })?;
        if let Some(message) = http::error_text(&chunk) {
            return Err(LlmError::Stream {
                message: format!("the server reported an error mid-answer: {message}"),
                partial: String::new(),
            });
        }
        if let Some(usage) = usage(chunk.get("usage")) {
            self.usage = usage;
        }
        if self.model.is_none() {
            self.model = chunk
                .get("model")
                .and_then(Value::as_str)
                .map(str::to_owned);
        }
        let Some(choice) = chunk.get("choices").and_then(|c| c.get(0)) else {
            return Ok(());
        };
        let delta = choice.get("delta");
        let field = |key: &str| {
            delta
                .and_then(|d| d.get(key))
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
        };
        if let Some(thinking) = field("reasoning_content").or_else(|| field("reasoning")) {
            self.thinking.push_str(thinking);
            events.push_back(ChatEvent::Thinking(thinking.to_owned()));
        }
        if let Some(content) = field("content") {
            self.text.push_str(content);
            events.push_back(ChatEvent::Delta(content.to_owned()));
        }
        // Tool mode: the call's arguments stream as `tool_calls[].function.arguments` pieces.
        if let Some(arguments) = tool_arguments(delta.and_then(|d| d.get("tool_calls"))) {
            self.text.push_str(&arguments);
            events.push_back(ChatEvent::Delta(arguments));
        }
        if let Some(finish) = finish_reason(choice.get("finish_reason")) {
            self.finish = Some(finish);
        }
        Ok(())
    }

    fn end(&mut self, events: &mut VecDeque<ChatEvent>) -> Result<(), LlmError> {
        if self.done {
            return Ok(());
        }
        if let Some(stray) = self.stray.take().filter(|_| !self.data) {
            // A proxy's error page, or an error object answered with status 200.
            return Err(LlmError::InvalidResponse {
                message: "the body is not a stream of server-sent events".into(),
                body: stray,
            });
        }
        if self.finish.is_some() {
            // A finish reason but no `[DONE]`: the answer is complete, the server is just terse.
            self.finish_with(events);
            return Ok(());
        }
        Err(LlmError::Stream {
            message: "the stream ended before the server finished the answer (no finish_reason, no [DONE])"
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

impl SseWire {
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

/// The API root without a trailing slash; a URL without a path gets `/v1`.
fn normalize_base(raw: &str) -> Result<String, LlmError> {
    let trimmed = raw.trim().trim_end_matches('/');
    let shown = http::redact_url(trimmed);
    let url = reqwest::Url::parse(trimmed).map_err(|e| LlmError::Config {
        message: format!(
            "the base URL {shown:?} is not a valid URL ({e}); use one like http://127.0.0.1:8080/v1"
        ),
    })?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(LlmError::Config {
            message: format!("the base URL {shown:?} must start with http:// or https://"),
        });
    }
    if url.path().trim_matches('/').is_empty() {
        Ok(format!("{trimmed}/v1"))
    } else {
        Ok(trimmed.to_owned())
    }
}

fn invalid(message: &str, value: &Value) -> LlmError {
    LlmError::InvalidResponse {
        message: message.to_owned(),
        body: value.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_urls_are_normalized() {
        assert_eq!(normalize_base("http://h:8080").unwrap(), "http://h:8080/v1");
        assert_eq!(
            normalize_base("http://h:8080/").unwrap(),
            "http://h:8080/v1"
        );
        assert_eq!(normalize_base("http://h/v1/").unwrap(), "http://h/v1");
        assert_eq!(
            normalize_base("http://h/openai/v1").unwrap(),
            "http://h/openai/v1"
        );
        assert!(matches!(
            normalize_base("h:8080"),
            Err(LlmError::Config { .. })
        ));
        assert!(matches!(
            normalize_base("nonsense"),
            Err(LlmError::Config { .. })
        ));
    }

    #[test]
    fn openai_api_key_goes_to_openai_alone_and_no_key_over_plain_http_elsewhere() {
        // The only test of this crate that sets OPENAI_API_KEY.
        std::env::set_var("OPENAI_API_KEY", "sk-openai-implicit");
        let official = OpenAiCompatible::new("https://api.openai.com/v1", "m").unwrap();
        assert_eq!(official.inner.key, Some(Secret::new("sk-openai-implicit")));
        for elsewhere in [
            "http://127.0.0.1:8000/v1",
            "https://gateway.example.com/v1",
            "http://node1:8000/v1",
        ] {
            let llm = OpenAiCompatible::new(elsewhere, "m").unwrap();
            assert!(!llm.has_key(), "{elsewhere}");
        }
        let named = OpenAiCompatible::builder("http://127.0.0.1:8000/v1", "m")
            .api_key_env("OPENAI_API_KEY")
            .build()
            .unwrap();
        assert!(named.has_key());

        let err = OpenAiCompatible::builder("http://node1:8000/v1", "m")
            .api_key("sk-named")
            .build()
            .unwrap_err();
        assert!(matches!(err, LlmError::InsecureKey { .. }), "{err:?}");
        assert!(!err.to_string().contains("sk-named"));
        let allowed = OpenAiCompatible::builder("http://node1:8000/v1", "m")
            .api_key("sk-named")
            .allow_insecure_key(true)
            .build()
            .unwrap();
        assert!(allowed.has_key());
    }

    #[test]
    fn a_repeat_penalty_becomes_a_frequency_penalty_and_optionally_llama_servers_own() {
        let request = ChatRequest::new("hi").with_repeat_penalty(1.5);
        let plain = OpenAiCompatible::new("http://localhost:1", "m").unwrap();
        let body = plain.body(&request, true);
        assert_eq!(body["frequency_penalty"], json!(0.5));
        assert!(body.get("repeat_penalty").is_none());
        let llama_server = OpenAiCompatible::builder("http://localhost:1", "m")
            .repeat_penalty(true)
            .build()
            .unwrap();
        assert_eq!(
            llama_server.body(&request, true)["repeat_penalty"],
            json!(1.5)
        );
        assert!(plain
            .body(&ChatRequest::new("hi"), true)
            .get("frequency_penalty")
            .is_none());
    }

    #[test]
    fn request_body_has_response_format_and_usage_option() {
        let llm = OpenAiCompatible::builder("https://h/v1", "m")
            .api_key("sk-secret")
            .build()
            .unwrap();
        let request = ChatRequest::new("hi")
            .with_schema("Person", json!({"type": "object"}))
            .with_max_tokens(50);
        let body = llm.body(&request, true);
        assert_eq!(
            body["response_format"],
            json!({"type": "json_schema", "json_schema": {"name": "Person", "schema": {"type": "object"}, "strict": true}})
        );
        assert_eq!(body["stream_options"], json!({"include_usage": true}));
        assert_eq!(body["max_tokens"], json!(50));
        assert!(llm.body(&request, false).get("stream_options").is_none());
        assert!(!format!("{llm:?}").contains("sk-secret"));
        let mut relaxed = request.clone();
        relaxed.schema_relaxed = true;
        assert_eq!(
            llm.body(&relaxed, false)["response_format"]["json_schema"]["strict"],
            false
        );
        relaxed.tool_call = true;
        assert_eq!(
            llm.body(&relaxed, false)["tools"][0]["function"]["strict"],
            false
        );
    }

    #[test]
    fn sse_wire_reads_deltas_finish_usage_and_done() {
        let mut wire = SseWire::default();
        let mut events = VecDeque::new();
        let lines = [
            ": keep-alive",
            r#"data: {"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"{\"a\""}}]}"#,
            "",
            r#"data:{"choices":[{"index":0,"delta":{"content":":1}"},"finish_reason":"length"}]}"#,
            r#"data: {"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":2}}"#,
            "data: [DONE]",
        ];
        for line in lines {
            wire.line(line, &mut events).unwrap();
        }
        let Some(ChatEvent::Done(done)) = events.back() else {
            panic!("no Done")
        };
        assert_eq!(done.text, "{\"a\":1}");
        assert_eq!(done.finish, Finish::Length);
        assert_eq!(done.usage.total(), 7);
        assert_eq!(done.model.as_deref(), Some("m"));
    }

    #[test]
    fn tool_mode_sends_a_forced_function_and_reads_its_arguments() {
        let llm = OpenAiCompatible::new("http://h/v1", "m").unwrap();
        let request = ChatRequest::new("hi")
            .with_schema("Person", json!({"type": "object"}))
            .with_tool_call(true);
        let body = llm.body(&request, true);
        assert!(body.get("response_format").is_none());
        assert_eq!(body["tools"][0]["function"]["name"], "Person");
        assert_eq!(
            body["tools"][0]["function"]["parameters"],
            json!({"type": "object"})
        );
        assert_eq!(body["tools"][0]["function"]["strict"], true);
        assert_eq!(
            body["tool_choice"],
            json!({"type": "function", "function": {"name": "Person"}})
        );
        assert!(body.get("parallel_tool_calls").is_none());
        // llama-server ignores a named choice; "required" with the one tool forces it there.
        let required = OpenAiCompatible::builder("http://h/v1", "m")
            .tool_choice_required(true)
            .build()
            .unwrap()
            .body(&request, true);
        assert_eq!(required["tool_choice"], "required");
        assert_eq!(required["parallel_tool_calls"], false);
        assert_eq!(required["tools"], body["tools"]);

        let mut wire = SseWire::default();
        let mut events = VecDeque::new();
        for line in [
            r#"data: {"choices":[{"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"Person","arguments":""}}]}}]}"#,
            r#"data: {"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"na"}}]}}]}"#,
            r#"data: {"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"me\":1}"}}]}}]}"#,
            r#"data: {"choices":[{"delta":{},"finish_reason":"tool_calls"}]}"#,
            "data: [DONE]",
        ] {
            wire.line(line, &mut events).unwrap();
        }
        let Some(ChatEvent::Done(done)) = events.back() else {
            panic!("no Done")
        };
        assert_eq!(done.text, r#"{"name":1}"#);
        assert_eq!(done.finish, Finish::Stop);

        let whole = read_completion(&json!({
            "choices": [{"message": {"content": null, "tool_calls": [
                {"id": "c", "type": "function", "function": {"name": "Person", "arguments": "{\"a\":2}"}}
            ]}, "finish_reason": "tool_calls"}]
        }))
        .unwrap();
        assert_eq!(whole.text, r#"{"a":2}"#);
    }

    #[test]
    fn only_the_first_tool_call_is_the_answer() {
        // As llama-server streamed a forced call (`tool_choice: "required"`, `parallel_tool_calls: false`):
        // the name comes with the first piece of arguments, then a second call (index 1) starts.
        let mut wire = SseWire::default();
        let mut events = VecDeque::new();
        for line in [
            r#"data: {"choices":[{"finish_reason":null,"index":0,"delta":{"role":"assistant","content":null}}],"object":"chat.completion.chunk"}"#,
            r#"data: {"choices":[{"finish_reason":null,"index":0,"delta":{"tool_calls":[{"index":0,"id":"gQ1J","type":"function","function":{"name":"Contact","arguments":"{"}}]}}]}"#,
            r#"data: {"choices":[{"finish_reason":null,"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\n    \"name\": \"Lena\"\n}"}}]}}]}"#,
            r#"data: {"choices":[{"finish_reason":null,"index":0,"delta":{"tool_calls":[{"index":1,"id":"Xy7P","type":"function","function":{"name":"Contact","arguments":"{"}}]}}]}"#,
            r#"data: {"choices":[{"finish_reason":null,"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"\n    \"name\": \"Len"}}]}}]}"#,
            r#"data: {"choices":[{"finish_reason":"length","index":0,"delta":{}}]}"#,
            r#"data: {"choices":[],"usage":{"completion_tokens":30,"prompt_tokens":234,"total_tokens":264}}"#,
            "data: [DONE]",
        ] {
            wire.line(line, &mut events).unwrap();
        }
        let Some(ChatEvent::Done(done)) = events.back() else {
            panic!("no Done")
        };
        assert_eq!(done.text, "{\n    \"name\": \"Lena\"\n}");
        assert_eq!(done.finish, Finish::Length);
        assert_eq!(done.usage.total(), 264);

        // The same whole, as llama-server answers without streaming (`content` empty, not null).
        let whole = read_completion(&json!({
            "choices": [{"finish_reason": "length", "index": 0, "message": {"role": "assistant", "content": "",
                "tool_calls": [
                    {"type": "function", "function": {"name": "Contact", "arguments": "{\"name\": \"Lena\"}"}, "id": "a"},
                    {"type": "function", "function": {"name": "Contact", "arguments": "{\"name\": \"Le"}, "id": "b"}
                ]}}]
        }))
        .unwrap();
        assert_eq!(whole.text, r#"{"name": "Lena"}"#);
    }

    #[test]
    fn sse_stream_without_an_end_is_an_error() {
        let mut wire = SseWire::default();
        let mut events = VecDeque::new();
        wire.line(
            r#"data: {"choices":[{"delta":{"content":"x"}}]}"#,
            &mut events,
        )
        .unwrap();
        assert!(matches!(
            wire.end(&mut events),
            Err(LlmError::Stream { .. })
        ));
        let err = SseWire::default()
            .line(r#"data: {"error":{"message":"overloaded"}}"#, &mut events)
            .unwrap_err();
        assert!(err.to_string().contains("overloaded"));
    }

    #[test]
    fn completion_reads_content_refusal_and_usage() {
        let done = read_completion(&json!({
            "model": "m",
            "choices": [{"message": {"content": "{}"}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 2}
        }))
        .unwrap();
        assert_eq!((done.text.as_str(), done.usage.total()), ("{}", 3));
        let refused = read_completion(&json!({
            "choices": [{"message": {"content": null, "refusal": "no"}, "finish_reason": "stop"}]
        }))
        .unwrap();
        assert_eq!(refused.finish, Finish::Other("refusal".into()));
        assert!(matches!(
            read_completion(&json!({"choices": []})),
            Err(LlmError::InvalidResponse { .. })
        ));
    }
}

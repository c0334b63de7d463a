//! The OpenAI-compatible wire format: `POST {base}/chat/completions`, streamed as server-sent events.
//!
//! Works with vLLM, llama-server, LM Studio, Ollama's `/v1` and OpenAI itself. The schema goes in
//! `response_format: {"type": "json_schema", "json_schema": {name, schema, strict}}`, the only form
//! every one of them honours; a stream ends with `data: [DONE]`, and usage comes in a last chunk when
//! `stream_options.include_usage` is set. With [`ChatRequest::tool_call`]
//! ([`Mode::Tool`](crate::extract::Mode::Tool)) the schema goes out as one forced function instead
//! (`tools` + `tool_choice`), and the call's `arguments` stream in as the answer.

use super::backend::{
    self, http_backend, key_builder_methods, wire_setters, Answer, Backend, Common, Site,
};
use super::backend::{Framing, Protocol, StreamReader};
use super::credentials::OfficialApi;
use super::http::{self, http_builder_methods};
use super::{
    ChatRequest, ChatResponse, Finish, LlmError, MediaLimits, MediaSupport, Message, TokenLogprob,
    Usage,
};
use crate::schema::Dialect;
use serde_json::{json, Map, Value};

/// OpenAI's own API, the one server `OPENAI_API_KEY` goes to unasked.
const OPENAI_API: OfficialApi = OfficialApi {
    host: "api.openai.com",
    key_env: "OPENAI_API_KEY",
    key_required: false,
};

/// A model behind an OpenAI-compatible chat completions API. Cheap to clone.
///
/// The API key, if any, is held as a [`Secret`](crate::llm::Secret): it never appears in `Debug` output
/// or in errors. A key goes only where it is named: without [`api_key`](OpenAiBuilder::api_key) or
/// [`api_key_env`](OpenAiBuilder::api_key_env), `OPENAI_API_KEY` (if set) is sent to OpenAI's own API
/// (`https://api.openai.com`) and to no other server; and no key goes over plain `http` to a host other
/// than this machine unless [`allow_insecure_key`](OpenAiBuilder::allow_insecure_key) says so.
///
/// A request follows a redirect only within the origin (scheme, host, port) it was sent to: a redirect
/// anywhere else, where the key must not go, ends it with [`LlmError::Redirect`](crate::llm::LlmError::Redirect).
///
/// ```no_run
/// use llm_extract::llm::OpenAiCompatible;
/// use llm_extract::schema::Dialect;
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
#[derive(Clone)]
pub struct OpenAiCompatible {
    backend: Backend<OpenAiWire>,
}

http_backend!(OpenAiCompatible, keyed);

impl OpenAiCompatible {
    /// The backend as a provider's batch API uses it.
    pub(crate) fn batch_wire(&self) -> std::sync::Arc<dyn crate::llm::BatchWire> {
        std::sync::Arc::new(self.backend.clone())
    }
}

/// The settings of the OpenAI-compatible wire format.
#[derive(Debug, Clone)]
struct OpenAiWire {
    dialect: Dialect,
    strict: bool,
    include_usage: bool,
    max_completion_tokens: bool,
    repeat_penalty: bool,
    tool_choice_required: bool,
    prompt_cache_key: Option<bool>,
}

/// Builds an [`OpenAiCompatible`].
#[derive(Debug, Clone)]
pub struct OpenAiBuilder {
    common: Common,
    wire: OpenAiWire,
}

impl OpenAiBuilder {
    key_builder_methods!("as a bearer token", "OPENAI_API_KEY", "OpenAI's own API");

    wire_setters! {
        /// The schema dialect the server enforces (default [`Dialect::OpenAiStrict`]). llama-server converts
        /// schemas with llama.cpp's converter, so [`Dialect::Gbnf`] describes it exactly.
        dialect: Dialect;

        /// The `strict` flag of `response_format.json_schema` (default `true`).
        strict: bool;

        /// Whether a streamed request asks for usage (`stream_options.include_usage`, default `true`); turn it
        /// off for a server that rejects the option.
        include_usage: bool;

        /// Sends the token limit as `max_completion_tokens` instead of `max_tokens` (OpenAI's reasoning models
        /// accept only the former; most other servers only the latter). Default `false`.
        max_completion_tokens: bool;

        /// Also sends a request's repeat penalty as llama-server's own `repeat_penalty` (the multiplicative
        /// penalty Ollama and the embedded engine use), beside the standard `frequency_penalty`. Default
        /// `false`: OpenAI itself rejects fields it does not know.
        repeat_penalty: bool;

        /// Forces the tool of [`Mode::Tool`](crate::extract::Mode::Tool) with `tool_choice: "required"` and
        /// `parallel_tool_calls: false` instead of naming the function (`{"type": "function", "function":
        /// {"name"}}`, the default). llama-server takes only the string forms: it drops a named choice with
        /// a warning and falls back to `"auto"`, so the model may answer in text. With the one tool this
        /// mode sends, `"required"` asks for the same call. Default `false`.
        tool_choice_required: bool;

        /// Sends `prompt_cache_key`, a digest of the schema, the system prompt and the worked examples
        /// ([`ChatRequest::stable_messages`]), so that the requests of one extraction setup go to the
        /// servers that hold their prefix in OpenAI's prompt cache. Default: on for OpenAI's own API
        /// (`https://api.openai.com`), off elsewhere (a server may reject a field it does not know).
        prompt_cache_key: bool;
    }

    http_builder_methods!();

    /// Builds the backend.
    pub fn build(self) -> Result<OpenAiCompatible, LlmError> {
        let raw = self.common.base_url.as_deref().unwrap_or_default();
        let base = backend::normalize_base(raw, Some("/v1"), "http://127.0.0.1:8080/v1")?;
        Ok(OpenAiCompatible {
            backend: Backend::build(self.wire, base, self.common)?,
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
            common: Common::new(Some(base_url.into()), model.into()),
            wire: OpenAiWire {
                dialect: Dialect::OpenAiStrict,
                strict: true,
                include_usage: true,
                max_completion_tokens: false,
                repeat_penalty: false,
                tool_choice_required: false,
                prompt_cache_key: None,
            },
        }
    }
}

/// A user message with media as OpenAI's content parts: each image an `image_url` part (a `data:` URL
/// of its bytes, or its URL), each PDF a `file` part with its `filename` and its bytes as a `data:` URL
/// in `file_data`, then the text unless it is empty (the image alone is the input).
fn media_content(message: &Message, object: &mut Map<String, Value>) {
    let mut parts: Vec<Value> = message
        .media
        .iter()
        .map(|media| {
            if media.media_type().is_image() {
                json!({"type": "image_url", "image_url": {"url": media.data_url()}})
            } else {
                json!({"type": "file", "file": {
                    "filename": media.name().unwrap_or("document.pdf"),
                    "file_data": media.data_url(),
                }})
            }
        })
        .collect();
    if !message.content.is_empty() {
        parts.push(json!({"type": "text", "text": message.content}));
    }
    object.insert("content".into(), Value::Array(parts));
}

impl Protocol for OpenAiWire {
    const NAME: &'static str = "OpenAiCompatible";
    const FRAMING: Framing = Framing::Sse;
    const API: Option<OfficialApi> = Some(OPENAI_API);
    const KEY_HEADER: Option<&'static str> = None;
    const CONNECT_HINT: &'static str = "is the server running there? Check the base URL";
    const MODEL_HINT: &'static str =
        "check the model name; GET {base}/models lists the models this server has";
    const ENDPOINT_HINT: &'static str = "is {base} the API root? it usually ends in /v1";
    type Stream = Chunks;
    const MEDIA: MediaSupport = MediaSupport {
        backend: "OpenAI-compatible",
        images: true,
        pdfs: true,
        image_urls: true,
        pdf_urls: false,
        hint: "the chat completions API takes a PDF as its bytes (a `file` part), not by URL: \
               download it and attach its bytes",
    };
    const MEDIA_LIMITS: MediaLimits = MediaLimits::openai();

    fn dialect(&self) -> Dialect {
        self.dialect
    }

    fn endpoint(&self, site: &Site, _stream: bool) -> String {
        format!("{}/chat/completions", site.base)
    }

    fn body(&self, site: &Site, request: &ChatRequest, stream: bool) -> Result<Value, LlmError> {
        let inner = self;
        let messages = request.wire_messages(media_content);
        let mut body = Map::new();
        body.insert("model".into(), json!(site.model));
        body.insert("messages".into(), json!(messages));
        body.insert("stream".into(), json!(stream));
        if stream && inner.include_usage {
            body.insert("stream_options".into(), json!({"include_usage": true}));
        }
        if let Some(n) = request.max_tokens {
            let key = if inner.max_completion_tokens {
                "max_completion_tokens"
            } else {
                "max_tokens"
            };
            body.insert(key.into(), json!(n));
        }
        if let Some(t) = request.temperature {
            body.insert("temperature".into(), json!(t));
        }
        if let Some(seed) = request.seed {
            body.insert("seed".into(), json!(seed));
        }
        if request.logprobs {
            body.insert("logprobs".into(), json!(true));
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
        let official = site.base.starts_with(OPENAI_API_ROOT);
        if inner.prompt_cache_key.unwrap_or(official) {
            body.insert("prompt_cache_key".into(), json!(prompt_cache_key(request)));
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
        Ok(Value::Object(body))
    }

    fn read(&self, answer: &Value) -> Result<ChatResponse, LlmError> {
        read_completion(answer)
    }
}

/// A non-streamed completion.
fn read_completion(value: &Value) -> Result<ChatResponse, LlmError> {
    let choice = value
        .get("choices")
        .and_then(|c| c.get(0))
        .ok_or_else(|| backend::invalid("the answer has no choices", value))?;
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
        usage: usage(value).unwrap_or_default(),
        finish,
        model: value
            .get("model")
            .and_then(Value::as_str)
            .map(str::to_owned),
        logprobs: logprobs(choice),
        cached: false,
    })
}

/// The tokens of a choice with their log-probabilities (`logprobs.content[].{token, logprob, bytes}`),
/// `None` when it has none. A token's `bytes` (its UTF-8 bytes, which a token splitting a character
/// needs) are preferred over its `token` text. An entry without a log-probability or a token voids
/// them all: the tokens would no longer join into the answer.
fn logprobs(choice: &Value) -> Option<Vec<TokenLogprob>> {
    let content = choice.pointer("/logprobs/content")?.as_array()?;
    content
        .iter()
        .map(|entry| {
            let logprob = entry.get("logprob")?.as_f64()? as f32;
            let bytes = match entry.get("bytes").and_then(Value::as_array) {
                Some(bytes) => bytes
                    .iter()
                    .map(|b| b.as_u64().and_then(|b| u8::try_from(b).ok()))
                    .collect::<Option<Vec<u8>>>()?,
                None => entry.get("token")?.as_str()?.as_bytes().to_vec(),
            };
            Some(TokenLogprob::new(bytes, logprob))
        })
        .collect()
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

fn usage(answer: &Value) -> Option<Usage> {
    let usage = answer.get("usage").filter(|u| u.is_object())?;
    let count = |key: &str| usage.get(key).and_then(Value::as_u64).unwrap_or(0);
    // Of the prompt, the tokens read from the prompt cache: OpenAI's `prompt_tokens_details`, or
    // llama-server's `timings.cache_n` (the prompt tokens it reused from its slot's cache).
    let cached = usage
        .pointer("/prompt_tokens_details/cached_tokens")
        .or_else(|| answer.pointer("/timings/cache_n"))
        .and_then(Value::as_u64)
        .unwrap_or(0);
    Some(Usage {
        prompt_tokens: count("prompt_tokens"),
        completion_tokens: count("completion_tokens"),
        estimated: false,
        cache_read_tokens: cached,
        ..Usage::default()
    })
}

/// OpenAI's own API root, which gets `prompt_cache_key` unasked.
const OPENAI_API_ROOT: &str = "https://api.openai.com/";

/// The `prompt_cache_key` of `request`: a digest of what every request of one extraction setup
/// shares (the schema and its name, the system prompt, the worked examples, the shared context at the
/// start of the input), so it changes with them and with nothing else.
fn prompt_cache_key(request: &ChatRequest) -> String {
    use sha2::Digest;
    let examples: Vec<Value> = request
        .messages
        .iter()
        .take(request.stable_messages)
        .map(|m| json!([m.role, m.content]))
        .collect();
    let context = request
        .messages
        .get(request.stable_messages)
        .and_then(|input| input.content.get(..request.stable_input))
        .unwrap_or_default();
    let mut prefix = json!([
        request.schema_name,
        request.schema,
        request.system,
        examples
    ]);
    // Added only when there is one, so that the keys of requests without one stay as they were.
    if let (false, Some(parts)) = (context.is_empty(), prefix.as_array_mut()) {
        parts.push(json!(context));
    }
    let digest = sha2::Sha256::digest(prefix.to_string().as_bytes());
    let hex: String = digest.iter().take(16).map(|b| format!("{b:02x}")).collect();
    format!("llm-extract-{hex}")
}

/// A streamed completion: `data: <chunk>` events, ending with `data: [DONE]`.
#[derive(Default)]
struct Chunks;

impl StreamReader for Chunks {
    const UNFINISHED: &'static str = "no finish_reason, no [DONE]";

    fn event(&mut self, data: &str, answer: &mut Answer) -> Result<(), LlmError> {
        let data = data.trim();
        if data.is_empty() {
            return Ok(());
        }
        if data == "[DONE]" {
            answer.done();
            return Ok(());
        }
        let chunk = backend::answer_event(data)?;
        if let Some(usage) = usage(&chunk) {
            answer.usage = usage;
        }
        if answer.model.is_none() {
            answer.model = chunk
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
                .unwrap_or_default()
        };
        let thinking = Some(field("reasoning_content")).filter(|t| !t.is_empty());
        answer.thought(thinking.unwrap_or(field("reasoning")));
        answer.text(field("content"));
        if let Some(tokens) = logprobs(choice) {
            answer.tokens(tokens);
        }
        // Tool mode: the call's arguments stream as `tool_calls[].function.arguments` pieces.
        if let Some(arguments) = tool_arguments(delta.and_then(|d| d.get("tool_calls"))) {
            answer.text(&arguments);
        }
        if let Some(finish) = finish_reason(choice.get("finish_reason")) {
            answer.finish = Some(finish);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::ChatEvent;
    use crate::llm::Secret;
    use std::collections::VecDeque;

    fn body_of(llm: &OpenAiCompatible, request: &ChatRequest, stream: bool) -> Value {
        llm.backend.request_body(request, stream).unwrap()
    }

    /// The events a stream of these lines gives, and how it ended.
    fn read(lines: &[&str]) -> (VecDeque<ChatEvent>, Result<(), LlmError>) {
        backend::read_body::<Chunks>(Framing::Sse, &lines.join("\n\n"))
    }

    #[test]
    fn openai_api_key_goes_to_openai_alone_and_no_key_over_plain_http_elsewhere() {
        let env = |name: &str| (name == "OPENAI_API_KEY").then(|| "sk-openai-implicit".to_owned());
        let official = OpenAiCompatible::builder("https://api.openai.com/v1", "m")
            .env_lookup(env)
            .build()
            .unwrap();
        assert_eq!(
            official.backend.key().cloned(),
            Some(Secret::new("sk-openai-implicit"))
        );
        for elsewhere in [
            "http://127.0.0.1:8000/v1",
            "https://gateway.example.com/v1",
            "http://node1:8000/v1",
        ] {
            let llm = OpenAiCompatible::builder(elsewhere, "m")
                .env_lookup(env)
                .build()
                .unwrap();
            assert!(!llm.has_key(), "{elsewhere}");
        }
        let named = OpenAiCompatible::builder("http://127.0.0.1:8000/v1", "m")
            .api_key_env("OPENAI_API_KEY")
            .env_lookup(env)
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
        let body = body_of(&plain, &request, true);
        assert_eq!(body["frequency_penalty"], json!(0.5));
        assert!(body.get("repeat_penalty").is_none());
        let llama_server = OpenAiCompatible::builder("http://localhost:1", "m")
            .repeat_penalty(true)
            .build()
            .unwrap();
        assert_eq!(
            body_of(&llama_server, &request, true)["repeat_penalty"],
            json!(1.5)
        );
        assert!(body_of(&plain, &ChatRequest::new("hi"), true)
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
        let body = body_of(&llm, &request, true);
        assert_eq!(
            body["response_format"],
            json!({"type": "json_schema", "json_schema": {"name": "Person", "schema": {"type": "object"}, "strict": true}})
        );
        assert_eq!(body["stream_options"], json!({"include_usage": true}));
        assert_eq!(body["max_tokens"], json!(50));
        assert!(body_of(&llm, &request, false)
            .get("stream_options")
            .is_none());
        assert!(!format!("{llm:?}").contains("sk-secret"));
        let mut relaxed = request.clone();
        relaxed.schema_relaxed = true;
        assert_eq!(
            body_of(&llm, &relaxed, false)["response_format"]["json_schema"]["strict"],
            false
        );
        relaxed.tool_call = true;
        assert_eq!(
            body_of(&llm, &relaxed, false)["tools"][0]["function"]["strict"],
            false
        );
    }

    #[test]
    fn sse_wire_reads_deltas_finish_usage_and_done() {
        let (events, end) = read(&[
            ": keep-alive",
            r#"data: {"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"{\"a\""}}]}"#,
            "",
            r#"data:{"choices":[{"index":0,"delta":{"content":":1}"},"finish_reason":"length"}]}"#,
            r#"data: {"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":2}}"#,
            "data: [DONE]",
        ]);
        end.unwrap();
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
        let body = body_of(&llm, &request, true);
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
            .unwrap();
        let required = body_of(&required, &request, true);
        assert_eq!(required["tool_choice"], "required");
        assert_eq!(required["parallel_tool_calls"], false);
        assert_eq!(required["tools"], body["tools"]);

        let (events, end) = read(&[
            r#"data: {"choices":[{"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"Person","arguments":""}}]}}]}"#,
            r#"data: {"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"na"}}]}}]}"#,
            r#"data: {"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"me\":1}"}}]}}]}"#,
            r#"data: {"choices":[{"delta":{},"finish_reason":"tool_calls"}]}"#,
            "data: [DONE]",
        ]);
        end.unwrap();
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
        let (events, end) = read(&[
            r#"data: {"choices":[{"finish_reason":null,"index":0,"delta":{"role":"assistant","content":null}}],"object":"chat.completion.chunk"}"#,
            r#"data: {"choices":[{"finish_reason":null,"index":0,"delta":{"tool_calls":[{"index":0,"id":"gQ1J","type":"function","function":{"name":"Contact","arguments":"{"}}]}}]}"#,
            r#"data: {"choices":[{"finish_reason":null,"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\n    \"name\": \"Lena\"\n}"}}]}}]}"#,
            r#"data: {"choices":[{"finish_reason":null,"index":0,"delta":{"tool_calls":[{"index":1,"id":"Xy7P","type":"function","function":{"name":"Contact","arguments":"{"}}]}}]}"#,
            r#"data: {"choices":[{"finish_reason":null,"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"\n    \"name\": \"Len"}}]}}]}"#,
            r#"data: {"choices":[{"finish_reason":"length","index":0,"delta":{}}]}"#,
            r#"data: {"choices":[],"usage":{"completion_tokens":30,"prompt_tokens":234,"total_tokens":264}}"#,
            "data: [DONE]",
        ]);
        end.unwrap();
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
        let (events, end) = read(&[r#"data: {"choices":[{"delta":{"content":"x"}}]}"#]);
        assert_eq!(events.len(), 1);
        assert!(matches!(end, Err(LlmError::Stream { .. })), "{end:?}");
        let (_, end) = read(&[r#"data: {"error":{"message":"overloaded"}}"#]);
        assert!(end.unwrap_err().to_string().contains("overloaded"));
        // A body with no event but lines of something else is not an event stream.
        let (_, end) = read(&["<html>busy</html>"]);
        assert!(
            matches!(end, Err(LlmError::InvalidResponse { .. })),
            "{end:?}"
        );
    }

    #[test]
    fn prompt_cache_key_follows_the_shared_prefix_and_goes_to_openai_unasked() {
        let mut request = ChatRequest::new("document one")
            .with_system("extract")
            .with_schema("T", json!({"type": "object"}));
        let official = OpenAiCompatible::builder("https://api.openai.com/v1", "m")
            .api_key("sk-x")
            .build()
            .unwrap();
        let key = body_of(&official, &request, false)["prompt_cache_key"].clone();
        assert!(
            key.as_str().is_some_and(|k| k.starts_with("llm-extract-")),
            "{key}"
        );
        // Another document, the same setup: the same key; another system prompt: another.
        request.messages = vec![Message::user("document two")];
        assert_eq!(body_of(&official, &request, false)["prompt_cache_key"], key);
        // A shared context at the start of the input joins the key: the same for every chunk it
        // starts, another for another context.
        request.messages = vec![Message::user("Glossary A. document two")];
        request.stable_input = "Glossary A. ".len();
        let with_context = body_of(&official, &request, false)["prompt_cache_key"].clone();
        assert_ne!(with_context, key);
        request.messages = vec![Message::user("Glossary A. document three")];
        assert_eq!(
            body_of(&official, &request, false)["prompt_cache_key"],
            with_context
        );
        request.messages = vec![Message::user("Glossary B. document three")];
        assert_ne!(
            body_of(&official, &request, false)["prompt_cache_key"],
            with_context
        );
        request.system = Some("extract carefully".into());
        assert_ne!(body_of(&official, &request, false)["prompt_cache_key"], key);
        let local = OpenAiCompatible::new("http://127.0.0.1:8080/v1", "m").unwrap();
        assert!(body_of(&local, &request, false)
            .get("prompt_cache_key")
            .is_none());
        let asked = OpenAiCompatible::builder("http://127.0.0.1:8080/v1", "m")
            .prompt_cache_key(true)
            .build()
            .unwrap();
        assert!(body_of(&asked, &request, false)
            .get("prompt_cache_key")
            .is_some());
    }

    #[test]
    fn cached_prompt_tokens_are_read_from_openai_and_llama_server() {
        let openai = usage(
            &json!({"usage": {"prompt_tokens": 2000, "completion_tokens": 5,
            "prompt_tokens_details": {"cached_tokens": 1920}}}),
        )
        .unwrap();
        assert_eq!(
            (openai.prompt_tokens, openai.cache_read_tokens),
            (2000, 1920)
        );
        let llama = usage(
            &json!({"usage": {"prompt_tokens": 300, "completion_tokens": 5},
            "timings": {"cache_n": 280, "prompt_n": 20}}),
        )
        .unwrap();
        assert_eq!((llama.prompt_tokens, llama.cache_read_tokens), (300, 280));
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

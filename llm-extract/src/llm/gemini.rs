//! The Gemini backend: `POST {base}/v1beta/models/{model}:generateContent`, streamed with
//! `:streamGenerateContent?alt=sse`.
//!
//! The key goes in `x-goog-api-key` (never in the URL). A schema goes in
//! `generationConfig.responseJsonSchema` with `responseMimeType: "application/json"`, rendered in
//! [`Dialect::Gemini`] (or, with [`GeminiBuilder::openapi_schema`], in the older `responseSchema` as its
//! OpenAPI subset). Each streamed event is a whole `GenerateContentResponse` holding the next piece
//! of text; the last one carries `finishReason` and `usageMetadata`, and the body simply ends.

use super::anthropic::normalize_base;
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
const DEFAULT_BASE: &str = "https://generativelanguage.googleapis.com";
/// The environment variable the key is read from by default.
const KEY_ENV: &str = "GEMINI_API_KEY";
/// Google's Gemini API, the one server [`KEY_ENV`] goes to unasked.
const GEMINI_API: OfficialApi = OfficialApi {
    host: "generativelanguage.googleapis.com",
    key_env: KEY_ENV,
    key_required: true,
};

/// A Gemini model behind the Gemini API's `generateContent`. Cheap to clone.
///
/// The API key is held as a [`Secret`] and sent in a header: it never appears in a URL, in `Debug`
/// output or in errors. A key goes only where it is named: without [`api_key`](GeminiBuilder::api_key) or
/// [`api_key_env`](GeminiBuilder::api_key_env), `GEMINI_API_KEY` is sent to Google's own API
/// (`https://generativelanguage.googleapis.com`, where it is required) and to no other base URL, which
/// then gets no key; and no key goes over plain `http` to a host other than this machine unless
/// [`allow_insecure_key`](GeminiBuilder::allow_insecure_key) says so.
///
/// ```no_run
/// use llm_extract::llm::Gemini;
///
/// # fn main() -> Result<(), llm_extract::llm::LlmError> {
/// // Key from GEMINI_API_KEY.
/// let gemini = Gemini::new("gemini-2.5-flash")?;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct Gemini {
    inner: Arc<Inner>,
}

struct Inner {
    base: String,
    model: String,
    key: Option<Secret>,
    openapi_schema: bool,
    http: HttpClient,
}

impl std::fmt::Debug for Inner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gemini")
            .field("base", &http::redact_url(&self.base))
            .field("model", &self.model)
            .field("key", &self.key)
            .field("openapi_schema", &self.openapi_schema)
            .field("http", &self.http)
            .finish()
    }
}

/// Builds a [`Gemini`] backend.
#[derive(Clone)]
pub struct GeminiBuilder {
    base_url: String,
    model: String,
    key: KeyChoice,
    openapi_schema: bool,
    http: HttpOptions,
}

impl std::fmt::Debug for GeminiBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GeminiBuilder")
            .field("base_url", &http::redact_url(&self.base_url))
            .field("model", &self.model)
            .field("key", &self.key)
            .field("openapi_schema", &self.openapi_schema)
            .field("http", &self.http)
            .finish()
    }
}

impl GeminiBuilder {
    /// Sends the schema in the older `responseSchema` field, as the OpenAPI subset it takes (upper-case
    /// types, `nullable`, `propertyOrdering`), for a model or deployment without `responseJsonSchema`.
    /// Default `false`. Maps and tuples cannot be written in that subset: a schema with them fails before
    /// any request with [`LlmError::Config`].
    pub fn openapi_schema(mut self, yes: bool) -> Self {
        self.openapi_schema = yes;
        self
    }

    /// The API root (default `https://generativelanguage.googleapis.com`); requests go to
    /// `{base}/v1beta/models/{model}:generateContent`. For proxies and gateways.
    pub fn base_url(mut self, url: impl Into<String>) -> Self {
        self.base_url = url.into();
        self
    }

    /// The API key, sent in `x-goog-api-key`.
    pub fn api_key(mut self, key: impl Into<Secret>) -> Self {
        self.key.key = Some(key.into());
        self
    }

    /// Reads the API key from the environment variable `name` when the backend is built (an error if it
    /// is unset). Without this or [`api_key`](Self::api_key), `GEMINI_API_KEY` is read for
    /// `https://generativelanguage.googleapis.com` only.
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

    http_builder_methods!();

    /// Builds the backend, with the key chosen as the type's documentation says.
    pub fn build(self) -> Result<Gemini, LlmError> {
        let model = self
            .model
            .strip_prefix("models/")
            .unwrap_or(&self.model)
            .to_owned();
        let valid = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_');
        if model.is_empty() || !model.chars().all(valid) {
            return Err(LlmError::Config {
                message: format!(
                    "the model name {model:?} is not one Gemini uses (letters, digits, '.', '-', '_'), \
                     e.g. gemini-2.5-flash"
                ),
            });
        }
        let base = normalize_base(&self.base_url)?;
        let key = self.key.resolve(&base, GEMINI_API)?;
        Ok(Gemini {
            inner: Arc::new(Inner {
                base,
                model,
                key,
                openapi_schema: self.openapi_schema,
                http: HttpClient::new(self.http)?,
            }),
        })
    }
}

impl Gemini {
    /// The model `model` (e.g. `gemini-2.5-flash`) with the key from `GEMINI_API_KEY`.
    pub fn new(model: impl Into<String>) -> Result<Self, LlmError> {
        Self::builder(model).build()
    }

    /// A builder for the model `model`.
    pub fn builder(model: impl Into<String>) -> GeminiBuilder {
        GeminiBuilder {
            base_url: DEFAULT_BASE.to_owned(),
            model: model.into(),
            key: KeyChoice::default(),
            openapi_schema: false,
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

    fn url(&self, stream: bool) -> String {
        let Inner { base, model, .. } = &*self.inner;
        if stream {
            format!("{base}/v1beta/models/{model}:streamGenerateContent?alt=sse")
        } else {
            format!("{base}/v1beta/models/{model}:generateContent")
        }
    }

    fn outgoing<'a>(&'a self, url: &'a str, body: &'a Value) -> Outgoing<'a> {
        Outgoing {
            url,
            body: Some(body),
            bearer: self.inner.key.as_ref(),
            key_header: Some("x-goog-api-key"),
            headers: &[],
            connect_hint: "is the API reachable from here? Check the base URL (and any proxy)",
        }
    }

    fn body(&self, request: &ChatRequest) -> Result<Value, LlmError> {
        let mut system: Vec<&str> = request.system.iter().map(String::as_str).collect();
        let mut contents = Vec::with_capacity(request.messages.len());
        for message in &request.messages {
            let role = match message.role {
                Role::System => {
                    system.push(&message.content);
                    continue;
                }
                Role::User => "user",
                Role::Assistant => "model",
            };
            contents.push(json!({"role": role, "parts": [{"text": message.content}]}));
        }
        let mut config = Map::new();
        if let Some(n) = request.max_tokens {
            config.insert("maxOutputTokens".into(), json!(n));
        }
        if let Some(t) = request.temperature {
            config.insert("temperature".into(), json!(t));
        }
        if let Some(seed) = request.seed {
            // Gemini's seed is a 32-bit integer.
            config.insert("seed".into(), json!(seed as u32 as i32));
        }
        if !request.stop.is_empty() {
            config.insert("stopSequences".into(), json!(request.stop));
        }
        if let Some(schema) = &request.schema {
            config.insert("responseMimeType".into(), json!("application/json"));
            if self.inner.openapi_schema {
                config.insert("responseSchema".into(), openapi(schema, "")?);
            } else {
                config.insert("responseJsonSchema".into(), schema.clone());
            }
        }
        let mut body = Map::new();
        if !system.is_empty() {
            body.insert(
                "systemInstruction".into(),
                json!({"parts": [{"text": system.join("\n\n")}]}),
            );
        }
        body.insert("contents".into(), Value::Array(contents));
        body.insert("generationConfig".into(), Value::Object(config));
        Ok(Value::Object(body))
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
                    "check the model name (e.g. gemini-2.5-flash); GET {}/v1beta/models lists the \
                     models this key can use",
                    http::redact_url(&self.inner.base)
                ),
                model: self.inner.model.clone(),
                message,
            },
            // An invalid key is a 400 INVALID_ARGUMENT whose message names the key.
            LlmError::Http {
                status: status @ (400 | 401 | 403),
                message,
                ..
            } if status != 400 || message.to_ascii_lowercase().contains("api key") => {
                LlmError::Auth {
                    status,
                    message: format!(
                        "{message} ({})",
                        GEMINI_API.auth_hint(self.has_key(), "x-goog-api-key")
                    ),
                }
            }
            other => other,
        }
    }
}

impl Llm for Gemini {
    fn dialect(&self) -> Dialect {
        Dialect::Gemini
    }

    fn chat(&self, request: ChatRequest) -> BoxFuture<'_, Result<ChatResponse, LlmError>> {
        Box::pin(async move {
            let body = self.body(&request)?;
            let url = self.url(false);
            self.inner
                .http
                .send_and_read(&self.outgoing(&url, &body), |bytes| {
                    let mut answer = Answer::default();
                    answer.read(&http::json_body(bytes)?, &mut VecDeque::new())?;
                    answer.into_response()
                })
                .await
                .map_err(|e| self.map_error(e))
        })
    }

    fn chat_stream(&self, request: ChatRequest) -> BoxFuture<'_, Result<ChatStream, LlmError>> {
        Box::pin(async move {
            let body = self.body(&request)?;
            let url = self.url(true);
            let this = self.clone();
            self.inner
                .http
                .stream(&self.outgoing(&url, &body), SseAnswer::default, move |e| {
                    this.map_error(e)
                })
                .await
        })
    }
}

/// A schema in the Gemini dialect as the OpenAPI subset `responseSchema` takes: upper-case `type`, a
/// `"null"` in a type list as `nullable`, `const` as a one-value `enum`, `propertyOrdering` from the
/// properties' order, no `additionalProperties`. `path` locates the schema in messages.
fn openapi(schema: &Value, path: &str) -> Result<Value, LlmError> {
    let refuse = |what: &str| {
        LlmError::Config {
        message: format!(
            "the schema cannot be sent as responseSchema: {what} at {}; send it as responseJsonSchema \
             (turn openapi_schema off) or change the type",
            if path.is_empty() { "/" } else { path }
        ),
    }
    };
    let Value::Object(map) = schema else {
        return Err(refuse("a schema that is not an object"));
    };
    let mut out = Map::new();
    for (key, value) in map {
        match key.as_str() {
            "type" => {
                let names: Vec<&str> = match value {
                    Value::String(one) => vec![one.as_str()],
                    Value::Array(many) => many.iter().filter_map(Value::as_str).collect(),
                    _ => Vec::new(),
                };
                let concrete: Vec<&str> = names.iter().copied().filter(|t| *t != "null").collect();
                match concrete.as_slice() {
                    [one] => {
                        out.insert("type".into(), json!(one.to_ascii_uppercase()));
                    }
                    [] => {
                        out.insert("type".into(), json!("NULL"));
                    }
                    _ => return Err(refuse("a value of several types")),
                }
                if concrete.len() < names.len() {
                    out.insert("nullable".into(), json!(true));
                }
            }
            "properties" => {
                let Value::Object(properties) = value else {
                    continue;
                };
                let mut rendered = Map::new();
                for (name, sub) in properties {
                    rendered.insert(
                        name.clone(),
                        openapi(sub, &format!("{path}/properties/{name}"))?,
                    );
                }
                let order: Vec<&String> = properties.keys().collect();
                out.insert("properties".into(), Value::Object(rendered));
                out.insert("propertyOrdering".into(), json!(order));
            }
            "items" => {
                out.insert("items".into(), openapi(value, &format!("{path}/items"))?);
            }
            "anyOf" => {
                let branches = value
                    .as_array()
                    .into_iter()
                    .flatten()
                    .enumerate()
                    .map(|(i, branch)| openapi(branch, &format!("{path}/anyOf/{i}")))
                    .collect::<Result<Vec<_>, _>>()?;
                out.insert("anyOf".into(), Value::Array(branches));
            }
            "additionalProperties" if value.is_object() => {
                return Err(refuse("a map (an object with arbitrary keys)"))
            }
            "prefixItems" => return Err(refuse("a tuple")),
            "enum" => {
                // The subset lists strings only.
                if let Some(values) = value.as_array().filter(|v| v.iter().all(Value::is_string)) {
                    out.insert("enum".into(), json!(values));
                }
            }
            "required" | "description" | "minItems" | "maxItems" | "minimum" | "maximum"
            | "format" => {
                out.insert(key.clone(), value.clone());
            }
            _ => {}
        }
    }
    if out.contains_key("enum") && !out.contains_key("type") {
        out.insert("type".into(), json!("STRING"));
    }
    Ok(Value::Object(out))
}

/// What a finish or block reason means, for [`LlmError::Blocked`].
fn withheld(reason: &str) -> Option<&'static str> {
    Some(match reason {
        "SAFETY" | "IMAGE_SAFETY" => "the answer was flagged by the safety filters",
        "RECITATION" => "the answer recited training data too closely",
        "BLOCKLIST" => "the answer contained a term of the blocklist",
        "PROHIBITED_CONTENT" => "the content is prohibited",
        "SPII" => "the answer contained sensitive personal information",
        _ => return None,
    })
}

/// An answer assembled from one or more `GenerateContentResponse`s.
#[derive(Debug, Default)]
struct Answer {
    text: String,
    thinking: String,
    usage: Usage,
    finish: Option<Finish>,
    model: Option<String>,
}

impl Answer {
    /// Reads one response: its text parts (thought parts are reasoning), finish reason and usage.
    fn read(&mut self, value: &Value, events: &mut VecDeque<ChatEvent>) -> Result<(), LlmError> {
        if let Some(message) = http::error_text(value) {
            return Err(LlmError::Stream {
                message: format!("the server reported an error mid-answer: {message}"),
                partial: self.text.clone(),
            });
        }
        if let Some(version) = value.get("modelVersion").and_then(Value::as_str) {
            self.model = Some(version.to_owned());
        }
        if let Some(usage) = value.get("usageMetadata").filter(|u| u.is_object()) {
            let count = |key: &str| usage.get(key).and_then(Value::as_u64).unwrap_or(0);
            let thoughts = count("thoughtsTokenCount");
            self.usage = Usage {
                prompt_tokens: count("promptTokenCount"),
                completion_tokens: count("candidatesTokenCount").saturating_add(thoughts),
                cache_read_tokens: count("cachedContentTokenCount"),
                thinking_tokens: thoughts,
                ..Usage::default()
            };
        }
        if let Some(reason) = value
            .pointer("/promptFeedback/blockReason")
            .and_then(Value::as_str)
        {
            return Err(LlmError::Blocked {
                reason: reason.to_owned(),
                message: format!(
                    "the prompt was blocked ({})",
                    withheld(reason).unwrap_or("no further detail")
                ),
                partial: self.text.clone(),
            });
        }
        let candidate = value.pointer("/candidates/0");
        let parts = candidate
            .and_then(|c| c.pointer("/content/parts"))
            .and_then(Value::as_array);
        for part in parts.into_iter().flatten() {
            let Some(text) = part.get("text").and_then(Value::as_str) else {
                continue;
            };
            if text.is_empty() {
                continue;
            }
            if part.get("thought").and_then(Value::as_bool) == Some(true) {
                self.thinking.push_str(text);
                events.push_back(ChatEvent::Thinking(text.to_owned()));
            } else {
                self.text.push_str(text);
                events.push_back(ChatEvent::Delta(text.to_owned()));
            }
        }
        if let Some(reason) = candidate
            .and_then(|c| c.get("finishReason"))
            .and_then(Value::as_str)
        {
            if let Some(meaning) = withheld(reason) {
                return Err(LlmError::Blocked {
                    reason: reason.to_owned(),
                    message: meaning.to_owned(),
                    partial: self.text.clone(),
                });
            }
            self.finish = Some(match reason {
                "STOP" => Finish::Stop,
                "MAX_TOKENS" => Finish::Length,
                other => Finish::Other(other.to_owned()),
            });
        }
        Ok(())
    }

    fn into_response(self) -> Result<ChatResponse, LlmError> {
        let finish = self.finish.ok_or_else(|| LlmError::InvalidResponse {
            message: "the answer has no candidate with a finishReason".into(),
            body: self.text.clone(),
        })?;
        Ok(ChatResponse {
            text: self.text,
            thinking: Some(self.thinking).filter(|t| !t.is_empty()),
            usage: self.usage,
            finish,
            model: self.model,
        })
    }
}

/// `streamGenerateContent?alt=sse`: each `data:` event is a `GenerateContentResponse`; the stream ends
/// with the body (no end marker), after the event carrying `finishReason`.
#[derive(Default)]
struct SseAnswer {
    frames: SseFrames,
    answer: Answer,
    done: bool,
}

impl SseAnswer {
    fn event(&mut self, data: &str, events: &mut VecDeque<ChatEvent>) -> Result<(), LlmError> {
        let value: Value = serde_json::from_str(data).map_err(|e| LlmError::InvalidResponse {
            message: format!("an event of the stream is not JSON ({e})"),
            body: data.to_owned(),
        })?;
        self.answer.read(&value, events)
    }
}

impl WireFormat for SseAnswer {
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
        if self.answer.finish.is_none() {
            return Err(LlmError::Stream {
                message: "the stream ended before the server finished the answer (no finishReason)"
                    .into(),
                partial: String::new(),
            });
        }
        self.done = true;
        let answer = std::mem::take(&mut self.answer);
        events.push_back(ChatEvent::Done(answer.into_response()?));
        Ok(())
    }

    fn finished(&self) -> bool {
        self.done
    }

    fn usage(&self) -> Usage {
        self.answer.usage
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::Message;

    fn backend() -> Gemini {
        Gemini::builder("models/gemini-test")
            .api_key("AIza-secret")
            .build()
            .unwrap()
    }

    #[test]
    fn gemini_api_key_goes_to_google_alone_and_no_key_over_plain_http_elsewhere() {
        // The only test of this crate that sets GEMINI_API_KEY.
        std::env::set_var(KEY_ENV, "AIza-implicit");
        let official = Gemini::new("m").unwrap();
        assert_eq!(official.inner.key, Some(Secret::new("AIza-implicit")));
        for elsewhere in [
            "http://127.0.0.1:8000",
            "https://gateway.example.com/gemini",
            "https://api.anthropic.com",
        ] {
            let llm = Gemini::builder("m").base_url(elsewhere).build().unwrap();
            assert!(!llm.has_key(), "{elsewhere}");
        }
        let err = Gemini::builder("m")
            .base_url("http://10.255.255.1:1")
            .api_key("AIza-named")
            .build()
            .unwrap_err();
        assert!(matches!(err, LlmError::InsecureKey { .. }), "{err:?}");
        let allowed = Gemini::builder("m")
            .base_url("http://10.255.255.1:1")
            .api_key("AIza-named")
            .allow_insecure_key(true)
            .build()
            .unwrap();
        assert!(allowed.has_key());
    }

    #[test]
    fn the_body_has_contents_system_instruction_and_generation_config() {
        let request = ChatRequest::new("hi")
            .with_system("be brief")
            .with_message(Message::assistant("ok"))
            .with_schema("P", json!({"type": "object"}))
            .with_max_tokens(50)
            .with_seed(u64::MAX);
        let gemini = backend();
        let body = gemini.body(&request).unwrap();
        assert_eq!(
            body["systemInstruction"],
            json!({"parts": [{"text": "be brief"}]})
        );
        assert_eq!(
            body["contents"],
            json!([{"role": "user", "parts": [{"text": "hi"}]}, {"role": "model", "parts": [{"text": "ok"}]}])
        );
        let config = &body["generationConfig"];
        assert_eq!(config["maxOutputTokens"], 50);
        assert_eq!(config["seed"], -1);
        assert_eq!(config["responseMimeType"], "application/json");
        assert_eq!(config["responseJsonSchema"], json!({"type": "object"}));
        assert_eq!(
            gemini.url(true),
            "https://generativelanguage.googleapis.com/v1beta/models/gemini-test:streamGenerateContent?alt=sse"
        );
        assert!(!format!("{gemini:?}").contains("AIza-secret"));
        assert!(matches!(
            Gemini::builder("a/b").api_key("k").build(),
            Err(LlmError::Config { .. })
        ));
    }

    #[test]
    fn the_openapi_subset_goes_in_response_schema() {
        let gemini = Gemini::builder("gemini-test")
            .api_key("k")
            .openapi_schema(true)
            .build()
            .unwrap();
        let schema = json!({
            "type": "object",
            "properties": {
                "b": { "type": ["string", "null"], "enum": ["x", "y"] },
                "a": { "type": "array", "items": { "type": "integer", "minimum": 0 }, "maxItems": 3 },
                "u": { "anyOf": [{ "type": "string" }, { "type": "number" }] }
            },
            "required": ["b"],
            "additionalProperties": false
        });
        let request = ChatRequest::new("hi").with_schema("P", schema);
        let body = gemini.body(&request).unwrap();
        let config = &body["generationConfig"];
        assert!(config.get("responseJsonSchema").is_none());
        assert_eq!(
            config["responseSchema"],
            json!({
                "type": "OBJECT",
                "properties": {
                    "b": { "type": "STRING", "nullable": true, "enum": ["x", "y"] },
                    "a": { "type": "ARRAY", "items": { "type": "INTEGER", "minimum": 0 }, "maxItems": 3 },
                    "u": { "anyOf": [{ "type": "STRING" }, { "type": "NUMBER" }] }
                },
                "propertyOrdering": ["b", "a", "u"],
                "required": ["b"]
            })
        );
        let map = ChatRequest::new("hi").with_schema(
            "M",
            json!({ "type": "object", "properties": { "m": { "type": "object", "additionalProperties": { "type": "integer" } } } }),
        );
        let err = gemini.body(&map).unwrap_err();
        assert!(err.to_string().contains("/properties/m"), "{err}");
    }

    #[test]
    fn responses_give_text_thoughts_usage_and_finish() {
        let mut answer = Answer::default();
        let mut events = VecDeque::new();
        answer
            .read(
                &json!({
                    "candidates": [{"content": {"role": "model", "parts": [
                        {"text": "plan", "thought": true}, {"text": "{\"a\":1}"}
                    ]}, "finishReason": "MAX_TOKENS"}],
                    "usageMetadata": {"promptTokenCount": 4, "candidatesTokenCount": 6, "thoughtsTokenCount": 10, "cachedContentTokenCount": 2},
                    "modelVersion": "gemini-test-001"
                }),
                &mut events,
            )
            .unwrap();
        let done = answer.into_response().unwrap();
        assert_eq!(done.text, "{\"a\":1}");
        assert_eq!(done.thinking.as_deref(), Some("plan"));
        assert_eq!(done.finish, Finish::Length);
        assert_eq!(
            (
                done.usage.prompt_tokens,
                done.usage.completion_tokens,
                done.usage.thinking_tokens,
                done.usage.cache_read_tokens
            ),
            (4, 16, 10, 2)
        );
        assert_eq!(events.len(), 2);
    }

    #[test]
    fn withheld_answers_are_typed_errors() {
        for (value, reason) in [
            (
                json!({"candidates": [{"content": {"parts": [{"text": "x"}]}, "finishReason": "SAFETY"}]}),
                "SAFETY",
            ),
            (
                json!({"candidates": [{"finishReason": "RECITATION"}]}),
                "RECITATION",
            ),
            (
                json!({"promptFeedback": {"blockReason": "BLOCKLIST"}}),
                "BLOCKLIST",
            ),
        ] {
            let err = Answer::default()
                .read(&value, &mut VecDeque::new())
                .unwrap_err();
            match &err {
                LlmError::Blocked { reason: got, .. } => assert_eq!(got, reason),
                other => panic!("{other:?}"),
            }
            assert!(!err.is_transient());
        }
    }
}

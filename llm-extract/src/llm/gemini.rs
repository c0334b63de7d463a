//! The Gemini wire format: `POST {base}/v1beta/models/{model}:generateContent`, streamed with
//! `:streamGenerateContent?alt=sse`.
//!
//! The key goes in `x-goog-api-key` (never in the URL). A schema goes in
//! `generationConfig.responseJsonSchema` with `responseMimeType: "application/json"`, rendered in
//! [`Dialect::Gemini`] (or, with [`GeminiBuilder::openapi_schema`], in the older `responseSchema` as its
//! OpenAPI subset). Each streamed event is a whole `GenerateContentResponse` holding the next piece
//! of text; the last one carries `finishReason` and `usageMetadata`, and the body simply ends. A bad
//! key is answered with 400 and the reason `API_KEY_INVALID`, which is an [`LlmError::Auth`].
//!
//! Media past the inline limit go through the Files API first (`gemini_files.rs`).

use super::backend::{
    self, http_backend, key_builder_methods, wire_setters, Answer, Backend, Common, Site,
};
use super::backend::{Framing, Protocol, StreamReader};
use super::credentials::OfficialApi;
use super::error::Status;
use super::gemini_files::{self, Polling, Uploads};
use super::gemini_openapi::openapi;
use super::http::{self, http_builder_methods};
use super::{
    BoxFuture, ChatRequest, ChatResponse, ChatStream, Finish, LlmError, MediaLimits, MediaSupport,
    Message, Role, TokenLogprob, Usage,
};
use crate::schema::Dialect;
use serde_json::{json, Map, Value};

/// The API root used when none is given.
const DEFAULT_BASE: &str = "https://generativelanguage.googleapis.com";
/// Google's Gemini API, the one server `GEMINI_API_KEY` goes to unasked.
const GEMINI_API: OfficialApi = OfficialApi {
    host: "generativelanguage.googleapis.com",
    key_env: "GEMINI_API_KEY",
    key_required: true,
};

/// A Gemini model behind the Gemini API's `generateContent`. Cheap to clone.
///
/// The API key is held as a [`Secret`](crate::llm::Secret) and sent in a header: it never appears in a URL, in `Debug`
/// output or in errors. A key goes only where it is named: without [`api_key`](GeminiBuilder::api_key) or
/// [`api_key_env`](GeminiBuilder::api_key_env), `GEMINI_API_KEY` is sent to Google's own API
/// (`https://generativelanguage.googleapis.com`, where it is required) and to no other base URL, which
/// then gets no key; and no key goes over plain `http` to a host other than this machine unless
/// [`allow_insecure_key`](GeminiBuilder::allow_insecure_key) says so.
///
/// A request follows a redirect only within the origin (scheme, host, port) it was sent to: a redirect
/// anywhere else, where the key must not go, ends it with [`LlmError::Redirect`](crate::llm::LlmError::Redirect).
///
/// ```no_run
/// use llm_extract::llm::Gemini;
///
/// # fn main() -> Result<(), llm_extract::llm::LlmError> {
/// // Key from GEMINI_API_KEY.
/// let gemini = Gemini::new("gemini-2.5-flash")?;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Gemini {
    backend: Backend<GenerateWire>,
    polling: Polling,
    uploads: std::sync::Arc<Uploads>,
}

http_backend!(Gemini, keyed, own_llm);

impl crate::llm::Llm for Gemini {
    fn dialect(&self) -> Dialect {
        self.backend.dialect()
    }

    fn chat(&self, request: ChatRequest) -> BoxFuture<'_, Result<ChatResponse, LlmError>> {
        Box::pin(async move {
            let request =
                gemini_files::upload_large(&self.backend, request, self.polling, &self.uploads)
                    .await?;
            self.backend.chat(request).await
        })
    }

    fn chat_stream(&self, request: ChatRequest) -> BoxFuture<'_, Result<ChatStream, LlmError>> {
        Box::pin(async move {
            let request =
                gemini_files::upload_large(&self.backend, request, self.polling, &self.uploads)
                    .await?;
            self.backend.chat_stream(request).await
        })
    }

    fn describe(&self) -> Option<crate::llm::Description> {
        Some(self.backend.description())
    }

    fn accepts(&self, request: &ChatRequest) -> Result<(), LlmError> {
        gemini_files::accepts(request, &GenerateWire::MEDIA, self.backend.media_limits())
    }

    fn gives_logprobs(&self) -> bool {
        self.backend.gives_logprobs()
    }
}

impl Gemini {
    /// The backend as a provider's batch API uses it.
    pub(crate) fn batch_wire(&self) -> std::sync::Arc<dyn crate::llm::BatchWire> {
        std::sync::Arc::new(self.backend.clone())
    }
}

/// The settings of the `generateContent` wire format.
#[derive(Debug, Clone)]
struct GenerateWire {
    openapi_schema: bool,
}

/// Builds a [`Gemini`] backend.
#[derive(Debug, Clone)]
pub struct GeminiBuilder {
    common: Common,
    wire: GenerateWire,
    polling: Polling,
}

impl GeminiBuilder {
    wire_setters! {
        /// Sends the schema in the older `responseSchema` field, as the OpenAPI subset it takes (upper-case
        /// types, `nullable`, `propertyOrdering`), for a model or deployment without `responseJsonSchema`.
        /// Default `false`. Maps and tuples cannot be written in that subset: a schema with them fails before
        /// any request with [`LlmError::Config`].
        openapi_schema: bool;
    }

    /// The API root (default `https://generativelanguage.googleapis.com`); requests go to
    /// `{base}/v1beta/models/{model}:generateContent`. For proxies and gateways.
    pub fn base_url(mut self, url: impl Into<String>) -> Self {
        self.common.base_url = Some(url.into());
        self
    }

    /// How long to wait between two reads of a file uploaded through the Files API that is still
    /// `PROCESSING` (default 2 s), and how many reads to make before giving up (default 60).
    pub fn file_polling(mut self, interval: std::time::Duration, attempts: u32) -> Self {
        self.polling = Polling { interval, attempts };
        self
    }

    key_builder_methods!(
        "in `x-goog-api-key`",
        "GEMINI_API_KEY",
        "https://generativelanguage.googleapis.com"
    );

    http_builder_methods!();

    /// Builds the backend, with the key chosen as the type's documentation says.
    pub fn build(mut self) -> Result<Gemini, LlmError> {
        let model = self.common.model.strip_prefix("models/");
        let model = model.unwrap_or(&self.common.model).to_owned();
        let valid = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_');
        if model.is_empty() || !model.chars().all(valid) {
            return Err(LlmError::Config {
                message: format!(
                    "the model name {model:?} is not one Gemini uses (letters, digits, '.', '-', '_'), \
                     e.g. gemini-2.5-flash"
                ),
            });
        }
        self.common.model = model;
        let raw = self.common.base_url.as_deref().unwrap_or(DEFAULT_BASE);
        let base = backend::normalize_base(raw, None, "https://api.example.com")?;
        Ok(Gemini {
            backend: Backend::build(self.wire, base, self.common)?,
            polling: self.polling,
            uploads: Default::default(),
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
            common: Common::new(None, model.into()),
            wire: GenerateWire {
                openapi_schema: false,
            },
            polling: Polling::default(),
        }
    }
}

/// A message's parts: each medium an `inline_data` part (its media type and base64 bytes) or, for a
/// URL, a `file_data` part with the URL as its `file_uri`; then the text, unless it is empty beside
/// media (the image alone is the input). Parts past the inline limit ([`MediaLimits::gemini`]) were
/// uploaded through the Files API before this, and come here as the URIs of their files.
fn parts(message: &Message) -> Vec<Value> {
    let mut parts: Vec<Value> = message
        .media
        .iter()
        .map(|media| {
            let mime_type = media.media_type().as_str();
            match (media.url(), media.base64()) {
                (Some(url), _) => json!({"file_data": {"mime_type": mime_type, "file_uri": url}}),
                (None, data) => json!({"inline_data": {
                    "mime_type": mime_type,
                    "data": data.unwrap_or_default(),
                }}),
            }
        })
        .collect();
    if !message.content.is_empty() || parts.is_empty() {
        parts.push(json!({"text": message.content}));
    }
    parts
}

impl Protocol for GenerateWire {
    const NAME: &'static str = "Gemini";
    const FRAMING: Framing = Framing::Sse;
    const API: Option<OfficialApi> = Some(GEMINI_API);
    const KEY_HEADER: Option<&'static str> = Some("x-goog-api-key");
    const CONNECT_HINT: &'static str =
        "is the API reachable from here? Check the base URL (and any proxy)";
    const MODEL_HINT: &'static str =
        "check the model name (e.g. gemini-2.5-flash); GET {base}/v1beta/models lists the models this key can use";
    const ENDPOINT_HINT: &'static str =
        "is {base} the API root? requests go to {base}/v1beta/models/{model}:generateContent";
    type Stream = Responses;
    const MEDIA: MediaSupport = MediaSupport {
        backend: "Gemini",
        images: true,
        pdfs: true,
        image_urls: true,
        pdf_urls: true,
        hint: "",
    };
    const MEDIA_LIMITS: MediaLimits = MediaLimits::gemini();

    fn dialect(&self) -> Dialect {
        Dialect::Gemini
    }

    fn endpoint(&self, site: &Site, stream: bool) -> String {
        let model = &site.model;
        if stream {
            site.url(&format!(
                "/v1beta/models/{model}:streamGenerateContent?alt=sse"
            ))
        } else {
            site.url(&format!("/v1beta/models/{model}:generateContent"))
        }
    }

    fn body(&self, _site: &Site, request: &ChatRequest, _stream: bool) -> Result<Value, LlmError> {
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
            contents.push(json!({"role": role, "parts": parts(message)}));
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
        if request.logprobs {
            config.insert("responseLogprobs".into(), json!(true));
        }
        if let Some(schema) = &request.schema {
            config.insert("responseMimeType".into(), json!("application/json"));
            if self.openapi_schema {
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

    fn read(&self, value: &Value) -> Result<ChatResponse, LlmError> {
        let mut answer = Answer::default();
        read_response(&mut answer, value)?;
        if answer.finish.is_none() {
            return Err(LlmError::InvalidResponse {
                message: "the answer has no candidate with a finishReason".into(),
                body: answer.text,
            });
        }
        Ok(answer.response())
    }

    /// A bad key is a 400 `INVALID_ARGUMENT` whose details give the reason `API_KEY_INVALID`.
    fn classify(&self, status: u16, body: &Value) -> Option<Status> {
        let details = body.pointer("/error/details").and_then(Value::as_array)?;
        let bad_key = details
            .iter()
            .any(|detail| detail.get("reason").and_then(Value::as_str) == Some("API_KEY_INVALID"));
        (status == 400 && bad_key).then_some(Status::Auth)
    }
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

/// `GenerateContentResponse`s read into one answer: one for `generateContent`, a stream of them for
/// `streamGenerateContent?alt=sse` (each `data:` event one; no end marker: the body ends after the
/// one carrying `finishReason`).
#[derive(Debug, Default)]
struct Responses;

/// Reads one response into `answer`: its text parts (thought parts are reasoning), finish reason and
/// usage.
fn read_response(answer: &mut Answer, value: &Value) -> Result<(), LlmError> {
    if let Some(message) = http::error_text(value) {
        return Err(LlmError::Stream {
            message: format!("the server reported an error mid-answer: {message}"),
            received: answer.text.clone(),
        });
    }
    if let Some(version) = value.get("modelVersion").and_then(Value::as_str) {
        answer.model = Some(version.to_owned());
    }
    if let Some(usage) = value.get("usageMetadata").filter(|u| u.is_object()) {
        let count = |key: &str| usage.get(key).and_then(Value::as_u64).unwrap_or(0);
        let thoughts = count("thoughtsTokenCount");
        answer.usage = Usage {
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
            received: answer.text.clone(),
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
        if part.get("thought").and_then(Value::as_bool) == Some(true) {
            answer.thought(text);
        } else {
            answer.text(text);
        }
    }
    if let Some(chosen) = candidate
        .and_then(|c| c.pointer("/logprobsResult/chosenCandidates"))
        .and_then(Value::as_array)
    {
        // `logProbability` is left out when it is 0 (a proto3 default).
        answer.tokens(chosen.iter().map(|token| {
            TokenLogprob::new(
                token
                    .get("token")
                    .and_then(Value::as_str)
                    .unwrap_or_default(),
                token
                    .get("logProbability")
                    .and_then(Value::as_f64)
                    .unwrap_or(0.0) as f32,
            )
        }));
    }
    if let Some(reason) = candidate
        .and_then(|c| c.get("finishReason"))
        .and_then(Value::as_str)
    {
        if let Some(meaning) = withheld(reason) {
            return Err(LlmError::Blocked {
                reason: reason.to_owned(),
                message: meaning.to_owned(),
                received: answer.text.clone(),
            });
        }
        answer.finish = Some(match reason {
            "STOP" => Finish::Stop,
            "MAX_TOKENS" => Finish::Length,
            other => Finish::Other(other.to_owned()),
        });
    }
    Ok(())
}

impl StreamReader for Responses {
    const UNFINISHED: &'static str = "no finishReason";

    fn event(&mut self, data: &str, answer: &mut Answer) -> Result<(), LlmError> {
        read_response(answer, &backend::json_event(data)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::{Message, Secret};

    fn backend() -> Gemini {
        Gemini::builder("models/gemini-test")
            .api_key("AIza-secret")
            .build()
            .unwrap()
    }

    #[test]
    fn gemini_api_key_goes_to_google_alone_and_no_key_over_plain_http_elsewhere() {
        let env = |name: &str| (name == GEMINI_API.key_env).then(|| "AIza-implicit".to_owned());
        let official = Gemini::builder("m").env_lookup(env).build().unwrap();
        assert_eq!(
            official.backend.key().cloned(),
            Some(Secret::new("AIza-implicit"))
        );
        for elsewhere in [
            "http://127.0.0.1:8000",
            "https://gateway.example.com/gemini",
            "https://api.anthropic.com",
        ] {
            let llm = Gemini::builder("m")
                .base_url(elsewhere)
                .env_lookup(env)
                .build()
                .unwrap();
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
        let body = gemini.backend.request_body(&request, true).unwrap();
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
            gemini.backend.endpoint(true),
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
        let body = gemini.backend.request_body(&request, true).unwrap();
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
        let err = gemini.backend.request_body(&map, true).unwrap_err();
        assert!(err.to_string().contains("/properties/m"), "{err}");
    }

    #[test]
    fn responses_give_text_thoughts_usage_and_finish() {
        let done = GenerateWire { openapi_schema: false }
            .read(
                &json!({
                    "candidates": [{"content": {"role": "model", "parts": [
                        {"text": "plan", "thought": true}, {"text": "{\"a\":1}"}
                    ]}, "finishReason": "MAX_TOKENS"}],
                    "usageMetadata": {"promptTokenCount": 4, "candidatesTokenCount": 6, "thoughtsTokenCount": 10, "cachedContentTokenCount": 2},
                    "modelVersion": "gemini-test-001"
                }),
            )
            .unwrap();
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
            let err = read_response(&mut Answer::default(), &value).unwrap_err();
            match &err {
                LlmError::Blocked { reason: got, .. } => assert_eq!(got, reason),
                other => panic!("{other:?}"),
            }
            assert!(!err.is_transient());
        }
    }
}

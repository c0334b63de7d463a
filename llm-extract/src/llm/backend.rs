//! The one HTTP backend, generic over a provider's [`Protocol`]: the client and its options, the key
//! and its redaction, sending a request and reading the whole answer, streaming one, and the one rule
//! that turns an error status into the [`LlmError`] a caller can act on.
//!
//! A provider ([`OpenAiCompatible`](super::OpenAiCompatible), [`Anthropic`](super::Anthropic),
//! [`Gemini`](super::Gemini), [`Ollama`](super::Ollama)) is its wire format alone: where a request goes,
//! its body, how a whole answer and one streamed event read, how its streams are framed (server-sent
//! events or NDJSON), and the hints its errors carry.
//!
//! The status rule ([`Status::of`]), the same for every provider:
//!
//! | status | error |
//! |---|---|
//! | 401, 403 | [`LlmError::Auth`], with where the key went |
//! | 404 whose message speaks of the model | [`LlmError::ModelNotFound`], with what to do about it |
//! | other 404 | [`LlmError::Http`], with what to check in the base URL |
//! | 408, 409, 429, 5xx | [`LlmError::Http`], transient: retried under the [`RetryPolicy`](super::RetryPolicy) |
//! | other 4xx | [`LlmError::Http`]: the server refused the request, which is not sent again |
//!
//! A protocol may read an error body more closely ([`Protocol::classify`]): Gemini answers a bad key
//! with 400 and the reason `API_KEY_INVALID`, which is an [`LlmError::Auth`].

use super::credentials::{self, KeyChoice, OfficialApi, Secret};
use super::env::Env;
use super::error::Status;
use super::http::{self, ErrorRule, HttpClient, HttpOptions, Outgoing, SseFrames};
use super::{
    ChatEvent, ChatRequest, ChatResponse, ChatStream, Finish, LlmError, MediaLimits, MediaSupport,
    TokenLogprob, Usage,
};
use crate::schema::Dialect;
use serde_json::Value;
use std::collections::VecDeque;
use std::sync::Arc;

/// How a streamed body is cut into events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// Server-sent events: an event's `data:` lines, up to the blank line that ends it.
    Sse,
    /// One JSON object a line.
    Ndjson,
}

/// Where a backend sends its requests, as a protocol needs it to write URLs and hints.
#[derive(Debug)]
pub struct Site {
    /// The API root, normalised (no trailing slash), credentials included: write URLs with it, and
    /// show it only through [`redact_url`](super::redact_url).
    pub base: String,
    /// The model's name.
    pub model: String,
}

impl Site {
    /// `hint` with `{base}` (credentials redacted) and `{model}` filled in.
    fn hint(&self, hint: &str) -> String {
        hint.replace("{base}", &credentials::redact_url(&self.base))
            .replace("{model}", &self.model)
    }
}

/// A provider's wire format: everything the generic HTTP backend does not know. Implement it, and
/// [`HttpBackend`](super::HttpBackend) sends requests in it with everything the built-in providers
/// have: the timeouts, the body limit and the retry policy, the key's rules (a key named on the
/// builder goes to the URL named, never over plain `http` to another machine unless allowed; the
/// provider's own variable to its [`API`](Self::API) alone), redirects followed within the origin
/// only, keys and the URL's credentials redacted from every error, log and
/// [`Exchange`](super::Exchange), media checked before sending, and the status rule of [`Status`].
///
/// The built-in providers ([`OpenAiCompatible`](super::OpenAiCompatible),
/// [`Anthropic`](super::Anthropic), [`Gemini`](super::Gemini), [`Ollama`](super::Ollama)) are each
/// one of these; `examples/custom_provider.rs` writes a small one.
pub trait Protocol: std::fmt::Debug + Send + Sync + 'static {
    /// The backend's name, in `Debug` output.
    const NAME: &'static str;
    /// How a streamed answer is framed.
    const FRAMING: Framing;
    /// The provider's own API and the variable its key is read from; `None` for a backend without keys.
    const API: Option<OfficialApi>;
    /// The header the key goes in (`None`: `Authorization: Bearer`), as hints name it.
    const KEY_HEADER: Option<&'static str>;
    /// What to check when no connection can be made.
    const CONNECT_HINT: &'static str;
    /// The state of one streamed answer being read.
    type Stream: StreamReader;
    /// What the wire format takes of media (checked before [`body`](Self::body) is called, which may
    /// then write every part it is given).
    const MEDIA: MediaSupport;
    /// The provider's documented media limits, unless the builder sets others.
    const MEDIA_LIMITS: MediaLimits;
    /// Whether the provider gives token log-probabilities when a request asks for them.
    const LOGPROBS: bool = true;

    /// The schema dialect the server enforces.
    fn dialect(&self) -> Dialect;
    /// The URL a chat request goes to.
    fn endpoint(&self, site: &Site, stream: bool) -> String;
    /// Headers every request carries besides the key (never a credential: these may be logged).
    fn headers(&self) -> Vec<(&'static str, String)> {
        Vec::new()
    }
    /// The body of a chat request.
    fn body(&self, site: &Site, request: &ChatRequest, stream: bool) -> Result<Value, LlmError>;
    /// A whole (non-streamed) answer. An error object in its place is caught before this is called.
    fn read(&self, answer: &Value) -> Result<ChatResponse, LlmError>;
    /// What to do when the server does not have the model; `{base}` stands for the API root
    /// (credentials redacted), `{model}` for the model.
    const MODEL_HINT: &'static str;
    /// What to check when the server answers 404 about something other than the model (`{base}` and
    /// `{model}` as in [`MODEL_HINT`](Self::MODEL_HINT)).
    const ENDPOINT_HINT: &'static str;
    /// What an error status means when this provider's error body says more than the status does;
    /// `None` leaves it to the rule of this module.
    fn classify(&self, status: u16, body: &Value) -> Option<Status> {
        let _ = (status, body);
        None
    }
}

/// The reading of one streamed answer, event by event (an SSE event's data or one NDJSON line), into
/// the [`Answer`] the backend keeps for it. A new one (its `Default`) reads each streamed answer, and
/// each answer sent again after its stream broke.
pub trait StreamReader: Default + Send + 'static {
    /// What a stream that ends before the server finished the answer lacks (the marks of its end), for
    /// the error that says so.
    const UNFINISHED: &'static str;

    /// Reads one event into `answer`.
    fn event(&mut self, data: &str, answer: &mut Answer) -> Result<(), LlmError>;

    /// The body ended cleanly before the answer was done: it is complete when the server said why it
    /// ended (some servers are terse about the rest), and broken otherwise.
    fn end(&mut self, answer: &mut Answer) -> Result<(), LlmError> {
        if answer.finish.is_none() {
            return Err(LlmError::Stream {
                message: format!(
                    "the stream ended before the server finished the answer ({})",
                    Self::UNFINISHED
                ),
                received: String::new(),
            });
        }
        answer.done();
        Ok(())
    }
}

/// An HTTP backend speaking `P`. Cheap to clone (the client and settings are shared).
pub(crate) struct Backend<P> {
    shared: Arc<Shared<P>>,
}

impl<P> Clone for Backend<P> {
    fn clone(&self) -> Self {
        Backend {
            shared: Arc::clone(&self.shared),
        }
    }
}

struct Shared<P> {
    site: Site,
    key: Option<Secret>,
    http: HttpClient,
    protocol: P,
    media_limits: MediaLimits,
}

impl<P: Protocol> std::fmt::Debug for Backend<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let shared = &*self.shared;
        f.debug_struct(P::NAME)
            .field("base", &credentials::redact_url(&shared.site.base))
            .field("model", &shared.site.model)
            .field("key", &shared.key)
            .field("http", &shared.http)
            .field("protocol", &shared.protocol)
            .finish()
    }
}

/// What every builder holds besides its provider's settings: the API root, the model, the key as the
/// caller named it, the HTTP options, the environment it reads. Its `Debug` redacts the credentials of
/// the URL.
#[derive(Clone)]
pub(crate) struct Common {
    pub base_url: Option<String>,
    pub model: String,
    pub key: KeyChoice,
    pub http: HttpOptions,
    pub env: Env,
    /// The media limits the caller set, replacing the protocol's own.
    pub media_limits: Option<MediaLimits>,
}

impl Common {
    /// The settings for `model` at `base_url`.
    pub fn new(base_url: Option<String>, model: String) -> Self {
        Common {
            base_url,
            model,
            key: KeyChoice::default(),
            http: HttpOptions::default(),
            env: Env::default(),
            media_limits: None,
        }
    }
}

impl std::fmt::Debug for Common {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Common")
            .field(
                "base_url",
                &self.base_url.as_deref().map(credentials::redact_url),
            )
            .field("model", &self.model)
            .field("key", &self.key)
            .field("http", &self.http)
            .field("env", &self.env)
            .field("media_limits", &self.media_limits)
            .finish()
    }
}

impl<P: Protocol> Backend<P> {
    /// A backend at `base` (normalised already) with the settings of `common`; the key is chosen, and
    /// the credentials of `base` checked, by the rules of [`credentials`](super::credentials) (a
    /// protocol without an API sends no key, only what its URL holds).
    pub fn build(protocol: P, base: String, common: Common) -> Result<Self, LlmError> {
        let key = common.key.resolve(&base, P::API, &common.env)?;
        Ok(Backend {
            shared: Arc::new(Shared {
                site: Site {
                    base,
                    model: common.model,
                },
                key,
                http: HttpClient::new(common.http)?,
                protocol,
                media_limits: common.media_limits.unwrap_or(P::MEDIA_LIMITS),
            }),
        })
    }

    /// The model's name.
    pub fn model(&self) -> &str {
        &self.shared.site.model
    }

    /// The API root, with any credentials it holds.
    pub fn base(&self) -> &str {
        &self.shared.site.base
    }

    /// Who this backend is: its provider as the OpenTelemetry GenAI conventions name it, its API root
    /// with credentials redacted, its model.
    pub fn description(&self) -> super::Description {
        let provider = match P::NAME {
            "OpenAiCompatible" => "openai",
            "Anthropic" => "anthropic",
            "Gemini" => "gcp.gemini",
            "Ollama" => "ollama",
            other => other,
        };
        let described = super::Description::new(provider)
            .with_url(self.base())
            .with_model(self.model());
        // The address counts as credentials only when redacting it changed it.
        let in_url = Some(self.base()).filter(|base| super::redact_url(base) != *base);
        match (&self.shared.key, in_url) {
            (None, None) => described,
            (key, url) => described.with_credentials(super::CredentialDigest::of([
                key.as_ref().map_or("", |k| k.expose()),
                url.unwrap_or(""),
            ])),
        }
    }

    /// Whether requests carry a key.
    pub fn has_key(&self) -> bool {
        self.shared.key.is_some()
    }

    /// The schema dialect the server enforces.
    pub fn dialect(&self) -> Dialect {
        self.shared.protocol.dialect()
    }

    fn outgoing<'a>(
        &'a self,
        url: &'a str,
        body: Option<&'a Value>,
        headers: &'a [(&'static str, String)],
        media: &'a [super::Media],
    ) -> Outgoing<'a> {
        Outgoing {
            url,
            body,
            raw: None,
            bearer: self.shared.key.as_ref(),
            key_header: P::KEY_HEADER,
            headers,
            connect_hint: P::CONNECT_HINT,
            media,
        }
    }

    /// Sends `body` (a `GET` without one) to `url` and hands the whole answer's bytes to `read`, under
    /// the retry policy; every error scrubbed and given its meaning.
    pub async fn call<T>(
        &self,
        url: &str,
        body: Option<&Value>,
        read: impl Fn(&[u8]) -> Result<T, LlmError>,
    ) -> Result<T, LlmError> {
        self.call_with_media(url, body, &[], read).await
    }

    /// [`call`](Self::call) with a body that carries `media`.
    async fn call_with_media<T>(
        &self,
        url: &str,
        body: Option<&Value>,
        media: &[super::Media],
        read: impl Fn(&[u8]) -> Result<T, LlmError>,
    ) -> Result<T, LlmError> {
        let headers = self.shared.protocol.headers();
        let request = self.outgoing(url, body, &headers, media);
        self.shared.http.send_and_read(&request, self, read).await
    }

    /// Sends `bytes` of type `content_type` (a file upload) to `url` as [`call`](Self::call) sends
    /// JSON.
    pub async fn call_raw<T>(
        &self,
        url: &str,
        content_type: &str,
        bytes: &[u8],
        read: impl Fn(&[u8]) -> Result<T, LlmError>,
    ) -> Result<T, LlmError> {
        let headers = self.shared.protocol.headers();
        let mut request = self.outgoing(url, None, &headers, &[]);
        request.raw = Some((content_type, bytes));
        self.shared.http.send_and_read(&request, self, read).await
    }

    /// Sends `body` (JSON), or `raw` bytes with their content type in its place, to `url` with
    /// `extra` headers besides the protocol's, as [`call`](Self::call) does, handing `read` the
    /// response's headers beside its body (a resumable upload answers in a header).
    pub async fn call_headed<T>(
        &self,
        url: &str,
        body: Option<&Value>,
        raw: Option<(&str, &[u8])>,
        extra: &[(&'static str, String)],
        read: impl Fn(&reqwest::header::HeaderMap, &[u8]) -> Result<T, LlmError>,
    ) -> Result<T, LlmError> {
        let mut headers = self.shared.protocol.headers();
        headers.extend_from_slice(extra);
        let mut request = self.outgoing(url, body, &headers, &[]);
        request.raw = raw;
        self.shared
            .http
            .send_and_read_headed(&request, self, read)
            .await
    }

    /// The media limits requests are checked against.
    pub fn media_limits(&self) -> &MediaLimits {
        &self.shared.media_limits
    }

    /// The body of a whole (non-streamed) chat request, as [`chat`](Self::chat) sends it.
    pub fn chat_body(&self, request: &ChatRequest) -> Result<Value, LlmError> {
        self.body(request, false)
    }

    /// The URL a whole (non-streamed) chat request goes to.
    pub fn chat_url(&self) -> String {
        self.shared.protocol.endpoint(&self.shared.site, false)
    }

    /// The retry policy of this backend's requests.
    pub fn retry_policy(&self) -> &super::RetryPolicy {
        &self.shared.http.options.retry
    }

    /// Reads a whole answer as [`chat`](Self::chat) reads the body of its response.
    pub fn read_answer(&self, answer: &Value) -> Result<ChatResponse, LlmError> {
        if let Some(message) = http::error_text(answer) {
            return Err(LlmError::InvalidResponse {
                message: "the server answered an error in place of the answer".into(),
                body: message,
            });
        }
        self.shared.protocol.read(answer)
    }

    /// Whether the protocol can take `request`: its media of forms the protocol takes, within the
    /// limits.
    pub fn accepts(&self, request: &ChatRequest) -> Result<(), LlmError> {
        if request.has_media() {
            P::MEDIA.check(request, &self.shared.media_limits)?;
        }
        Ok(())
    }

    /// Whether the protocol gives token log-probabilities.
    pub fn gives_logprobs(&self) -> bool {
        P::LOGPROBS
    }

    /// The body of `request`, once its media are found to be of forms the protocol takes and within
    /// the limits: a refused part fails here, before anything is sent.
    fn body(&self, request: &ChatRequest, stream: bool) -> Result<Value, LlmError> {
        let shared = &*self.shared;
        if request.has_media() {
            P::MEDIA.check(request, &shared.media_limits)?;
        }
        shared.protocol.body(&shared.site, request, stream)
    }

    /// Sends `request` and reads the whole answer.
    pub async fn chat(&self, request: ChatRequest) -> Result<ChatResponse, LlmError> {
        let shared = &*self.shared;
        let body = self.body(&request, false)?;
        let url = shared.protocol.endpoint(&shared.site, false);
        let media = request_media(&request);
        self.call_with_media(&url, Some(&body), &media, |bytes| {
            let answer = http::json_body(bytes)?;
            if let Some(message) = http::error_text(&answer) {
                // A success status with an error object: transient, as a body that is not the answer.
                return Err(LlmError::InvalidResponse {
                    message: "the server answered an error with a success status".into(),
                    body: message,
                });
            }
            shared.protocol.read(&answer)
        })
        .await
    }

    /// Sends `request` and streams the answer; every error, the one that ends the stream included, is
    /// scrubbed and given its meaning.
    pub async fn chat_stream(&self, request: ChatRequest) -> Result<ChatStream, LlmError> {
        let shared = &*self.shared;
        let body = self.body(&request, true)?;
        let url = shared.protocol.endpoint(&shared.site, true);
        let headers = shared.protocol.headers();
        let new_wire = move || Framed::<P::Stream>::new(P::FRAMING);
        let media = request_media(&request);
        shared
            .http
            .stream(
                &self.outgoing(&url, Some(&body), &headers, &media),
                self.clone(),
                new_wire,
            )
            .await
    }

    /// An error status as the rule says, its message scrubbed already.
    fn status_error(
        &self,
        status: u16,
        message: String,
        retry_after: Option<std::time::Duration>,
        body: Option<&[u8]>,
    ) -> LlmError {
        let shared = &*self.shared;
        let refined = body
            .and_then(|bytes| serde_json::from_slice::<Value>(bytes).ok())
            .and_then(|body| shared.protocol.classify(status, &body));
        match refined.unwrap_or(Status::of(status)) {
            Status::Auth => LlmError::Auth {
                status,
                message: match P::API {
                    Some(api) => format!(
                        "{message} ({})",
                        api.auth_hint(
                            self.has_key(),
                            P::KEY_HEADER.unwrap_or("Authorization: Bearer")
                        )
                    ),
                    None => message,
                },
            },
            Status::NotFound if message.to_lowercase().contains("model") => {
                LlmError::ModelNotFound {
                    hint: shared.site.hint(P::MODEL_HINT),
                    model: shared.site.model.clone(),
                    message,
                }
            }
            Status::NotFound => LlmError::Http {
                status,
                message: format!("{message} ({})", shared.site.hint(P::ENDPOINT_HINT)),
                retry_after,
            },
            Status::Transient | Status::Refused => LlmError::Http {
                status,
                message,
                retry_after,
            },
        }
    }
}

#[cfg(test)]
impl<P: Protocol> Backend<P> {
    /// The protocol's settings.
    pub fn protocol(&self) -> &P {
        &self.shared.protocol
    }

    /// The key requests carry.
    pub fn key(&self) -> Option<&Secret> {
        self.shared.key.as_ref()
    }

    /// The body of a chat request.
    pub fn request_body(&self, request: &ChatRequest, stream: bool) -> Result<Value, LlmError> {
        self.body(request, stream)
    }

    /// The URL of a chat request.
    pub fn endpoint(&self, stream: bool) -> String {
        self.shared.protocol.endpoint(&self.shared.site, stream)
    }
}

/// The events a `R` reads from a streamed `body` framed as `framing` says, and how the body ended.
#[cfg(test)]
pub(crate) fn read_body<R: StreamReader>(
    framing: Framing,
    body: &str,
) -> (VecDeque<ChatEvent>, Result<(), LlmError>) {
    use http::WireFormat as _;
    let mut framed = Framed::<R>::new(framing);
    let mut events = VecDeque::new();
    for line in body.split('\n') {
        if let Err(err) = framed.line(line.trim_end_matches('\r'), &mut events) {
            return (events, Err(err));
        }
        if framed.finished() {
            return (events, Ok(()));
        }
    }
    let end = framed.end(&mut events);
    (events, end)
}

impl<P: Protocol> ErrorRule for Backend<P> {
    fn refine(&self, err: LlmError, body: Option<&[u8]>) -> LlmError {
        // Scrubbed first, so that the hints added here are not cut with the server's text.
        match credentials::scrub(err, self.shared.key.as_ref(), &self.shared.site.base) {
            LlmError::Http {
                status,
                message,
                retry_after,
            } => self.status_error(status, message, retry_after, body),
            other => other,
        }
    }
}

/// A [`StreamReader`] behind its protocol's framing, with the answer it reads: the lines of a body in,
/// events out.
struct Framed<R> {
    framing: Framing,
    frames: SseFrames,
    reader: R,
    answer: Answer,
}

impl<R: StreamReader> Framed<R> {
    fn new(framing: Framing) -> Self {
        Framed {
            framing,
            frames: SseFrames::default(),
            reader: R::default(),
            answer: Answer::default(),
        }
    }

    /// Reads one event, handing on what it decoded (before the failure, if it fails).
    fn event(&mut self, data: &str, events: &mut VecDeque<ChatEvent>) -> Result<(), LlmError> {
        let read = self.reader.event(data, &mut self.answer);
        events.append(&mut self.answer.events);
        read
    }
}

impl<R: StreamReader> http::WireFormat for Framed<R> {
    fn line(&mut self, line: &str, events: &mut VecDeque<ChatEvent>) -> Result<(), LlmError> {
        match self.framing {
            Framing::Ndjson if line.trim().is_empty() => Ok(()),
            Framing::Ndjson => self.event(line, events),
            Framing::Sse => match self.frames.line(line) {
                Some(data) => self.event(&data, events),
                None => Ok(()),
            },
        }
    }

    fn end(&mut self, events: &mut VecDeque<ChatEvent>) -> Result<(), LlmError> {
        if let Some(data) = self.frames.flush() {
            self.event(&data, events)?;
        }
        if self.answer.done {
            return Ok(());
        }
        if let Some(err) = self.frames.not_an_event_stream() {
            return Err(err);
        }
        let end = self.reader.end(&mut self.answer);
        events.append(&mut self.answer.events);
        end
    }

    fn finished(&self) -> bool {
        self.answer.done
    }

    fn usage(&self) -> Usage {
        self.answer.usage
    }
}

/// An answer being read off the wire: the text and reasoning so far, the counts, why it ended, the
/// model, and the events its pieces make, not yet handed on. A [`StreamReader`] adds what each event
/// says ([`text`](Answer::text), [`thought`](Answer::thought), the public fields) and calls
/// [`done`](Answer::done) at the end of the answer.
#[derive(Debug, Default)]
pub struct Answer {
    /// The answer's text so far.
    pub text: String,
    /// The reasoning so far.
    pub thinking: String,
    /// The counts the server sent.
    pub usage: Usage,
    /// Why generation ended, once the server said.
    pub finish: Option<Finish>,
    /// The model that answers, once the server said.
    pub model: Option<String>,
    /// The tokens of the answer with their log-probabilities, when the server sent them.
    pub logprobs: Option<Vec<TokenLogprob>>,
    /// Whether the final [`ChatEvent::Done`] was made.
    pub done: bool,
    /// The events made and not yet handed on.
    events: VecDeque<ChatEvent>,
}

impl Answer {
    /// More answer text.
    pub fn text(&mut self, piece: &str) {
        if !piece.is_empty() {
            self.text.push_str(piece);
            self.events.push_back(ChatEvent::Delta(piece.to_owned()));
        }
    }

    /// More tokens with their log-probabilities.
    pub fn tokens(&mut self, tokens: impl IntoIterator<Item = TokenLogprob>) {
        self.logprobs.get_or_insert_with(Vec::new).extend(tokens);
    }

    /// More reasoning.
    pub fn thought(&mut self, piece: &str) {
        if !piece.is_empty() {
            self.thinking.push_str(piece);
            self.events.push_back(ChatEvent::Thinking(piece.to_owned()));
        }
    }

    /// Makes the final [`ChatEvent::Done`] (a stop unless the server said otherwise).
    pub fn done(&mut self) {
        let whole = ChatResponse {
            text: std::mem::take(&mut self.text),
            thinking: Some(std::mem::take(&mut self.thinking)).filter(|t| !t.is_empty()),
            usage: self.usage,
            finish: self.finish.take().unwrap_or_default(),
            model: self.model.take(),
            logprobs: self.logprobs.take(),
            cached: false,
        };
        self.done = true;
        self.events.push_back(ChatEvent::Done(whole));
    }

    /// The whole answer.
    pub fn response(self) -> ChatResponse {
        ChatResponse {
            text: self.text,
            thinking: Some(self.thinking).filter(|t| !t.is_empty()),
            usage: self.usage,
            finish: self.finish.unwrap_or_default(),
            model: self.model,
            logprobs: self.logprobs,
            cached: false,
        }
    }
}

/// The images and PDFs of `request`'s messages (cheap: a part's bytes are shared).
fn request_media(request: &ChatRequest) -> Vec<super::Media> {
    request
        .messages
        .iter()
        .flat_map(|message| message.media.iter().cloned())
        .collect()
}

/// One streamed event's data as JSON.
pub(crate) fn json_event(data: &str) -> Result<Value, LlmError> {
    serde_json::from_str(data).map_err(|e| LlmError::InvalidResponse {
        message: format!("an event of the stream is not JSON ({e})"),
        body: data.to_owned(),
    })
}

/// One streamed event's data as JSON, failing when it is an error object (the server's report of a
/// failure mid-answer).
pub(crate) fn answer_event(data: &str) -> Result<Value, LlmError> {
    let value = json_event(data)?;
    match http::error_text(&value) {
        Some(message) => Err(LlmError::Stream {
            message: format!("the server reported an error mid-answer: {message}"),
            received: String::new(),
        }),
        None => Ok(value),
    }
}

/// An answer that is not in the wire format, quoting `value`.
pub(crate) fn invalid(message: &str, value: &Value) -> LlmError {
    LlmError::InvalidResponse {
        message: message.to_owned(),
        body: value.to_string(),
    }
}

/// The API root without a trailing slash, checked to be an `http` or `https` URL; a URL without a path
/// gets `default_path` (`/v1`, say) when there is one. `example` shows a good one in the error.
pub(crate) fn normalize_base(
    raw: &str,
    default_path: Option<&str>,
    example: &str,
) -> Result<String, LlmError> {
    let trimmed = raw.trim().trim_end_matches('/');
    let shown = credentials::redact_url(trimmed);
    let url = reqwest::Url::parse(trimmed).map_err(|e| LlmError::Config {
        message: format!("the base URL {shown:?} is not a valid URL ({e}); use one like {example}"),
    })?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(LlmError::Config {
            message: format!("the base URL {shown:?} must start with http:// or https://"),
        });
    }
    // Endpoint paths are appended to the base, so a query or fragment would end up before them
    // (`...?api-version=1/chat/completions`) and the request would go to the wrong address.
    if url.query().is_some() || url.fragment().is_some() {
        return Err(LlmError::Config {
            message: format!(
                "the base URL {shown:?} has a query string or fragment; endpoint paths are appended \
                 to the base URL, so give the API root alone (like {example}); a server that needs \
                 query parameters on every request needs a proxy that adds them"
            ),
        });
    }
    match default_path {
        Some(path) if url.path().trim_matches('/').is_empty() => Ok(format!("{trimmed}{path}")),
        _ => Ok(trimmed.to_owned()),
    }
}

/// The setters of a builder's protocol settings, each named for its field (a value of the parameter's
/// type goes in through `Into`).
macro_rules! wire_setters {
    ($($(#[$doc:meta])* $name:ident: $ty:ty;)*) => {$(
        $(#[$doc])*
        pub fn $name(mut self, $name: $ty) -> Self {
            self.wire.$name = $name.into();
            self
        }
    )*};
}
pub(crate) use wire_setters;

/// The `Debug`, [`Llm`](super::Llm) and accessors of a public backend type wrapping a [`Backend`]
/// (`own_llm`: all but the `Llm`, which the type writes itself).
macro_rules! http_backend {
    ($name:ident) => {
        crate::llm::backend::http_backend!(@shell $name);
        crate::llm::backend::http_backend!(@llm $name);
    };
    ($name:ident, keyed) => {
        crate::llm::backend::http_backend!($name);
        crate::llm::backend::http_backend!(@keyed $name);
    };
    ($name:ident, keyed, own_llm) => {
        crate::llm::backend::http_backend!(@shell $name);
        crate::llm::backend::http_backend!(@keyed $name);
    };
    (@shell $name:ident) => {
        impl std::fmt::Debug for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                std::fmt::Debug::fmt(&self.backend, f)
            }
        }

        impl $name {
            /// The model's name.
            pub fn model(&self) -> &str {
                self.backend.model()
            }
        }
    };
    (@llm $name:ident) => {
        impl crate::llm::Llm for $name {
            fn dialect(&self) -> crate::schema::Dialect {
                self.backend.dialect()
            }

            fn chat(
                &self,
                request: crate::llm::ChatRequest,
            ) -> crate::llm::BoxFuture<'_, Result<crate::llm::ChatResponse, crate::llm::LlmError>>
            {
                Box::pin(self.backend.chat(request))
            }

            fn chat_stream(
                &self,
                request: crate::llm::ChatRequest,
            ) -> crate::llm::BoxFuture<'_, Result<crate::llm::ChatStream, crate::llm::LlmError>>
            {
                Box::pin(self.backend.chat_stream(request))
            }

            fn describe(&self) -> Option<crate::llm::Description> {
                Some(self.backend.description())
            }

            fn accepts(
                &self,
                request: &crate::llm::ChatRequest,
            ) -> Result<(), crate::llm::LlmError> {
                self.backend.accepts(request)
            }

            fn gives_logprobs(&self) -> bool {
                self.backend.gives_logprobs()
            }
        }

    };
    (@keyed $name:ident) => {

        impl $name {
            /// The API root requests go to.
            pub fn base_url(&self) -> &str {
                self.backend.base()
            }

            /// Whether requests carry an API key.
            pub fn has_key(&self) -> bool {
                self.backend.has_key()
            }
        }
    };
}
pub(crate) use http_backend;

/// The key setters of a builder whose backend sends a key (in the header `$header`, read by default
/// from `$env` for `$api` only).
macro_rules! key_builder_methods {
    ($header:literal, $env:literal, $api:literal) => {
        #[doc = concat!("The API key, sent ", $header, ".")]
        pub fn api_key(mut self, key: impl Into<crate::llm::Secret>) -> Self {
            self.common.key.key = Some(key.into());
            self
        }

        #[doc = concat!(
            "Reads the API key from the environment variable `name` when the backend is built (an ",
            "error if it is unset, so a typo does not turn into an anonymous request; the environment ",
            "is the process's unless [`env_lookup`](Self::env_lookup) gives another). Without this or ",
            "[`api_key`](Self::api_key), `", $env, "` is read for `", $api, "` only."
        )]
        pub fn api_key_env(mut self, name: impl Into<String>) -> Self {
            self.common.key.key_env = Some(name.into());
            self
        }

        crate::llm::backend::insecure_key_builder_method!();

        crate::llm::env::env_builder_method!();
    };
}
pub(crate) use key_builder_methods;

/// The `allow_insecure_key` setter of every builder whose requests can carry credentials (a key, or
/// those written into the URL).
macro_rules! insecure_key_builder_method {
    () => {
        /// Lets the key, and credentials written into the URL (`user:password@`, a `key=` or `token=`
        /// query parameter), go over plain `http` to a host other than this machine (default `false`:
        /// building such a backend fails with [`LlmError::InsecureKey`](crate::llm::LlmError::InsecureKey),
        /// as anyone on the network between could read them). This machine is `localhost` and the
        /// loopback addresses (127.0.0.0/8, `::1`), not other names that may resolve to it. For a
        /// trusted network only.
        pub fn allow_insecure_key(mut self, allow: bool) -> Self {
            self.common.key.allow_insecure = allow;
            self
        }
    };
}
pub(crate) use insecure_key_builder_method;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_rule_for_every_error_status() {
        for (status, meaning) in [
            (400, Status::Refused),
            (401, Status::Auth),
            (403, Status::Auth),
            (404, Status::NotFound),
            (405, Status::Refused),
            (408, Status::Transient),
            (409, Status::Transient),
            (413, Status::Refused),
            (422, Status::Refused),
            (429, Status::Transient),
            (500, Status::Transient),
            (503, Status::Transient),
            (529, Status::Transient),
        ] {
            assert_eq!(Status::of(status), meaning, "{status}");
            let err = LlmError::Http {
                status,
                message: String::new(),
                retry_after: None,
            };
            assert_eq!(err.is_transient(), meaning == Status::Transient, "{status}");
        }
    }

    #[test]
    fn base_urls_are_normalized() {
        let v1 = |raw| normalize_base(raw, Some("/v1"), "http://h/v1");
        assert_eq!(v1("http://h:8080").unwrap(), "http://h:8080/v1");
        assert_eq!(v1("http://h:8080/").unwrap(), "http://h:8080/v1");
        assert_eq!(v1("http://h/v1/").unwrap(), "http://h/v1");
        assert_eq!(v1("http://h/openai/v1").unwrap(), "http://h/openai/v1");
        assert_eq!(
            normalize_base(" https://h/ ", None, "https://h").unwrap(),
            "https://h"
        );
        for bad in [
            "h:8080",
            "nonsense",
            "ftp://h",
            "https://h/openai?api-version=2024-06-01",
            "https://h/v1#top",
        ] {
            let err = v1(bad).unwrap_err();
            assert!(matches!(err, LlmError::Config { .. }), "{bad}: {err:?}");
        }
        let err = v1("ftp://user:pw@h").unwrap_err();
        assert!(!err.to_string().contains("pw"), "{err}");
    }

    #[test]
    fn an_answer_pushes_its_pieces_and_one_done() {
        let mut answer = Answer::default();
        answer.thought("hmm");
        answer.text("");
        answer.text("{}");
        answer.finish = Some(Finish::Length);
        answer.done();
        assert!(answer.done);
        let events = &answer.events;
        assert_eq!(events.len(), 3);
        let Some(ChatEvent::Done(done)) = events.back() else {
            panic!("no Done: {events:?}")
        };
        assert_eq!(
            (done.text.as_str(), done.thinking.as_deref()),
            ("{}", Some("hmm"))
        );
        assert_eq!(done.finish, Finish::Length);
    }
}

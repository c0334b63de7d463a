//! The transport under the HTTP backend: the client with its timeouts and body limit, sending with the
//! retry policy, reading error statuses, and turning a streamed body into [`ChatEvent`]s (a
//! [`WireFormat`]: one body line in, events out). What an error means is the backend's
//! [`ErrorRule`]; the backend and its protocols are in `backend.rs`.
//!
//! Redirects: a request follows a redirect only within the origin (scheme, host and port) it was sent
//! to, at most [`MAX_REDIRECTS`] times. A redirect anywhere else is not followed and ends the request
//! with [`LlmError::Redirect`], naming where it pointed: the key of a request (in `Authorization` or in a
//! provider's own header, which the HTTP library would carry on to another host), the credentials of its
//! URL and the text it carries never reach an origin they were not meant for, an `https` to `http`
//! downgrade included. This client is the only one the crate builds.

use super::credentials::{redact_url, Secret};
use super::exchange::{ExchangeHook, Recording};
use super::retry_policy::{self, Retries};
use super::{ChatEvent, ChatStream, LlmError, Media, RetryPolicy, TimeoutPhase, Usage};
use bytes::Bytes;
use futures_core::Stream;
use futures_util::StreamExt;
use serde_json::Value;
use std::collections::VecDeque;
use std::pin::Pin;
use std::time::{Duration, SystemTime};

/// The most of a body quoted in an error message.
pub(crate) const EXCERPT_CHARS: usize = 300;

/// The most redirects within its origin one request follows.
pub(crate) const MAX_REDIRECTS: usize = 10;

/// Timeouts, body limit and retry policy of an HTTP backend.
#[derive(Debug, Clone)]
pub(crate) struct HttpOptions {
    pub connect_timeout: Duration,
    pub request_timeout: Duration,
    pub idle_timeout: Duration,
    pub max_body_bytes: usize,
    pub retry: RetryPolicy,
    /// Who receives every exchange (request and response, redacted).
    pub exchange: Option<ExchangeHook>,
}

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            connect_timeout: Duration::from_secs(10),
            request_timeout: Duration::from_secs(300),
            idle_timeout: Duration::from_secs(60),
            max_body_bytes: 16 * 1024 * 1024,
            retry: RetryPolicy::default(),
            exchange: None,
        }
    }
}

/// Generates the HTTP setters every backend builder has, so they are written once.
macro_rules! http_builder_methods {
    () => {
        /// How long opening a connection may take (default 10 s).
        pub fn connect_timeout(mut self, timeout: std::time::Duration) -> Self {
            self.common.http.connect_timeout = timeout;
            self
        }

        /// How long to wait for the server's response: for a streamed answer until its headers arrive,
        /// otherwise for the whole answer (default 300 s, room for loading a model).
        pub fn request_timeout(mut self, timeout: std::time::Duration) -> Self {
            self.common.http.request_timeout = timeout;
            self
        }

        /// How long a response under way may go without sending a byte (default 60 s).
        pub fn idle_timeout(mut self, timeout: std::time::Duration) -> Self {
            self.common.http.idle_timeout = timeout;
            self
        }

        /// The most bytes one response body may have (default 16 MiB); a larger one fails with
        /// [`LlmError::BodyTooLarge`](crate::llm::LlmError::BodyTooLarge).
        pub fn max_body_bytes(mut self, limit: usize) -> Self {
            self.common.http.max_body_bytes = limit;
            self
        }

        /// The media limits checked before a request with images or PDFs is sent, replacing the
        /// provider's documented ones (see [`MediaLimits`](crate::llm::MediaLimits)); a request over one
        /// fails with [`LlmError::Media`](crate::llm::LlmError::Media) and is not sent.
        pub fn media_limits(mut self, limits: crate::llm::MediaLimits) -> Self {
            self.common.media_limits = Some(limits);
            self
        }

        /// Hands every request this backend sends, and the response it gets, to `hook` as an
        /// [`Exchange`](crate::llm::Exchange): the key and the URL's credentials redacted, the bytes of
        /// images and PDFs replaced by their size and SHA-256. For logs and dumps of what went over the
        /// wire (the command line's `--dump-exchanges`).
        pub fn on_exchange(mut self, hook: crate::llm::ExchangeHook) -> Self {
            self.common.http.exchange = Some(hook);
            self
        }

        /// How transient failures are retried (default [`RetryPolicy::new`](crate::llm::RetryPolicy::new)).
        pub fn retry(mut self, policy: crate::llm::RetryPolicy) -> Self {
            self.common.http.retry = policy;
            self
        }
    };
}
pub(crate) use http_builder_methods;

/// A reqwest client with the options that govern every request it sends.
#[derive(Debug, Clone)]
pub(crate) struct HttpClient {
    client: reqwest::Client,
    pub options: HttpOptions,
}

/// A request to send: method, URL, JSON body, credential and other headers.
#[derive(Clone, Copy)]
pub(crate) struct Outgoing<'a> {
    pub url: &'a str,
    pub body: Option<&'a Value>,
    /// A body that is not JSON, with its content type (a file upload); sent in place of `body`.
    pub raw: Option<(&'a str, &'a [u8])>,
    /// The credential: a bearer token unless `key_header` names the header it goes in.
    pub bearer: Option<&'a Secret>,
    /// The header carrying the credential instead of `Authorization: Bearer` (`x-api-key`, ...).
    pub key_header: Option<&'static str>,
    /// Other headers (never a credential: these may be logged).
    pub headers: &'a [(&'static str, String)],
    /// What to tell the user when no connection can be made.
    pub connect_hint: &'a str,
    /// The images and PDFs `body` carries (an exchange shows their summary instead of their bytes).
    pub media: &'a [Media],
}

/// What an error means: every error a request or its stream meets goes through [`ErrorRule::refine`]
/// once, before the retry policy sees it (it logs each transient failure).
pub(crate) trait ErrorRule: Send + Sync + 'static {
    /// `err` without the credentials of the backend (its key, any in its URL) and with its meaning;
    /// `body` is the body of the error status `err` reports, if it reports one.
    fn refine(&self, err: LlmError, body: Option<&[u8]>) -> LlmError;
}

impl Outgoing<'_> {
    /// The same request, owning what it borrows, to send again later.
    fn owned(self) -> OwnedOutgoing {
        OwnedOutgoing {
            url: self.url.to_owned(),
            body: self.body.cloned(),
            raw: self
                .raw
                .map(|(kind, bytes)| (kind.to_owned(), bytes.to_vec())),
            bearer: self.bearer.cloned(),
            key_header: self.key_header,
            headers: self.headers.to_vec(),
            connect_hint: self.connect_hint.to_owned(),
            media: self.media.to_vec(),
        }
    }
}

/// An [`Outgoing`] that owns its parts, kept by a stream that may send its request again.
struct OwnedOutgoing {
    url: String,
    body: Option<Value>,
    raw: Option<(String, Vec<u8>)>,
    bearer: Option<Secret>,
    key_header: Option<&'static str>,
    headers: Vec<(&'static str, String)>,
    connect_hint: String,
    media: Vec<Media>,
}

impl OwnedOutgoing {
    fn borrow(&self) -> Outgoing<'_> {
        Outgoing {
            url: &self.url,
            body: self.body.as_ref(),
            raw: self
                .raw
                .as_ref()
                .map(|(kind, bytes)| (kind.as_str(), bytes.as_slice())),
            bearer: self.bearer.as_ref(),
            key_header: self.key_header,
            headers: &self.headers,
            connect_hint: &self.connect_hint,
            media: &self.media,
        }
    }
}

impl HttpClient {
    pub fn new(options: HttpOptions) -> Result<Self, LlmError> {
        let client = reqwest::Client::builder()
            .connect_timeout(options.connect_timeout)
            .redirect(redirect_policy())
            .user_agent(concat!("llm-extract/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| LlmError::Config {
                message: format!("cannot build the HTTP client: {}", describe(&e)),
            })?;
        Ok(HttpClient { client, options })
    }

    /// Sends the request, reads the whole body (bounded) and hands it to `read`, retrying transient
    /// failures, since nothing has been handed to the caller yet: a body that stalls or breaks, and one
    /// `read` finds is not the answer the request asked for. Every error goes through `rule`.
    pub async fn send_and_read<T>(
        &self,
        request: &Outgoing<'_>,
        rule: &impl ErrorRule,
        read: impl Fn(&[u8]) -> Result<T, LlmError>,
    ) -> Result<T, LlmError> {
        self.send_and_read_headed(request, rule, |_, bytes| read(bytes))
            .await
    }

    /// [`send_and_read`](Self::send_and_read), handing `read` the response's headers beside its body
    /// (for a protocol that answers in a header, as a resumable upload's URL).
    pub async fn send_and_read_headed<T>(
        &self,
        request: &Outgoing<'_>,
        rule: &impl ErrorRule,
        read: impl Fn(&reqwest::header::HeaderMap, &[u8]) -> Result<T, LlmError>,
    ) -> Result<T, LlmError> {
        self.options
            .retry
            .run("the request", || async {
                // One deadline for the headers and the whole body together.
                let whole = async {
                    let (response, mut recording) = self.send_once(request, rule, false).await?;
                    let headers = response.headers().clone();
                    let body = self.body(response).read_all().await;
                    if let (Some(recording), Ok(bytes)) = (&mut recording, &body) {
                        recording.body(bytes);
                    }
                    let result = body
                        .and_then(|bytes| read(&headers, &bytes))
                        .map_err(|e| rule.refine(e, None));
                    if let (Some(recording), Err(err)) = (&mut recording, &result) {
                        recording.failed(err);
                    }
                    result
                };
                match tokio::time::timeout(self.options.request_timeout, whole).await {
                    Ok(result) => result,
                    Err(_) => Err(LlmError::Timeout {
                        phase: TimeoutPhase::Response,
                        after: self.options.request_timeout,
                    }),
                }
            })
            .await
    }

    /// Sends a streamed request and turns its body into the events `new_wire` reads. A stream that
    /// breaks with a transient failure (the connection closed or went silent before the end, or the
    /// body is not the stream asked for) is sent again under the retry policy, with one budget for the
    /// whole request: the retries of its first send count. When the broken stream had delivered
    /// anything, a [`ChatEvent::Restart`] says that the answer starts over. Every error goes through
    /// `rule`; the error that ends the stream, if any, is its last item.
    pub async fn stream<W, N, R>(
        &self,
        request: &Outgoing<'_>,
        rule: R,
        new_wire: N,
    ) -> Result<ChatStream, LlmError>
    where
        W: WireFormat,
        N: Fn() -> W + Send + 'static,
        R: ErrorRule,
    {
        let mut retries = self.options.retry.start();
        let (response, recording) = self.send_counted(request, &mut retries, &rule).await?;
        let events = EventState::new(self.body(response), new_wire(), recording);
        let state = Resuming {
            client: self.clone(),
            request: request.owned(),
            new_wire,
            rule,
            retries,
            events,
            delivered: false,
            ended: false,
        };
        Ok(Box::pin(futures_util::stream::unfold(
            state,
            |mut state| async move {
                let item = state.next().await?;
                Some((item, state))
            },
        )))
    }

    /// Sends the request until it gets a success status, counting its retries in `retries`.
    async fn send_counted(
        &self,
        request: &Outgoing<'_>,
        retries: &mut Retries,
        rule: &impl ErrorRule,
    ) -> Result<(reqwest::Response, Option<Recording>), LlmError> {
        loop {
            match self.send_once(request, rule, true).await {
                Ok(response) => return Ok(response),
                Err(err) => {
                    if !retries.again("the request", &err).await {
                        return Err(err);
                    }
                }
            }
        }
    }

    /// Sends the request once; an error status becomes [`LlmError::Http`] with the server's message,
    /// which `rule` gives its meaning (with the body), as it does every other error.
    async fn send_once(
        &self,
        request: &Outgoing<'_>,
        rule: &impl ErrorRule,
        streamed: bool,
    ) -> Result<(reqwest::Response, Option<Recording>), LlmError> {
        match self.send_raw(request, streamed).await {
            Ok(response) => Ok(response),
            Err((err, body)) => Err(rule.refine(err, body.as_deref())),
        }
    }

    /// Sends the request once: the response of a success status (with the recording of the exchange,
    /// when a hook wants it), or the error and the error status's body, if there was one (the
    /// exchange of a failure is handed to the hook here).
    async fn send_raw(
        &self,
        request: &Outgoing<'_>,
        streamed: bool,
    ) -> Result<(reqwest::Response, Option<Recording>), (LlmError, Option<Vec<u8>>)> {
        let mut recording = self.options.exchange.as_ref().map(|hook| {
            Recording::start(
                hook,
                request.url,
                request.bearer,
                request.key_header,
                request.headers,
                request.body,
                request.media,
                streamed,
            )
        });
        let result = self.send_recorded(request, recording.as_mut()).await;
        match result {
            Ok(response) => Ok((response, recording)),
            Err((err, body)) => {
                if let Some(recording) = &mut recording {
                    if let Some(body) = &body {
                        recording.body(body);
                    }
                    recording.failed(&err);
                }
                Err((err, body))
            }
        }
    }

    /// [`send_raw`](Self::send_raw), telling `recording` of the response's status and headers.
    async fn send_recorded(
        &self,
        request: &Outgoing<'_>,
        recording: Option<&mut Recording>,
    ) -> Result<reqwest::Response, (LlmError, Option<Vec<u8>>)> {
        let mut builder = match (request.raw, request.body) {
            (Some((kind, bytes)), _) => self
                .client
                .post(request.url)
                .header(reqwest::header::CONTENT_TYPE, kind)
                .body(bytes.to_vec()),
            (None, Some(body)) => self.client.post(request.url).json(body),
            (None, None) => self.client.get(request.url),
        };
        if let Some(secret) = request.bearer {
            builder = match request.key_header {
                None => builder.bearer_auth(secret.expose()),
                Some(name) => {
                    let mut value = reqwest::header::HeaderValue::from_str(secret.expose())
                        .map_err(|_| LlmError::Config {
                            message: format!(
                                "the API key cannot be sent in the {name} header (it holds characters \
                                 a header cannot carry); check the key"
                            ),
                        })
                        .map_err(|err| (err, None))?;
                    value.set_sensitive(true);
                    builder.header(name, value)
                }
            };
        }
        for (name, value) in request.headers {
            builder = builder.header(*name, value.as_str());
        }
        let timeout = self.options.request_timeout;
        let response = match tokio::time::timeout(timeout, builder.send()).await {
            Err(_) => {
                let err = LlmError::Timeout {
                    phase: TimeoutPhase::Response,
                    after: timeout,
                };
                return Err((err, None));
            }
            Ok(Err(err)) => return Err((self.send_error(request, &err), None)),
            Ok(Ok(response)) => response,
        };
        let status = response.status();
        if let Some(recording) = recording {
            recording.response(status.as_u16(), response.headers());
        }
        if status.is_success() {
            return Ok(response);
        }
        if let Some(err) = unfollowed_redirect(&response) {
            return Err((err, None));
        }
        let retry_after = response
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| retry_policy::retry_after(v, SystemTime::now()))
            .or_else(|| {
                // A rate-limited answer without one: the providers' own rate-limit headers.
                let headers = response.headers();
                (status.as_u16() == 429)
                    .then(|| {
                        retry_policy::rate_limit_reset(
                            |name| headers.get(name).and_then(|v| v.to_str().ok()),
                            SystemTime::now(),
                        )
                    })
                    .flatten()
            });
        // The error body is read with the same limits; if even that fails, the status alone must do.
        let mut body = self.body(response);
        let bytes = match tokio::time::timeout(timeout, body.read_all()).await {
            Ok(Ok(bytes)) => Some(bytes),
            _ => None,
        };
        let text = bytes.as_deref().map(server_message).unwrap_or_default();
        let message = if text.is_empty() {
            status
                .canonical_reason()
                .unwrap_or("no error message")
                .to_owned()
        } else {
            text
        };
        let err = LlmError::Http {
            status: status.as_u16(),
            message,
            retry_after,
        };
        Err((err, bytes))
    }

    fn send_error(&self, request: &Outgoing<'_>, err: &reqwest::Error) -> LlmError {
        if err.is_timeout() {
            let connecting = err.is_connect();
            return LlmError::Timeout {
                phase: if connecting {
                    TimeoutPhase::Connect
                } else {
                    TimeoutPhase::Response
                },
                after: if connecting {
                    self.options.connect_timeout
                } else {
                    self.options.request_timeout
                },
            };
        }
        let hint = if err.is_connect() {
            request.connect_hint.to_owned()
        } else {
            "the server closed the connection before answering".to_owned()
        };
        LlmError::Connect {
            url: origin(request.url),
            message: describe(err),
            hint,
        }
    }

    /// The body of `response`, read under the idle timeout and the size limit.
    pub fn body(&self, response: reqwest::Response) -> BodyReader {
        let declared = response.content_length();
        BodyReader {
            chunks: Box::pin(response.bytes_stream()),
            idle: self.options.idle_timeout,
            limit: self.options.max_body_bytes,
            read: 0,
            declared,
        }
    }
}

type ByteStream = Pin<Box<dyn Stream<Item = reqwest::Result<Bytes>> + Send>>;

/// A response body read chunk by chunk, with an idle timeout between chunks and a size limit.
pub(crate) struct BodyReader {
    chunks: ByteStream,
    idle: Duration,
    limit: usize,
    read: usize,
    declared: Option<u64>,
}

impl BodyReader {
    /// The next chunk, `None` at a clean end.
    pub async fn next_chunk(&mut self) -> Result<Option<Bytes>, LlmError> {
        if self.declared.is_some_and(|n| n > self.limit as u64) {
            return Err(LlmError::BodyTooLarge { limit: self.limit });
        }
        match tokio::time::timeout(self.idle, self.chunks.next()).await {
            Err(_) => Err(LlmError::Timeout {
                phase: TimeoutPhase::Idle,
                after: self.idle,
            }),
            Ok(None) => Ok(None),
            Ok(Some(Err(err))) => Err(LlmError::Stream {
                message: format!(
                    "the connection broke before the answer was complete ({})",
                    describe(&err)
                ),
                received: String::new(),
            }),
            Ok(Some(Ok(bytes))) => {
                self.read = self.read.saturating_add(bytes.len());
                if self.read > self.limit {
                    Err(LlmError::BodyTooLarge { limit: self.limit })
                } else {
                    Ok(Some(bytes))
                }
            }
        }
    }

    /// The whole body.
    pub async fn read_all(&mut self) -> Result<Vec<u8>, LlmError> {
        let mut body = Vec::new();
        while let Some(chunk) = self.next_chunk().await? {
            body.extend_from_slice(&chunk);
        }
        Ok(body)
    }
}

/// A streamed body's lines read into events (a protocol's reader behind its framing).
pub(crate) trait WireFormat: Send + 'static {
    /// Handles one complete line of the body (without its line break).
    fn line(&mut self, line: &str, events: &mut VecDeque<ChatEvent>) -> Result<(), LlmError>;
    /// The body ended cleanly: push the final [`ChatEvent::Done`] or say why the answer is incomplete.
    fn end(&mut self, events: &mut VecDeque<ChatEvent>) -> Result<(), LlmError>;
    /// Whether the final [`ChatEvent::Done`] has been pushed (the rest of the body is not read).
    fn finished(&self) -> bool;
    /// The token counts the server sent so far, for an answer that breaks before its end (most servers
    /// send them only at the end).
    fn usage(&self) -> Usage {
        Usage::default()
    }
}

/// One streamed body being read: the wire format's state, the events it decoded not yet handed on, and
/// the text delivered so far (for the error that may end it).
struct EventState<W> {
    body: BodyReader,
    wire: W,
    pending: Vec<u8>,
    events: VecDeque<ChatEvent>,
    error: Option<LlmError>,
    text: String,
    ended: bool,
    /// The exchange being recorded, handed to its hook when this state is dropped.
    recording: Option<Recording>,
}

impl<W: WireFormat> EventState<W> {
    fn new(body: BodyReader, wire: W, recording: Option<Recording>) -> Self {
        EventState {
            body,
            wire,
            pending: Vec::new(),
            events: VecDeque::new(),
            error: None,
            text: String::new(),
            ended: false,
            recording,
        }
    }

    /// The next event; events decoded before a failure come first, then the error, which carries the
    /// text received; `None` after the end.
    async fn next(&mut self) -> Option<Result<ChatEvent, LlmError>> {
        loop {
            if let Some(event) = self.events.pop_front() {
                if let ChatEvent::Delta(delta) = &event {
                    self.text.push_str(delta);
                }
                return Some(Ok(event));
            }
            if let Some(error) = self.error.take() {
                let error = match error {
                    LlmError::Stream { message, received } if received.is_empty() => {
                        LlmError::Stream {
                            message,
                            received: std::mem::take(&mut self.text),
                        }
                    }
                    other => other,
                };
                return Some(Err(error));
            }
            if self.ended || self.wire.finished() {
                // The answer is whole: its exchange goes to the hook now, not when the stream is
                // dropped.
                drop(self.recording.take());
                return None;
            }
            match self.body.next_chunk().await {
                Ok(Some(chunk)) => {
                    if let Some(recording) = &mut self.recording {
                        recording.body(&chunk);
                    }
                    if let Err(err) = self.feed(&chunk) {
                        self.fail(err);
                    }
                }
                Ok(None) => {
                    self.ended = true;
                    let rest = std::mem::take(&mut self.pending);
                    let result = self
                        .line(&rest)
                        .and_then(|()| self.wire.end(&mut self.events));
                    if let Err(err) = result {
                        if let Some(recording) = &mut self.recording {
                            recording.failed(&err);
                        }
                        self.error = Some(err);
                    }
                }
                Err(err) => self.fail(err),
            }
        }
    }
}

/// A streamed answer that sends its request again when the stream breaks transiently.
struct Resuming<W, N, R> {
    client: HttpClient,
    request: OwnedOutgoing,
    new_wire: N,
    rule: R,
    retries: Retries,
    events: EventState<W>,
    /// Whether the current stream handed on any text (answer or reasoning).
    delivered: bool,
    ended: bool,
}

impl<W, N, R> Resuming<W, N, R>
where
    W: WireFormat,
    N: Fn() -> W,
    R: ErrorRule,
{
    async fn next(&mut self) -> Option<Result<ChatEvent, LlmError>> {
        loop {
            if self.ended {
                return None;
            }
            let err = match self.events.next().await {
                None => {
                    self.ended = true;
                    return None;
                }
                Some(Ok(event)) => {
                    if matches!(event, ChatEvent::Delta(_) | ChatEvent::Thinking(_)) {
                        self.delivered = true;
                    }
                    return Some(Ok(event));
                }
                Some(Err(err)) => self.rule.refine(err, None),
            };
            let usage = self.events.wire.usage();
            if !self.retries.again("the answer stream", &err).await {
                self.ended = true;
                return Some(Err(err));
            }
            let request = self.request.borrow();
            let response = self
                .client
                .send_counted(&request, &mut self.retries, &self.rule)
                .await;
            match response {
                Err(err) => {
                    self.ended = true;
                    return Some(Err(err));
                }
                Ok((response, recording)) => {
                    self.events =
                        EventState::new(self.client.body(response), (self.new_wire)(), recording);
                    if self.delivered || usage != Usage::default() {
                        self.delivered = false;
                        return Some(Ok(ChatEvent::Restart { error: err, usage }));
                    }
                }
            }
        }
    }
}

impl<W: WireFormat> EventState<W> {
    fn feed(&mut self, chunk: &[u8]) -> Result<(), LlmError> {
        let mut rest = chunk;
        while let Some(newline) = rest.iter().position(|&b| b == b'\n') {
            let (head, tail) = rest.split_at(newline);
            rest = tail.get(1..).unwrap_or_default();
            if self.pending.is_empty() {
                self.line(head)?;
            } else {
                let mut line = std::mem::take(&mut self.pending);
                line.extend_from_slice(head);
                self.line(&line)?;
            }
            if self.wire.finished() {
                return Ok(());
            }
        }
        self.pending.extend_from_slice(rest);
        Ok(())
    }

    fn line(&mut self, line: &[u8]) -> Result<(), LlmError> {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if self.wire.finished() {
            return Ok(());
        }
        let line = std::str::from_utf8(line).map_err(|_| LlmError::InvalidResponse {
            message: "a line of the stream is not UTF-8".into(),
            body: String::from_utf8_lossy(line).into_owned(),
        })?;
        self.wire.line(line, &mut self.events)
    }

    fn fail(&mut self, err: LlmError) {
        if let Some(recording) = &mut self.recording {
            recording.failed(&err);
        }
        self.ended = true;
        self.error = Some(err);
    }
}

/// Server-sent events framing: `data:` lines gathered until the blank line that ends an event.
/// Comments (`:` lines, keep-alives), `event:`, `id:` and `retry:` fields are skipped: every provider
/// here repeats the event's name inside its JSON.
#[derive(Debug, Default)]
pub(crate) struct SseFrames {
    data: String,
    pending: bool,
    /// How many events were complete.
    events: usize,
    /// The first line that is no SSE field, if any.
    stray: Option<String>,
}

impl SseFrames {
    /// Takes one line; returns an event's data when the line ends it.
    pub fn line(&mut self, line: &str) -> Option<String> {
        if line.is_empty() {
            return self.flush();
        }
        if let Some(data) = line.strip_prefix("data:") {
            let data = data.strip_prefix(' ').unwrap_or(data);
            if self.pending {
                self.data.push('\n');
            }
            self.data.push_str(data);
            self.pending = true;
        } else if self.stray.is_none()
            && !line.starts_with(':')
            && !["event:", "id:", "retry:"]
                .iter()
                .any(|field| line.starts_with(field))
        {
            self.stray = Some(line.to_owned());
        }
        None
    }

    /// A body with no event at all but lines of something else is not an event stream (an HTML error
    /// page from a proxy, say): the error that says so.
    pub fn not_an_event_stream(&self) -> Option<LlmError> {
        let stray = self.stray.as_ref().filter(|_| self.events == 0)?;
        Some(LlmError::InvalidResponse {
            message: "the body is not a stream of server-sent events".into(),
            body: stray.clone(),
        })
    }

    /// The data of an event the body ended without a blank line after, if any.
    pub fn flush(&mut self) -> Option<String> {
        if !self.pending {
            return None;
        }
        self.pending = false;
        self.events += 1;
        Some(std::mem::take(&mut self.data))
    }
}

/// A name servers accept for a schema or a tool (`^[a-zA-Z0-9_-]{1,64}$`, OpenAI's and Anthropic's
/// rule): other characters become `_`; an empty name becomes `output`.
pub(crate) fn tool_name(name: Option<&str>) -> String {
    let cleaned: String = name
        .unwrap_or("")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    if cleaned.trim_matches('_').is_empty() {
        "output".to_owned()
    } else {
        cleaned
    }
}

/// The error message in an error body: `{"error": "..."}` (Ollama), `{"error": {"message": "..."}}`
/// (OpenAI), `{"message": "..."}`, or else the body as text. Whole: [`scrub`](super::credentials::scrub) cuts it, after taking
/// the credentials out.
pub(crate) fn server_message(body: &[u8]) -> String {
    if let Ok(value) = serde_json::from_slice::<Value>(body) {
        if let Some(message) = error_text(&value) {
            return message;
        }
    }
    String::from_utf8_lossy(body).trim().to_owned()
}

/// The message of an error object in a JSON body or stream line, if it is one.
pub(crate) fn error_text(value: &Value) -> Option<String> {
    let error = value.get("error").or_else(|| value.get("detail"));
    match error {
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Object(obj)) => Some(match obj.get("message") {
            Some(Value::String(s)) => s.clone(),
            _ => Value::Object(obj.clone()).to_string(),
        }),
        Some(Value::Null) | None => match value.get("message") {
            Some(Value::String(s)) if value.get("choices").is_none() => Some(s.clone()),
            _ => None,
        },
        Some(other) => Some(other.to_string()),
    }
}

/// At most [`EXCERPT_CHARS`] characters of `text`, marked when cut.
pub(crate) fn excerpt(text: &str) -> String {
    match text.char_indices().nth(EXCERPT_CHARS) {
        None => text.to_owned(),
        Some((cut, _)) => format!("{}...", &text[..cut]),
    }
}

/// An error and its causes on one line, without the URL (it can hold credentials).
fn describe(err: &reqwest::Error) -> String {
    use std::error::Error as _;
    let mut message = String::new();
    let mut source: Option<&dyn std::error::Error> = err.source();
    while let Some(cause) = source {
        let text = cause.to_string();
        if !message.contains(&text) {
            if !message.is_empty() {
                message.push_str(": ");
            }
            message.push_str(&text);
        }
        source = cause.source();
    }
    if message.is_empty() {
        message = err.to_string();
    }
    message
}

/// The scheme, host and port of `url`, without credentials or path.
pub(crate) fn origin(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(parsed) => parsed.origin().ascii_serialization(),
        Err(_) => "the configured server".to_owned(),
    }
}

/// The redirect rule of every request: follow a redirect whose target has the origin (scheme, host,
/// port) the request was first sent to, at most [`MAX_REDIRECTS`] times; stop at any other, whose
/// response [`unfollowed_redirect`] turns into an error.
fn redirect_policy() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        let previous = attempt.previous();
        let within = previous
            .first()
            .is_some_and(|first| same_origin(first, attempt.url()));
        if within && previous.len() <= MAX_REDIRECTS {
            attempt.follow()
        } else {
            attempt.stop()
        }
    })
}

/// Whether `a` and `b` have one origin: the same scheme, host and port (the scheme's default port
/// when none is written). URLs of any other scheme than `http` and `https` have none.
pub(crate) fn same_origin(a: &reqwest::Url, b: &reqwest::Url) -> bool {
    matches!(a.scheme(), "http" | "https") && a.origin() == b.origin()
}

/// The error for a redirect [`redirect_policy`] did not follow, if `response` is one: to another origin
/// ([`LlmError::Redirect`], naming the target with its credentials redacted), or within the origin
/// past the limit.
fn unfollowed_redirect(response: &reqwest::Response) -> Option<LlmError> {
    let status = response.status().as_u16();
    if !matches!(status, 301 | 302 | 303 | 307 | 308) {
        return None;
    }
    let location = response.headers().get(reqwest::header::LOCATION)?;
    let location = String::from_utf8_lossy(location.as_bytes());
    let from = response.url();
    match from.join(&location) {
        Ok(target) if same_origin(from, &target) => Some(LlmError::Http {
            status,
            message: format!(
                "the server redirected the request more than {MAX_REDIRECTS} times within {}",
                origin(from.as_str())
            ),
            retry_after: None,
        }),
        Ok(target) => Some(LlmError::Redirect {
            status,
            location: redact_url(target.as_str()),
        }),
        Err(_) => Some(LlmError::Redirect {
            status,
            location: redact_url(&location),
        }),
    }
}

/// A response body read as JSON; an error quoting the body when it is not ([`scrub`](super::credentials::scrub) cuts the quote).
pub(crate) fn json_body(bytes: &[u8]) -> Result<serde_json::Value, LlmError> {
    serde_json::from_slice(bytes).map_err(|e| LlmError::InvalidResponse {
        message: format!("the body is not JSON ({e})"),
        body: String::from_utf8_lossy(bytes).into_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::credentials::scrub;
    use serde_json::json;

    #[test]
    fn server_messages_of_each_shape() {
        assert_eq!(
            server_message(br#"{"error":"model 'x' not found"}"#),
            "model 'x' not found"
        );
        assert_eq!(
            server_message(br#"{"error":{"code":400,"message":"bad schema","type":"x"}}"#),
            "bad schema"
        );
        assert_eq!(server_message(b"  upstream down \n"), "upstream down");
        let long = LlmError::Http {
            status: 500,
            message: server_message(&[b'x'; 5000]),
            retry_after: None,
        };
        let LlmError::Http { message, .. } = scrub(long, None, "http://h/v1") else {
            panic!("not Http")
        };
        assert!(message.len() < 400, "{}", message.len());
        assert_eq!(error_text(&json!({"choices": [], "message": "m"})), None);
    }

    #[test]
    fn sse_frames_join_data_lines_and_skip_comments_and_fields() {
        let mut frames = SseFrames::default();
        let mut events = Vec::new();
        for line in [
            ": ping",
            "event: message_start",
            "data: {\"a\":",
            "data:1}",
            "id: 7",
            "",
            "",
            "data: last",
        ] {
            events.extend(frames.line(line));
        }
        events.extend(frames.flush());
        assert_eq!(events, ["{\"a\":\n1}", "last"]);
    }

    #[test]
    fn tool_names_are_made_acceptable() {
        assert_eq!(tool_name(Some("Person")), "Person");
        assert_eq!(tool_name(Some("Vec<Fact>")), "Vec_Fact_");
        assert_eq!(tool_name(None), "output");
        assert_eq!(tool_name(Some("<>")), "output");
        assert_eq!(tool_name(Some(&"x".repeat(100))).len(), 64);
    }

    #[test]
    fn excerpt_cuts_on_char_boundaries() {
        let text = "é".repeat(1000);
        let cut = excerpt(&text);
        assert!(cut.ends_with("..."));
        assert_eq!(cut.chars().count(), EXCERPT_CHARS + 3);
    }

    #[test]
    fn one_origin_is_one_scheme_host_and_port() {
        let url = |u: &str| reqwest::Url::parse(u).unwrap();
        let from = url("https://api.example.com/v1/chat?x=1");
        for same in [
            "https://api.example.com/other",
            "https://API.example.com:443/v1",
            "https://user:pw@api.example.com/v1",
        ] {
            assert!(same_origin(&from, &url(same)), "{same}");
        }
        for other in [
            "http://api.example.com/v1/chat",
            "https://api.example.com:8443/v1/chat",
            "https://api.example.com.evil.net/v1/chat",
            "https://127.0.0.1/v1/chat",
            "ftp://api.example.com/v1/chat",
        ] {
            assert!(!same_origin(&from, &url(other)), "{other}");
        }
        assert!(same_origin(&url("http://h/a"), &url("http://h:80/b")));
        assert!(!same_origin(
            &url("data:text/plain,x"),
            &url("data:text/plain,x")
        ));
    }

    #[test]
    fn origin_drops_credentials_and_path() {
        assert_eq!(
            origin("http://user:pw@localhost:8080/v1/chat"),
            "http://localhost:8080"
        );
        assert_eq!(origin("not a url"), "the configured server");
    }

    #[test]
    fn a_key_across_the_cut_is_scrubbed_before_the_message_is_cut() {
        let key = Secret::new("sk-0123456789abcdefghij");
        let url = "http://user:pw-0123456789@h/v1?key=q-0123456789";
        for secret in [key.expose(), "pw-0123456789", "q-0123456789"] {
            // The secret starts a few characters before character 300, where the quote is cut.
            for before in 290..EXCERPT_CHARS {
                let body = format!(
                    "{{\"error\": {{\"message\": \"{}{secret} is wrong\"}}}}",
                    "é".repeat(before)
                );
                let err = LlmError::Http {
                    status: 400,
                    message: server_message(body.as_bytes()),
                    retry_after: None,
                };
                let text = scrub(err, Some(&key), url).to_string();
                assert!(!text.contains(&secret[..5]), "{secret} at {before}: {text}");
                assert!(text.chars().count() < 400, "{text}");
            }
        }
        let quoted = LlmError::InvalidResponse {
            message: "the body is not JSON".into(),
            body: format!("{}{}", "x".repeat(295), key.expose()),
        };
        let text = format!("{:?}", scrub(quoted, Some(&key), url));
        assert!(!text.contains("sk-01"), "{text}");
    }
}

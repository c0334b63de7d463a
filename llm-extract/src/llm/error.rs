//! Errors a backend reports, and the media parts it refuses ([`MediaError`]).
//!
//! Every variant says what failed and what to do about it. None of them ever holds an API key: the
//! HTTP backends keep keys in a [`Secret`](super::Secret) and scrub them from anything a server echoes back.

use std::path::PathBuf;
use std::time::Duration;

/// A backend failed to produce an answer.
///
/// Match on the variant to decide what to do; [`LlmError::is_transient`] tells whether sending the same
/// request again may succeed (the backends already retried those with their [`RetryPolicy`](super::RetryPolicy)).
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum LlmError {
    /// The stream broke before its end; `received` holds the text received so far.
    #[error("the answer stream broke: {message}")]
    Stream {
        /// What happened.
        message: String,
        /// The text received before the break.
        received: String,
    },
    /// No connection could be made to the server.
    #[error("cannot connect to {url}: {message}; {hint}")]
    Connect {
        /// The server's address.
        url: String,
        /// What the network layer said.
        message: String,
        /// What to check.
        hint: String,
    },
    /// A timeout fired.
    #[error("{phase} timed out after {after:?}; {}", phase.hint())]
    Timeout {
        /// Which wait it was.
        phase: TimeoutPhase,
        /// The configured limit.
        after: Duration,
    },
    /// The provider withheld the answer (Gemini's `SAFETY`, `RECITATION`, `BLOCKLIST`, ... finish or
    /// block reasons). Sending the same request again gives the same result.
    #[error(
        "the provider withheld the answer ({reason}): {message}; rephrase the input, or use a model or \
         safety setting that allows it"
    )]
    Blocked {
        /// The provider's reason code, e.g. `SAFETY`.
        reason: String,
        /// What it means.
        message: String,
        /// The answer text received before it was stopped.
        received: String,
    },
    /// The server does not have the model.
    #[error("model '{model}' not found: {message}; {hint}")]
    ModelNotFound {
        /// The model name as sent.
        model: String,
        /// The server's message.
        message: String,
        /// What to do, e.g. `run ollama pull llama3.2`.
        hint: String,
    },
    /// The server rejected the credentials (HTTP 401 or 403, or a provider's own status for a bad key:
    /// Gemini's 400 with the reason `API_KEY_INVALID`).
    #[error("the server rejected the request's credentials (HTTP {status}): {message}; check the API key")]
    Auth {
        /// The HTTP status: 401, 403, or the provider's own for a bad key.
        status: u16,
        /// The server's message (with any key scrubbed).
        message: String,
    },
    /// The server answered with an error status.
    #[error("the server answered HTTP {status}: {message}")]
    Http {
        /// The HTTP status code.
        status: u16,
        /// The server's error message, or the start of its body.
        message: String,
        /// How long the server asked us to wait (`Retry-After`), if it said.
        retry_after: Option<Duration>,
    },
    /// The response body grew past the configured limit.
    #[error(
        "the response body exceeded the limit of {limit} bytes; raise the limit with `max_body_bytes` \
         if answers this large are expected, or lower `max_tokens`"
    )]
    BodyTooLarge {
        /// The limit, in bytes.
        limit: usize,
    },
    /// The server answered something that is not its wire format.
    #[error(
        "the server's response is not in the expected format: {message}; the body began: {body:?}"
    )]
    InvalidResponse {
        /// What was wrong.
        message: String,
        /// The start of the body (bounded).
        body: String,
    },
    /// An API key, or credentials written into the URL (`user:password@`, a `key=` or `token=` query
    /// parameter), would go over plain `http` to a host that is not this machine; nothing was sent.
    #[error(
        "refusing to send the API key or the credentials in the URL over plain http to {url}: anyone \
         on the network between could read them; use https, or allow it on purpose with \
         allow_insecure_key(true)"
    )]
    InsecureKey {
        /// The server's address, credentials redacted.
        url: String,
    },
    /// The server answered with a redirect to another origin (scheme, host or port) than the one the
    /// backend was built for, which is not followed: the request, its key and the text it carries go
    /// to that origin alone (a redirect within it is followed). Nothing was sent to `location`.
    #[error(
        "the server redirected the request (HTTP {status}) to {location}, another address than the one \
         the backend was built for, and it was not followed: a key and the text of a request go only to \
         the scheme, host and port they were meant for; if that address is the right server, use it as \
         the base URL"
    )]
    Redirect {
        /// The redirect's status (301, 302, 303, 307, 308).
        status: u16,
        /// Where the server pointed (its `Location`), as an absolute URL with any credentials redacted.
        location: String,
    },
    /// The server gave an upload URL (Gemini's Files API answers one in `X-Goog-Upload-URL`) on
    /// another origin (scheme, host or port) than the one the backend was built for: the key and the
    /// file go to that origin alone, so nothing was sent to `location`.
    #[error(
        "the server named {location} as the place to upload a file, another address than the one the \
         backend was built for, and nothing was sent there: a key and the bytes of a request go only to \
         the scheme, host and port they were meant for; if that address is the right server, use it as \
         the base URL"
    )]
    UploadElsewhere {
        /// The upload URL the server gave, with any credentials and its query redacted.
        location: String,
    },
    /// The backend is misconfigured (a bad URL, a missing API key variable, ...).
    #[error("invalid backend configuration: {message}")]
    Config {
        /// What is wrong and how to fix it.
        message: String,
    },
    /// A media part the backend cannot take, or over one of its limits (see [`MediaError`]); nothing
    /// was sent. Sending the same request again fails the same way.
    #[error(transparent)]
    Media(#[from] MediaError),
    /// Any other failure, e.g. from a custom backend built with [`from_fn`](super::from_fn).
    #[error("{message}")]
    Other {
        /// What happened.
        message: String,
    },
    /// The embedded llama.cpp engine failed (feature `llama-cpp`): see the inner error's kind.
    #[cfg(feature = "llama-cpp")]
    #[error(transparent)]
    LlamaCpp(#[from] crate::llm::llama_cpp::LlamaCppError),
}

/// A media part that cannot be read or sent. Nothing was sent when a backend returns one (as
/// [`LlmError::Media`]), but for [`MediaError::Unprocessable`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum MediaError {
    /// The backend cannot take a part of this kind or form.
    #[error("the {backend} backend cannot take {what}; nothing was sent: {hint}")]
    Unsupported {
        /// The backend.
        backend: &'static str,
        /// The part and its form.
        what: String,
        /// What to do instead.
        hint: String,
    },
    /// A part, or the whole request, is over a size limit.
    #[error(
        "{what} is {size} bytes as sent (base64), over the {backend} backend's limit `{limit}` of \
         {max} bytes; nothing was sent: send a smaller or compressed file, fewer parts, or a URL where \
         the backend takes one (a builder's `media_limits` sets other limits)"
    )]
    TooLarge {
        /// The backend.
        backend: &'static str,
        /// The [`MediaLimits`](super::MediaLimits) field exceeded: `max_image_bytes`, `max_pdf_bytes` or
        /// `max_request_bytes`.
        limit: &'static str,
        /// The part (`image 2 ("scan.png")`) or the request.
        what: String,
        /// Its size as sent, in bytes.
        size: usize,
        /// The limit, in bytes.
        max: usize,
    },
    /// The request carries more parts than the backend's limit `max_parts`.
    #[error(
        "the request carries {count} media parts, over the {backend} backend's limit `max_parts` of \
         {max}; nothing was sent: split the input into several requests"
    )]
    TooMany {
        /// The backend.
        backend: &'static str,
        /// How many parts the request carries.
        count: usize,
        /// The limit.
        max: usize,
    },
    /// The bytes are none of the supported formats.
    #[error("{what} is not a PNG, JPEG, WebP, GIF or PDF file (by its first bytes)")]
    UnknownType {
        /// The file or the bytes.
        what: String,
    },
    /// The backend took the part but could not process it (Gemini's Files API reports the uploaded
    /// file `FAILED`): the same bytes fail the same way again. Unlike the other kinds, the part was
    /// sent.
    #[error(
        "the {backend} backend could not process {what} (it reported {state}); sending it again \
         fails the same way: check that the file is not damaged and is what its type says"
    )]
    Unprocessable {
        /// The backend.
        backend: &'static str,
        /// The part: its name and media type (`"scan.pdf" (application/pdf)`).
        what: String,
        /// What the backend reported.
        state: String,
    },
    /// A file could not be read.
    #[error("cannot read {}: {message}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// What the system said.
        message: String,
    },
}

/// What an error status means: the one rule every HTTP backend applies (`backend.rs` turns it into
/// the error a caller gets), which a [`Protocol`](super::Protocol) may refine from the error body
/// ([`Protocol::classify`](super::Protocol::classify)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// The server rejected the request's credentials.
    Auth,
    /// The model or the endpoint is not there.
    NotFound,
    /// Sending the request again may succeed.
    Transient,
    /// The server refused the request; it fails the same way twice.
    Refused,
}

impl Status {
    /// The meaning of `status` (an error status) by the one rule.
    pub fn of(status: u16) -> Status {
        match status {
            401 | 403 => Status::Auth,
            404 => Status::NotFound,
            408 | 409 | 429 | 500..=599 => Status::Transient,
            _ => Status::Refused,
        }
    }
}

/// Which wait a [`LlmError::Timeout`] interrupted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum TimeoutPhase {
    /// Opening the connection.
    Connect,
    /// Waiting for the server's response (for a streamed answer, its headers; otherwise the whole answer).
    Response,
    /// Waiting for the next chunk of a response already under way.
    Idle,
}

impl TimeoutPhase {
    fn hint(self) -> &'static str {
        match self {
            TimeoutPhase::Connect => "check the server's address and that it is reachable",
            TimeoutPhase::Response => {
                "the server may be loading the model or busy; raise `request_timeout` if that is expected"
            }
            TimeoutPhase::Idle => {
                "the server stopped sending in the middle of its answer; raise `idle_timeout` if it is just slow"
            }
        }
    }
}

impl std::fmt::Display for TimeoutPhase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            TimeoutPhase::Connect => "connecting to the server",
            TimeoutPhase::Response => "waiting for the server's response",
            TimeoutPhase::Idle => "waiting for the next chunk of the answer",
        })
    }
}

impl LlmError {
    /// An error with a free-form message, for custom backends.
    ///
    /// ```
    /// let err = llm_extract::llm::LlmError::other("quota exhausted");
    /// assert_eq!(err.to_string(), "quota exhausted");
    /// ```
    pub fn other(message: impl std::fmt::Display) -> Self {
        LlmError::Other {
            message: message.to_string(),
        }
    }

    /// Whether sending the same request again may succeed: connection failures, timeouts (a server that
    /// went silent mid-answer included), HTTP 408, 409, 429 and every 5xx (529 is Anthropic's
    /// "overloaded"), a stream that broke or ended before the server finished the answer, and an answer
    /// whose body is not what the request asked for (a proxy's error page, a JSON error with status
    /// 200). Everything else fails the same way twice.
    pub fn is_transient(&self) -> bool {
        match self {
            LlmError::Connect { .. }
            | LlmError::Timeout { .. }
            | LlmError::Stream { .. }
            | LlmError::InvalidResponse { .. } => true,
            LlmError::Http { status, .. } => Status::of(*status) == Status::Transient,
            _ => false,
        }
    }

    /// The answer text received before a stream broke, if this error ended a stream.
    pub fn received(&self) -> Option<&str> {
        match self {
            LlmError::Stream { received, .. } | LlmError::Blocked { received, .. } => {
                Some(received)
            }
            _ => None,
        }
    }

    /// Cuts every text the error quotes from a server (its messages and bodies) to
    /// [`EXCERPT_CHARS`](super::http::EXCERPT_CHARS) characters. Run it after [`LlmError::scrub`], never
    /// before: a key cut in two would no longer be found.
    pub(crate) fn shorten(mut self) -> Self {
        for (text, kind) in self.texts_mut() {
            if kind == Text::Quoted {
                *text = super::http::excerpt(text);
            }
        }
        self
    }

    /// Replaces every occurrence of `secret` in the error's text with `[redacted]`.
    pub(crate) fn scrub(mut self, secret: &str) -> Self {
        if secret.is_empty() {
            return self;
        }
        for (text, _) in self.texts_mut() {
            if text.contains(secret) {
                *text = text.replace(secret, "[redacted]");
            }
        }
        self
    }

    /// Every text of the error that can hold what a server or a user sent (and so a key), with what it
    /// holds: the one list that [`LlmError::scrub`] and [`LlmError::shorten`] both go through.
    fn texts_mut(&mut self) -> Vec<(&mut String, Text)> {
        match self {
            LlmError::Stream { message, received } => {
                vec![(message, Text::Quoted), (received, Text::Whole)]
            }
            LlmError::Blocked {
                message, received, ..
            } => vec![(message, Text::Whole), (received, Text::Whole)],
            LlmError::Connect { url, message, .. } => {
                vec![(url, Text::Whole), (message, Text::Whole)]
            }
            LlmError::ModelNotFound { message, .. }
            | LlmError::Auth { message, .. }
            | LlmError::Http { message, .. }
            | LlmError::Other { message } => vec![(message, Text::Quoted)],
            LlmError::InvalidResponse { message, body } => {
                vec![(message, Text::Quoted), (body, Text::Quoted)]
            }
            LlmError::Config { message } => vec![(message, Text::Whole)],
            LlmError::Redirect { location, .. } | LlmError::UploadElsewhere { location } => {
                vec![(location, Text::Quoted)]
            }
            LlmError::Timeout { .. }
            | LlmError::BodyTooLarge { .. }
            | LlmError::InsecureKey { .. }
            | LlmError::Media(_) => Vec::new(),
            #[cfg(feature = "llama-cpp")]
            LlmError::LlamaCpp(_) => Vec::new(),
        }
    }
}

/// What one text of an [`LlmError`] holds, which decides whether [`LlmError::shorten`] cuts it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Text {
    /// A server's message or body, quoted at whatever length it came: cut.
    Quoted,
    /// The answer received so far, an address, or a message this crate wrote: kept whole.
    Whole,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transient_errors_are_the_retryable_ones() {
        let http = |status| LlmError::Http {
            status,
            message: String::new(),
            retry_after: None,
        };
        for status in [408, 409, 429, 500, 502, 503, 504, 529] {
            assert!(http(status).is_transient(), "{status}");
        }
        for status in [400, 401, 403, 404, 422] {
            assert!(!http(status).is_transient(), "{status}");
        }
        let idle = LlmError::Timeout {
            phase: TimeoutPhase::Idle,
            after: Duration::from_millis(5),
        };
        assert!(idle.is_transient());
        let broken = LlmError::Stream {
            message: "the stream ended before the server finished the answer".into(),
            received: "{\"a\"".into(),
        };
        assert!(broken.is_transient());
        let not_the_stream = LlmError::InvalidResponse {
            message: "the body is not a stream of server-sent events".into(),
            body: "<html>".into(),
        };
        assert!(not_the_stream.is_transient());
        for permanent in [
            LlmError::BodyTooLarge { limit: 1 },
            LlmError::Blocked {
                reason: "SAFETY".into(),
                message: String::new(),
                received: String::new(),
            },
            LlmError::other("x"),
        ] {
            assert!(!permanent.is_transient(), "{permanent:?}");
        }
    }

    #[test]
    fn scrub_removes_the_secret_everywhere() {
        let err = LlmError::Http {
            status: 400,
            message: "bad key sk-123 (sk-123)".into(),
            retry_after: None,
        }
        .scrub("sk-123");
        assert!(!err.to_string().contains("sk-123"));
        assert!(!format!("{err:?}").contains("sk-123"));
    }

    #[test]
    fn scrub_reaches_every_text_and_shorten_cuts_only_what_a_server_quoted() {
        let long = "sk-123 ".repeat(100);
        let cut = super::super::http::excerpt(&long);
        assert!(cut.len() < long.len());
        let stream = LlmError::Stream {
            message: long.clone(),
            received: long.clone(),
        };
        let invalid = LlmError::InvalidResponse {
            message: long.clone(),
            body: long.clone(),
        };
        let whole = [
            LlmError::Blocked {
                reason: "SAFETY".into(),
                message: long.clone(),
                received: long.clone(),
            },
            LlmError::Connect {
                url: long.clone(),
                message: long.clone(),
                hint: String::new(),
            },
            LlmError::Config {
                message: long.clone(),
            },
        ];
        for err in whole
            .iter()
            .chain([&stream, &invalid, &LlmError::other(&long)])
        {
            let scrubbed = err.clone().scrub("sk-123");
            assert!(!format!("{scrubbed:?}").contains("sk-123"), "{scrubbed:?}");
        }
        for err in whole {
            let before = format!("{err:?}");
            assert_eq!(format!("{:?}", err.shorten()), before);
        }
        let LlmError::Stream { message, received } = stream.shorten() else {
            panic!("shorten changed the variant")
        };
        assert_eq!((message, received), (cut.clone(), long.clone()));
        let LlmError::InvalidResponse { message, body } = invalid.shorten() else {
            panic!("shorten changed the variant")
        };
        assert_eq!((message, body), (cut.clone(), cut.clone()));
        let LlmError::Other { message } = LlmError::other(&long).shorten() else {
            panic!("shorten changed the variant")
        };
        assert_eq!(message, cut);
    }
}

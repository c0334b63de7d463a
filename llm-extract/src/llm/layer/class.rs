//! [`ErrorClass`]: what a backend's failure means for the layers over it, by the status rule every HTTP
//! backend applies (`error.rs`): a fallback moves on by class, a retry re-sends the transient ones.

use crate::llm::LlmError;

/// What a failure means to a layer deciding what to do next. Every [`LlmError`] has exactly one
/// ([`LlmError::class`]); [`ErrorClass::RateLimited`] and [`ErrorClass::Transient`] are the failures
/// [`LlmError::is_transient`] holds for, the ones a [`RetryPolicy`](crate::llm::RetryPolicy) re-sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorClass {
    /// Sending the same request again may succeed: a connection failure, a timeout, HTTP 408, 409 and
    /// 5xx, a broken stream, a body that is not the answer.
    Transient,
    /// The server asked for fewer requests (HTTP 429), perhaps saying for how long (`Retry-After`).
    RateLimited,
    /// The request is longer than the model's context (a 400 or 413 saying so): a backend with a longer
    /// context may take it.
    ContextTooLong,
    /// The server refused the request, or withheld the answer ([`LlmError::Blocked`]): it fails the same
    /// way twice on this backend.
    Refused,
    /// The server rejected the credentials.
    Auth,
    /// The server does not have the model or the endpoint.
    NotFound,
    /// The backend is misconfigured or failed in a way of its own (a body too large, a key refused over
    /// plain http, a redirect not followed, a custom backend's error).
    Other,
}

impl ErrorClass {
    const ALL: [ErrorClass; 7] = [
        ErrorClass::Transient,
        ErrorClass::RateLimited,
        ErrorClass::ContextTooLong,
        ErrorClass::Refused,
        ErrorClass::Auth,
        ErrorClass::NotFound,
        ErrorClass::Other,
    ];

    fn bit(self) -> u8 {
        1 << (self as u8)
    }

    /// A short lower-case name, as telemetry's `error.type` shows it.
    pub fn name(self) -> &'static str {
        match self {
            ErrorClass::Transient => "transient",
            ErrorClass::RateLimited => "rate_limited",
            ErrorClass::ContextTooLong => "context_too_long",
            ErrorClass::Refused => "refused",
            ErrorClass::Auth => "auth",
            ErrorClass::NotFound => "not_found",
            ErrorClass::Other => "other",
        }
    }
}

impl std::fmt::Display for ErrorClass {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A set of [`ErrorClass`]es, written with `|`: `ErrorClass::Transient | ErrorClass::RateLimited`.
#[derive(Clone, Copy, PartialEq, Eq, Default)]
pub struct ErrorClasses(u8);

impl ErrorClasses {
    /// No class.
    pub const NONE: ErrorClasses = ErrorClasses(0);

    /// Whether `class` is in the set.
    pub fn contains(self, class: ErrorClass) -> bool {
        self.0 & class.bit() != 0
    }
}

impl std::fmt::Debug for ErrorClasses {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set()
            .entries(ErrorClass::ALL.iter().filter(|c| self.contains(**c)))
            .finish()
    }
}

impl From<ErrorClass> for ErrorClasses {
    fn from(class: ErrorClass) -> Self {
        ErrorClasses(class.bit())
    }
}

impl std::ops::BitOr for ErrorClass {
    type Output = ErrorClasses;
    fn bitor(self, rhs: ErrorClass) -> ErrorClasses {
        ErrorClasses(self.bit() | rhs.bit())
    }
}

impl std::ops::BitOr<ErrorClass> for ErrorClasses {
    type Output = ErrorClasses;
    fn bitor(self, rhs: ErrorClass) -> ErrorClasses {
        ErrorClasses(self.0 | rhs.bit())
    }
}

/// What servers say when a request is longer than the model's context, lower-cased (OpenAI's
/// `context_length_exceeded`, llama-server's and vLLM's "maximum context length", Anthropic's "prompt is
/// too long", Gemini's "exceeds the maximum number of tokens").
const CONTEXT_WORDS: [&str; 6] = [
    "context_length_exceeded",
    "context length",
    "context window",
    "prompt is too long",
    "maximum number of tokens",
    "exceeds the available context",
];

impl LlmError {
    /// What this failure means to the layers over a backend (see [`ErrorClass`]).
    ///
    /// ```
    /// use llm_extract::llm::{ErrorClass, LlmError};
    ///
    /// let limited = LlmError::Http { status: 429, message: "slow down".into(), retry_after: None };
    /// assert_eq!(limited.class(), ErrorClass::RateLimited);
    /// assert!(limited.is_transient());
    /// ```
    pub fn class(&self) -> ErrorClass {
        match self {
            LlmError::Http { status: 429, .. } => ErrorClass::RateLimited,
            LlmError::Http {
                status: 400 | 413,
                message,
                ..
            } if mentions_context(message) => ErrorClass::ContextTooLong,
            _ if self.is_transient() => ErrorClass::Transient,
            LlmError::Http { .. } | LlmError::Blocked { .. } => ErrorClass::Refused,
            LlmError::Auth { .. } => ErrorClass::Auth,
            LlmError::ModelNotFound { .. } => ErrorClass::NotFound,
            _ => ErrorClass::Other,
        }
    }
}

fn mentions_context(message: &str) -> bool {
    let lower = message.to_lowercase();
    CONTEXT_WORDS.iter().any(|words| lower.contains(words))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn http(status: u16, message: &str) -> LlmError {
        LlmError::Http {
            status,
            message: message.into(),
            retry_after: None,
        }
    }

    #[test]
    fn every_failure_has_its_class() {
        let cases = [
            (http(429, "slow down"), ErrorClass::RateLimited),
            (http(503, "overloaded"), ErrorClass::Transient),
            (
                LlmError::Timeout {
                    phase: crate::llm::TimeoutPhase::Idle,
                    after: Duration::from_secs(1),
                },
                ErrorClass::Transient,
            ),
            (
                http(400, "This model's maximum context length is 8192 tokens"),
                ErrorClass::ContextTooLong,
            ),
            (
                http(400, "prompt is too long: 210000 tokens > 200000 maximum"),
                ErrorClass::ContextTooLong,
            ),
            (http(400, "unknown field `foo`"), ErrorClass::Refused),
            (
                LlmError::Auth {
                    status: 401,
                    message: String::new(),
                },
                ErrorClass::Auth,
            ),
            (
                LlmError::ModelNotFound {
                    model: "m".into(),
                    message: String::new(),
                    hint: String::new(),
                },
                ErrorClass::NotFound,
            ),
            (LlmError::other("quota"), ErrorClass::Other),
        ];
        for (err, class) in cases {
            assert_eq!(err.class(), class, "{err}");
            let retried = matches!(class, ErrorClass::Transient | ErrorClass::RateLimited);
            assert_eq!(err.is_transient(), retried, "{err}");
        }
    }

    #[test]
    fn sets_are_written_with_or() {
        let set = ErrorClass::Transient | ErrorClass::RateLimited | ErrorClass::Refused;
        assert!(set.contains(ErrorClass::RateLimited) && set.contains(ErrorClass::Refused));
        assert!(!set.contains(ErrorClass::Auth));
        assert!(!ErrorClasses::NONE.contains(ErrorClass::Transient));
        assert_eq!(format!("{set:?}"), "{Transient, RateLimited, Refused}");
    }
}

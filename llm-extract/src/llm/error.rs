//! Errors a backend reports.

/// A backend failed to produce an answer.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum LlmError {
    /// The stream broke before its end; `partial` holds the text received so far.
    #[error("the answer stream broke: {message}")]
    Stream {
        /// What happened.
        message: String,
        /// The text received before the break.
        partial: String,
    },
}

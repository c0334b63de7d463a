//! The embedded engine's error type.

use std::path::PathBuf;

/// The embedded engine failed. Every variant says what to do about it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LlamaCppError {
    /// There is no model file where one was expected.
    #[error("no model file at {}: {hint}", path.display())]
    ModelNotFound {
        /// Where the model was looked for.
        path: PathBuf,
        /// How to get one.
        hint: String,
    },
    /// The file exists but llama.cpp cannot load it (not a GGUF file, truncated, or an unsupported model).
    #[error("cannot load the model {}: {message}", path.display())]
    ModelLoad {
        /// The model file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// llama.cpp's JSON-Schema-to-grammar converter (the one Ollama enforces) rejected the schema.
    #[error(
        "llama.cpp's JSON-Schema-to-grammar converter (what Ollama enforces) rejected the schema: {message}. \
         Render the schema for the GBNF dialect (SchemaSet::for_dialect(Dialect::Gbnf, ..)) and keep to its \
         subset (no `{{}}` any-value, anchored patterns). Schema: {schema}"
    )]
    SchemaRejected {
        /// What the converter said.
        message: String,
        /// The rejected schema, as JSON.
        schema: String,
    },
    /// A grammar could not be built from a schema the converter accepted.
    #[error("cannot build the decoding grammar: {message}")]
    Grammar {
        /// What went wrong.
        message: String,
    },
    /// The prompt does not fit in the context.
    #[error(
        "the prompt is {prompt_tokens} tokens but the context holds {context_size}: shorten the input or raise \
         LlamaCppBuilder::context_size (the model was trained on {trained} tokens)"
    )]
    ContextOverflow {
        /// Tokens in the prompt.
        prompt_tokens: usize,
        /// Tokens the context holds.
        context_size: u32,
        /// The model's training context.
        trained: u32,
    },
    /// The request cannot be run (for example its prompt is empty).
    #[error("invalid request for the embedded engine: {message}")]
    InvalidRequest {
        /// What is wrong.
        message: String,
    },
    /// A sampling setting is outside the range where it means something (for example a repeat penalty
    /// of 0, which would divide scores by zero).
    #[error("invalid {setting} {value}: it must be {valid}")]
    InvalidSetting {
        /// The setting (`repeat penalty`, ...).
        setting: &'static str,
        /// The value given, as text.
        value: String,
        /// The values it may take.
        valid: &'static str,
    },
    /// The model's scheduler thread panicked while it decoded this request (a bug: please report it
    /// with the message). The request was abandoned; the engine keeps serving the others and the next.
    #[error(
        "the embedded engine failed while decoding this request ({message}); the request was abandoned          and the engine serves the next ones: please report this as a bug"
    )]
    Panicked {
        /// The panic's message.
        message: String,
    },
    /// llama.cpp failed while generating; `received` holds the text generated before.
    #[error("llama.cpp failed: {message}")]
    Engine {
        /// What went wrong.
        message: String,
        /// The text generated before the failure.
        received: String,
    },
}

impl LlamaCppError {
    /// The error for a repeat penalty factor outside `(0, ∞)`, if `factor` is one.
    pub(super) fn check_repeat_penalty(factor: f32) -> Result<(), Self> {
        if factor.is_finite() && factor > 0.0 {
            return Ok(());
        }
        Err(LlamaCppError::InvalidSetting {
            setting: "repeat penalty",
            value: factor.to_string(),
            valid: "a finite number above 0 (1 is none, above 1 makes repeats less likely, below 1 more \
                    likely; a factor divides positive scores and multiplies negative ones)",
        })
    }

    pub(super) fn engine(message: impl std::fmt::Display) -> Self {
        LlamaCppError::Engine {
            message: message.to_string(),
            received: String::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repeat_penalty_must_be_finite_and_above_zero() {
        for factor in [1.0, 1.1, 0.5, 64.0, f32::MIN_POSITIVE] {
            assert_eq!(
                LlamaCppError::check_repeat_penalty(factor),
                Ok(()),
                "{factor}"
            );
        }
        for factor in [0.0, -0.0, -1.1, f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
            let err = LlamaCppError::check_repeat_penalty(factor).unwrap_err();
            assert!(
                matches!(
                    &err,
                    LlamaCppError::InvalidSetting {
                        setting: "repeat penalty",
                        ..
                    }
                ),
                "{factor}: {err}"
            );
            assert!(err.to_string().contains("above 0"), "{err}");
        }
    }
}

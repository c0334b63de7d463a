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
         Render the schema for the Ollama dialect (SchemaSet::for_dialect(Dialect::Ollama, ..)) and keep to its \
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
    /// The request cannot be run (for example a message holds a NUL byte).
    #[error("invalid request for the embedded engine: {message}")]
    InvalidRequest {
        /// What is wrong.
        message: String,
    },
    /// llama.cpp failed while generating; `partial` holds the text generated before.
    #[error("llama.cpp failed: {message}")]
    Engine {
        /// What went wrong.
        message: String,
        /// The text generated before the failure.
        partial: String,
    },
}

impl LlamaCppError {
    pub(super) fn engine(message: impl std::fmt::Display) -> Self {
        LlamaCppError::Engine {
            message: message.to_string(),
            partial: String::new(),
        }
    }
}

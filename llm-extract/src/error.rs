//! Errors shared across modules. Each module owns the errors of its own job
//! ([`crate::parse::ParseError`], [`crate::llm::LlmError`], ...); this file holds the cross-cutting ones.

/// A schema cannot be rendered for a dialect, or cannot be compiled for validation.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SchemaError {
    /// The dialect cannot express the schema at all (sending a weakened one would mislead the server).
    #[error("the {dialect} dialect cannot express {what} at {path}; {hint}")]
    Unsupported {
        /// The dialect's name.
        dialect: &'static str,
        /// The construct, e.g. "a map with arbitrary keys".
        what: String,
        /// JSON pointer into the generic schema.
        path: String,
        /// What the user can do about it.
        hint: String,
    },
    /// The schema is not a valid JSON Schema.
    #[error("invalid JSON Schema at {path}: {message}")]
    Invalid {
        /// JSON pointer into the schema.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// A `$ref` points into another document, which was not registered (documents are never fetched).
    #[error(
        "the schema refers to {uri}, another document, which is not registered; register it with \
         DynamicSchema::builder(schema).register(uri, document) (documents are never fetched)"
    )]
    RemoteRef {
        /// The document's URI, as the validator resolved it.
        uri: String,
    },
}

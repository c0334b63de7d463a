//! The [`Extract`] trait: what a type annotated with `#[derive(Extract)]` can do.

use crate::schema::SchemaSet;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// A type whose values can be extracted from a model's answer.
///
/// Implemented by `#[derive(Extract)]`; the type also derives `serde::Deserialize`. Every method
/// below is computed once per type (a static) and then returned by reference.
pub trait Extract: DeserializeOwned + Send + 'static {
    /// Everything derived from the type's schema: dialects, instructions, validators.
    fn schema() -> &'static SchemaSet;

    /// The JSON Schema (draft 2020-12) of one value.
    fn json_schema() -> &'static Value {
        Self::schema().generic()
    }

    /// What each line of a JSON Lines answer must satisfy.
    fn line_schema() -> &'static Value {
        Self::schema().line()
    }

    /// Many items as one JSON value: `{"items": [...]}`.
    fn list_schema() -> &'static Value {
        Self::schema().list()
    }

    /// Compact type definitions for a prompt asking for one value.
    fn format_instructions() -> &'static str {
        Self::schema().format_instructions()
    }

    /// Compact type definitions for a prompt asking for JSON Lines.
    fn line_format_instructions() -> &'static str {
        Self::schema().line_format_instructions()
    }
}

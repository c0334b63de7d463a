//! # llm-extract
//!
//! Typed, validated Rust values from what a language model writes.
//!
//! Annotate a type once with `#[derive(Extract, Deserialize)]`; the derive generates its JSON Schema
//! (also what each line of a JSON Lines answer must satisfy), provider-safe dialects of that schema
//! and compact format instructions for the prompt. It implements two traits, as serde keeps
//! `Deserialize` below `serde_json::from_str`: [`Schema`], all the parser needs, and [`Extract`],
//! the extraction methods on top. At run time [`Extract::extract`], [`Extract::extract_all`] and
//! [`Extract::extract_stream`] call a model, parse leniently, validate, deserialize and repair;
//! [`Extract::extract_partial`] shows one value as it is written (its derived partial form,
//! [`Partial<T>`](parse::Partial), see [`parse::PartialValue`]).
//!
//! The crate is laid out the way an extraction flows:
//! - [`schema`]: the schemas and instructions a type yields ([`Schema`]), per provider dialect, and
//!   runtime schemas ([`DynamicSchema`]);
//! - [`parse`](mod@parse): lenient JSON, JSON Lines, the incremental [`LineDecoder`] and the
//!   incremental partial-value reader ([`PartialReader`]);
//! - [`validate`]: one compiled validator per schema;
//! - [`llm`]: the [`Llm`] trait and its backends ([`Ollama`], [`OpenAiCompatible`], [`from_fn`]);
//! - [`extract`](mod@extract): the attempt / repair / continuation loop ([`Extractor`]);
//! - [`report`]: what an extraction tried and cost ([`Extraction`], [`Attempt`]);
//! - [`blocking`]: the same for callers without an async runtime.

#![warn(missing_docs)]

pub mod batch;
pub mod blocking;
pub mod error;
pub mod extract;
pub mod ground;
pub mod llm;
pub mod parse;
pub mod prompts;
pub mod report;
pub mod schema;
pub mod validate;

pub use error::SchemaError;
pub use extract::{
    Extract, ExtractError, ExtractErrorKind, ExtractStream, Extractor, Input, Mode, PartialEvent,
};
pub use llm::{
    from_fn, ChatRequest, ChatResponse, Finish, Llm, LlmError, Ollama, OpenAiCompatible, Usage,
};
pub use parse::{
    from_str, from_str_with, lines_from_str, lines_from_str_with, Fix, LineDecoder, Lines,
    LoopGuard, ParseError, Parsed, Partial, PartialReader, PartialValue, Skipped,
};
pub use report::{Attempt, AttemptKind, Extraction, Report};
pub use schema::{Dialect, DynamicSchema, Schema, SchemaSet, Shape};

/// Derives [`Extract`] for a struct with named fields, a fieldless enum or an internally tagged enum.
///
/// See the crate README for the attributes it reads (`#[extract(...)]` and the `#[serde(...)]` ones it mirrors).
pub use llm_extract_derive::Extract;

/// The one path generated code goes through. Not public API: no stability promise.
#[doc(hidden)]
pub mod __private {
    pub use crate::parse::partial::Node;
    pub use crate::parse::partial_value::{
        complete_str, descend_field, field_shown, json_shown, member, sync_field, sync_json,
        without_keys, PartialField, PartialValue,
    };
    pub use crate::schema::builder::*;
    pub use crate::schema::SchemaSet;
    pub use serde::{self, Serialize};
    pub use serde_json::{self, json, Map, Value};
    pub use std::sync::OnceLock;
}

//! The [`Extract`] trait and the extraction loop: ask, parse, validate, repair, continue.
//!
//! - [`Extract`]: what `#[derive(Extract)]` implements; its provided methods `extract`, `extract_all` and
//!   `extract_stream` run an extraction with default settings.
//! - [`Extractor`]: the same with every setting (instructions, template, attempts, tokens, mode, ...),
//!   returning the [`Extraction`] report, plus the untyped twins for runtime schemas.
//! - The loop itself (one implementation for typed and untyped targets) lives in `run.rs`, the exact
//!   wording of every prompt in `prompt.rs`.

mod error;
mod example;
mod example_turns;
mod extractor;
mod prompt;
mod run;
mod stream;
mod target;

pub use error::{ExtractError, ExtractErrorKind};
pub use example::{Example, ExampleError};
pub use extractor::{Extractor, Input, Mode};
pub(crate) use prompt::render;
pub use prompt::{TemplateError, DEFAULT_INSTRUCTIONS, DEFAULT_TEMPLATE};
pub use stream::ExtractStream;

use crate::llm::Llm;
use crate::report::Extraction;
use crate::schema::SchemaSet;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::future::Future;

/// A type whose values can be extracted from a model's answer.
///
/// Implemented by `#[derive(Extract)]`; the type also derives `serde::Deserialize`. The schema methods
/// are computed once per type (a static) and then returned by reference. The extraction methods use the
/// default settings of [`Extractor`]: constrained mode, 3 attempts, the backend's token limit.
///
/// ```
/// use llm_extract::llm::{from_fn, ChatResponse};
/// use llm_extract::{Extract, SchemaSet};
/// use serde_json::json;
/// use std::sync::OnceLock;
///
/// #[derive(serde::Deserialize, Debug, PartialEq)]
/// struct Person {
///     name: String,
/// }
///
/// // What the derive writes for you:
/// impl Extract for Person {
///     fn schema() -> &'static SchemaSet {
///         static SET: OnceLock<SchemaSet> = OnceLock::new();
///         SET.get_or_init(|| SchemaSet::new("Person", json!({
///             "type": "object",
///             "properties": {"name": {"type": "string"}},
///             "required": ["name"],
///             "additionalProperties": false
///         })))
///     }
/// }
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let llm = from_fn(|_request| async { Ok(ChatResponse::new(r#"{"name": "Ada Lovelace"}"#)) });
/// let person = Person::extract(&llm, "Ada Lovelace wrote the first program.").await?;
/// assert_eq!(person, Person { name: "Ada Lovelace".into() });
/// # Ok::<(), llm_extract::extract::ExtractError>(())
/// # }).unwrap();
/// ```
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

    /// The type's own worked examples, shown to the model unless the [`Extractor`] has examples of its
    /// own for this type (or [`Extractor::default_examples`] is off). Default: none.
    /// `#[extract(example(text = "...", value = ...))]` on a derived type fills it; an example that does
    /// not satisfy the schema fails each extraction with [`ExtractErrorKind::Example`] before anything is
    /// sent.
    fn examples() -> Result<Vec<Example>, ExampleError> {
        Ok(Vec::new())
    }

    /// Extracts one value from `text`: asks `llm`, parses leniently, validates, and repairs up to the
    /// attempt cap. The error carries every attempt and what they cost.
    fn extract<'a, L: Llm + ?Sized>(
        llm: &'a L,
        text: &'a str,
    ) -> impl Future<Output = Result<Self, ExtractError>> + Send + 'a {
        async move {
            Extractor::new(llm)
                .extract::<Self>(text)
                .await
                .map(Extraction::into_value)
        }
    }

    /// Extracts every item of this type that `text` holds, in order (JSON Lines when prompted, a list
    /// schema decoded element by element when constrained). Broken lines are re-asked, cut-off answers
    /// continued; lines that never validate are left out (see [`Extractor::extract_all`] for the report).
    fn extract_all<'a, L: Llm + ?Sized>(
        llm: &'a L,
        text: &'a str,
    ) -> impl Future<Output = Result<Vec<Self>, ExtractError>> + Send + 'a {
        async move {
            Extractor::new(llm)
                .extract_all::<Self>(text)
                .await
                .map(Extraction::into_value)
        }
    }

    /// Like [`Extract::extract_all`], but yields each item as soon as it is complete.
    fn extract_stream<'a, L: Llm + ?Sized>(llm: &'a L, text: &str) -> ExtractStream<'a, Self> {
        let input = Input::text(text);
        ExtractStream::start(move |mut sink| async move {
            let extractor = Extractor::new(llm);
            let done = extractor
                .engine()
                .many(&target::Typed::<Self>::new(), input, &mut *sink)
                .await?;
            Ok(done.report)
        })
    }
}

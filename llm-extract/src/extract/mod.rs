//! The [`Extract`] trait and the extraction loop: ask, parse, validate, repair, continue.
//!
//! - [`Extract`]: what `#[derive(Extract)]` implements; its provided methods (`T::extract`,
//!   `T::extract_all`, ...) run an extraction with default settings.
//! - [`Extractor`]: the same with every setting (instructions, template, attempts, tokens, mode,
//!   chunks, ...; the table is on [`Extractor`], the setters in `setup/settings.rs`), returning the
//!   [`Extraction`] report. Its seven `extract*` methods take a target type `T`:
//!   [`extract`](Extractor::extract), [`extract_all`](Extractor::extract_all),
//!   [`extract_stream`](Extractor::extract_stream), [`extract_partial`](Extractor::extract_partial),
//!   [`extract_grounded`](Extractor::extract_grounded), [`extract_document`](Extractor::extract_document)
//!   and [`extract_document_stream`](Extractor::extract_document_stream).
//! - [`SchemaExtractor`] ([`Extractor::with_schema`]): the same seven for a runtime schema, returning
//!   validated JSON.
//! - [`DocumentSource`]: the document of the document extractions, in memory or read from a file,
//!   resumable ([`DoneChunk`]), with a callback per chunk ([`ChunkReport`]); the result is a
//!   [`Document`]; [`Extractor::extract_pages`] extracts a document read page by page (a PDF, see
//!   [`document`](crate::document)) and locates each span on its page ([`PagedDocument`]).
//!   [`Extractor::one_value`] reads a document for one value rather than a list ([`OneValue`]), each
//!   property from the chunk that grounds it best ([`DocumentValue`]).
//! - [`LoopGuard`] and the detectors that stop a model that loops ([`LoopDetector`], [`ItemWindow`]).
//!
//! The rooms, each folder's `mod.rs` saying what lives in it:
//! - `setup/`: what to extract and how: the [`Extractor`] and its settings, the targets (a Rust type or
//!   a runtime schema, `target.rs`, the one interface the loop is written against), the items merged
//!   on their keys, the worked examples;
//! - `engine/`: the loop itself: the first request, one value and many items, the one reader of a
//!   streamed answer, the cost meter, the token budget, the `tracing` spans (`telemetry.rs`);
//! - `loops/`: a model that loops: the guard, the detectors, and the recovery;
//! - `prompts/`: every text the extraction sends: the `{{var}}` template, the system, repair and
//!   continuation turns, the per-field questions;
//! - `document/`: long documents and grounding: chunks, passes, the merge, one value from a document,
//!   documents from a file or by pages, grounded extraction;
//! - `confidence/`: how sure it is: confidence from log-probabilities, samples and their vote, an enum
//!   chosen by likelihood;
//! - `per_field/`: the per-field strategy, one short question per field;
//! - `error.rs`: [`ExtractError`], why an extraction failed, with its ledger.
//!
//! It ties the layers below together: the [`schema`](crate::schema) of the target, a request to an
//! [`llm`](crate::llm), the answer read by [`parse`](crate::parse), checked by
//! [`validate`](crate::validate) and, for grounded fields, [`ground`](crate::ground). Next in the flow:
//! [`report`](crate::report), what the extraction returns besides its value.

mod confidence;
mod document;
mod engine;
mod error;
mod loops;
mod per_field;
mod prompts;
mod setup;

pub use confidence::choose::{Choice, ChooseError, Chooser};
pub use confidence::logprobs::{Aggregate, Basis, ConfidenceRule};
pub use confidence::samples::SAMPLE_TEMPERATURE;
pub use document::chunk_report::{ChunkReport, DoneChunk};
pub use document::document_source::DocumentSource;
pub use document::items::{Document, DocumentEvent, PassReport, BYTES_PER_TOKEN};
pub use document::one_value::{DocumentValue, OneValue, PagedValue, Taken};
pub use document::paged::PagedDocument;
pub use engine::partial_events::PartialEvent;
pub use engine::stream::ExtractStream;
pub use error::{ExtractError, ExtractErrorKind};
pub use loops::{
    InputText, ItemVerdict, ItemWindow, LoopDetector, LoopGuard, Occurrences, Recovery,
};
pub use prompts::questions::QUESTION;
pub(crate) use prompts::template::render;
pub use prompts::template::{TemplateError, DEFAULT_TEMPLATE};
pub use prompts::wording::DEFAULT_INSTRUCTIONS;
pub use setup::config::{Input, Mode, Strategy, DEFAULT_CHUNK_BYTES};
pub use setup::example::{Example, ExampleError};
pub use setup::extractor::Extractor;
pub use setup::schema_extractor::SchemaExtractor;

use crate::document::ReadError;
use crate::llm::Llm;
use crate::parse::PartialValue;
use crate::report::Extraction;
use crate::schema::Schema;
use engine::partial_events as partial;
use setup::keyed::{self, Handing};
use setup::target;
use std::future::Future;

/// A type whose values can be extracted from a model's answer.
///
/// Implemented by `#[derive(Extract)]` (the type also derives `serde::Deserialize`), on top of
/// [`Schema`], which holds the type's schema and is all the parser needs. The extraction methods use
/// the default settings of [`Extractor`]: constrained mode, 3 attempts, the backend's token limit.
///
/// ```
/// use llm_extract::llm::{from_fn, ChatResponse};
/// use llm_extract::{Extract, Schema, schema::SchemaSet};
/// use serde_json::json;
/// use std::sync::OnceLock;
///
/// #[derive(serde::Deserialize, Debug, PartialEq)]
/// struct Person {
///     name: String,
/// }
///
/// // What the derive writes for you:
/// impl Schema for Person {
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
/// impl Extract for Person {}
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let llm = from_fn(|_request| async { Ok(ChatResponse::new(r#"{"name": "Ada Lovelace"}"#)) });
/// let person = Person::extract(&llm, "Ada Lovelace wrote the first program.").await?;
/// assert_eq!(person, Person { name: "Ada Lovelace".into() });
/// # Ok::<(), llm_extract::extract::ExtractError>(())
/// # }).unwrap();
/// ```
pub trait Extract: Schema {
    /// The type's own worked examples, shown to the model unless the [`Extractor`] has examples of its
    /// own for this type (or [`Extractor::default_examples`] is off). Default: none.
    /// `#[extract(example(text = "...", value = ...))]` on a derived type fills it; an example that does
    /// not satisfy the schema fails each extraction with [`ExtractErrorKind::Example`] before anything is
    /// sent.
    fn examples() -> Result<Vec<Example>, ExampleError> {
        Ok(Vec::new())
    }

    /// Checks a schema cannot say, run on every value and item extracted (never on a partial one):
    /// hard issues are repaired like schema violations, soft ones returned in
    /// [`Report::issues`](crate::Report::issues). `#[extract(check)]` on a derived type makes it call
    /// the type's [`Check`](crate::check::Check). Default: none.
    fn check(&self, issues: &mut crate::check::Issues) {
        let _ = issues;
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
    /// Copies of one item are merged on the type's `#[extract(key)]` fields; a type without key fields
    /// keeps every item.
    fn extract_all<'a, L: Llm + ?Sized>(
        llm: &'a L,
        text: &'a str,
    ) -> impl Future<Output = Result<Vec<Self>, ExtractError<Self>>> + Send + 'a {
        async move {
            Extractor::new(llm)
                .extract_all::<Self>(text)
                .await
                .map(Extraction::into_value)
        }
    }

    /// Every item of this type in a document of any length (a text, or a [`DocumentSource`]): chunked,
    /// each chunk extracted and its `#[extract(grounded)]` values found in it, the items merged by
    /// their `#[extract(key)]` fields. Failed chunks are reported in [`Document::chunks`], never fatal;
    /// the error is a reader's. See [`Extractor::extract_document`] for the settings.
    fn extract_document<'a, L: Llm + ?Sized>(
        llm: &'a L,
        document: impl Into<DocumentSource<'a>>,
    ) -> impl Future<Output = Result<Document<Self>, ReadError>> + Send + 'a {
        let source = document.into();
        async move { Extractor::new(llm).extract_document::<Self>(source).await }
    }

    /// Like [`Extract::extract`], but yields the value as it is written: snapshots of its partial form
    /// ([`Partial<Self>`](crate::parse::Partial)), each value inside it as it completes, and the
    /// validated value last. See [`Extractor::extract_partial`].
    fn extract_partial<'a, L: Llm + ?Sized>(
        llm: &'a L,
        text: &str,
    ) -> ExtractStream<'a, PartialEvent<Self>>
    where
        Self: PartialValue,
    {
        let input = Input::text(text);
        ExtractStream::start_with_sink(move |sink, spent| async move {
            let extractor = Extractor::new(llm);
            let engine = extractor.engine().with_spent(&spent);
            partial::run(engine, &target::Derived::<Self>::new(), input, sink).await
        })
    }

    /// Like [`Extract::extract_all`], but yields each item as soon as it is complete: an item whose key
    /// was already yielded is not yielded again (see [`Extractor::extract_stream`]).
    fn extract_stream<'a, L: Llm + ?Sized>(llm: &'a L, text: &str) -> ExtractStream<'a, Self> {
        let input = Input::text(text);
        ExtractStream::start(move |mut sink, spent| async move {
            let extractor = Extractor::new(llm);
            let engine = extractor.engine().with_spent(&spent);
            let target = target::Derived::<Self>::new();
            keyed::items(engine, target, input, Handing::FirstCopies, &mut *sink).await
        })
    }
}

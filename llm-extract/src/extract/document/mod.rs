//! Long documents and grounding: a document's items (`items.rs`: chunks, passes, the merge) or one
//! value folded from what every chunk found (`one_value.rs`), a document read from a file rather than
//! held in memory (`from_reader.rs`) or page by page (`paged.rs`), where a document comes from
//! (`document_source.rs`) and what each chunk did (`chunk_report.rs`); grounded extraction
//! (`grounding.rs`) and the target wrapper that re-asks a value the text does not hold
//! (`grounded_target.rs`). Splitting a text into chunks is the document layer's
//! ([`document::chunk`](crate::document::chunk)); finding a value in a text is the grounding layer's
//! ([`ground`](crate::ground)).

pub(crate) mod chunk_report;
pub(crate) mod document_source;
pub(crate) mod from_reader;
pub(crate) mod grounded_target;
pub(crate) mod grounding;
pub(crate) mod items;
pub(crate) mod one_value;
pub(crate) mod paged;

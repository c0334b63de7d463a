//! Measuring extraction: a gold file of texts with the values a careful reader wrote down, scored
//! field by field against what a model extracted.
//!
//! - [`gold`]: reading gold cases, one `{"id", "text", "value"}` per line ([`read_gold`]), or texts
//!   and values in two files matched by id or by line ([`read_pair`]);
//! - [`score`](mod@score): one document's prediction against its gold value, leaf by leaf
//!   ([`score_document`]): strings normalised ([`normalise`]), numbers within a tolerance
//!   ([`ScoreOptions`]), booleans, null and enum values exact, grounded spans by overlap where the gold
//!   gives spans;
//! - [`lists`]: which predicted item of a list answers which gold item: by the schema's key properties
//!   (`"x-key": true`), else by the assignment that matches the most fields;
//! - [`report`]: the documents of a run summed up per field (precision, recall, F1, accuracy), with
//!   validity, tokens and time per document ([`EvalReport`]), as JSON (serde), as a plain-text table
//!   (`Display`), and two runs side by side ([`compare`]);
//! - [`calibration`]: whether the extraction's per-field confidence ranks right values above wrong
//!   ones ([`Calibration`]: the accuracy of the most and least confident halves, the ROC AUC);
//! - [`html_report`]: the report as one self-contained HTML page ([`html()`]); `shown.rs`: how shares
//!   and field names are written in the text table and the page.
//!
//! Each leaf of the gold value and of the prediction (a string, number, boolean or null; an empty list
//! or object counts as null) is one field occurrence, named by its path with list indices collapsed
//! (`items[].name`). A leaf is [`Outcome::Correct`] when both give it and they agree,
//! [`Outcome::Empty`] when neither gives it, [`Outcome::Wrong`] when they disagree (a false positive
//! and a false negative), [`Outcome::Missing`] when only the gold gives it (a false negative) and
//! [`Outcome::Extra`] when only the prediction does (a false positive). A document without a valid
//! value scores every gold leaf as missing.
//!
//! ```
//! use llm_extract::eval::{score_document, DocumentRun, EvalReport, GoldCase, ScoreOptions};
//! use serde_json::json;
//!
//! let case: GoldCase = serde_json::from_value(json!({
//!     "id": "a", "text": "Invoice A-7 to ACME, 12.50 EUR.",
//!     "value": {"number": "A-7", "customer": "ACME", "total": 12.5}
//! }))?;
//! let predicted = json!({"number": "a-7", "customer": "Acme Inc.", "total": 12.5});
//! let leaves = score_document(&case, Some(&predicted), &[], None, &ScoreOptions::default());
//! let run = DocumentRun::new(&case, Some(predicted), None, 40, std::time::Duration::from_millis(300), leaves);
//! let report = EvalReport::new(vec![run]);
//! assert_eq!(report.overall.correct, 2);
//! assert_eq!(report.overall.total, 3);
//! println!("{report}");
//! # Ok::<(), serde_json::Error>(())
//! ```

pub mod calibration;
pub mod gold;
pub mod html_report;
pub mod lists;
mod normalise;
pub mod report;
pub mod score;
mod shown;

pub use calibration::{roc_auc, Calibration, FieldConfidence};
pub use gold::{parse_gold, read_gold, read_pair, GoldCase, GoldSpan};
pub use html_report::html;
pub use normalise::normalise;
pub use report::{compare, Comparison, DocumentRun, EvalReport, FieldDelta, FieldScore, Stat};
pub use score::{
    mark_doubts, score_document, score_document_with_confidence, score_document_with_signals, Leaf,
    Outcome, ScoreOptions,
};

use std::path::PathBuf;

/// Why a gold file could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EvalError {
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The system's reason.
        source: std::io::Error,
    },
    /// A line is not a gold case (or not a text, or not a value).
    #[error("{path}:{line}: {message}")]
    Line {
        /// The file.
        path: String,
        /// The line, from 1.
        line: usize,
        /// What is wrong with it.
        message: String,
    },
    /// The file holds no case.
    #[error(
        "{path} holds no gold case (one JSON object per line: {{\"id\", \"text\", \"value\"}})"
    )]
    Empty {
        /// The file.
        path: String,
    },
    /// Two cases share an id.
    #[error("{path}: the id {id:?} is on lines {first} and {second}; each case needs its own id")]
    DuplicateId {
        /// The file.
        path: String,
        /// The id.
        id: String,
        /// Its first line.
        first: usize,
        /// The line that repeats it.
        second: usize,
    },
    /// Texts and values matched by line, in different numbers.
    #[error(
        "{texts} has {text_count} texts and {values} has {value_count} values; without ids on both \
         sides they are matched by line, so their numbers must be equal"
    )]
    Count {
        /// The texts file.
        texts: String,
        /// How many texts it has.
        text_count: usize,
        /// The values file.
        values: String,
        /// How many values it has.
        value_count: usize,
    },
    /// A text whose id has no value.
    #[error("the text {id:?} of {texts} has no value in {values}")]
    Unmatched {
        /// The id.
        id: String,
        /// The texts file.
        texts: String,
        /// The values file.
        values: String,
    },
}

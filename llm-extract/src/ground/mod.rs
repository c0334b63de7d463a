//! Grounding: where in the source text each quoted value came from.
//!
//! A string field marked `#[extract(grounded)]` (the schema keyword `"x-grounded": true`, which a
//! [`DynamicSchema`](crate::DynamicSchema) may carry too) must be a verbatim span of the text it was
//! extracted from. This layer sits on top of [`schema`](crate::schema) and below the parser and the
//! extraction loop; it knows nothing of models:
//!
//! - [`Source`]: a text prepared for alignment. [`Source::align`] finds one value: exactly, then
//!   [normalized](MatchKind::Normalized) (whitespace runs, case, typographic quotes and line ends
//!   ignored), then [fuzzy](MatchKind::Fuzzy) (anchored on the value's rarest word, scored on the words
//!   around each anchor). Each search is linear in the text's length; the indexes it needs are built
//!   once per text, on first use.
//!   Every span begins and ends on a word, never on the punctuation between words ([`boundary`]).
//! - [`Source::ground`]: the [`Span`]s of every grounded value of an item (a validated JSON value of
//!   the schema), with its JSON path, byte range and char range.
//! - [`Grounded`]: an item with its spans, what grounded extractions return.
//! - [`merge`]: merging the items of several chunks or passes by identity (`"x-key"` fields).
//! - [`has_grounded`], [`grounded_paths`]: a schema and a value of it walked together to the grounded
//!   strings (`grounded_strings.rs`); `assign.rs`: the pairing of two lists that matches the most (for
//!   the vote of samples and the evaluation's lists).
//!
//! Next in the flow: [`extract`](crate::extract) runs grounded extractions
//! ([`Extractor::extract_grounded`](crate::Extractor::extract_grounded),
//! [`Extractor::extract_document`](crate::Extractor::extract_document)).

pub(crate) mod assign;
pub mod boundary;
mod grounded_strings;
pub mod merge;
mod source;

pub use crate::schema::builder::{mark_grounded, GROUNDED, KEY};
pub use grounded_strings::{grounded_paths, has_grounded};
pub use merge::{Conflict, Merger};
pub use source::{Source, FUZZY_MIN_SCORE};

use serde::{Deserialize, Serialize};
use std::ops::Range;

/// How a value was found in the source.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum MatchKind {
    /// The value occurs verbatim: the span's text is the value.
    Exact,
    /// The value occurs once whitespace runs, line ends, case, typographic quotes and the
    /// punctuation and whitespace at its ends are ignored: the span's text is what the value
    /// normalizes to.
    Normalized,
    /// Most of the value's words occur together, in order: `score` in `(0, 1]` is the share that
    /// matched (Dice coefficient over words), at least [`FUZZY_MIN_SCORE`].
    Fuzzy {
        /// How much of the value matched.
        score: f32,
    },
    /// The value does not occur in the source; the span's ranges are empty (`0..0`).
    NotFound,
}

impl MatchKind {
    /// Whether the value was found at all.
    pub fn is_found(self) -> bool {
        self != MatchKind::NotFound
    }
}

/// Where one grounded value of an item is in the source.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Span {
    /// JSON pointer to the value in the item (`/name`, `/aliases/1`).
    pub path: String,
    /// The value as the model wrote it.
    pub value: String,
    /// Byte range in the source (`0..0` when [`MatchKind::NotFound`]).
    pub bytes: Range<usize>,
    /// Char (Unicode scalar value) range in the source (`0..0` when [`MatchKind::NotFound`]).
    pub chars: Range<usize>,
    /// How it matched.
    #[serde(rename = "match")]
    pub kind: MatchKind,
}

impl Span {
    /// The span moved by `bytes` and `chars`: a chunk's spans as offsets into the whole document.
    /// A span that was not found stays `0..0`.
    pub fn shifted(mut self, bytes: usize, chars: usize) -> Span {
        if self.kind.is_found() {
            self.bytes = self.bytes.start + bytes..self.bytes.end + bytes;
            self.chars = self.chars.start + chars..self.chars.end + chars;
        }
        self
    }
}

/// An extracted item and the spans of its grounded values, in the order of the item's fields.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Grounded<T> {
    /// The item.
    pub value: T,
    /// One span per grounded value (a `Vec<String>` field has one per element; `null` has none, an
    /// empty string is [`MatchKind::NotFound`]). Merged items accumulate the spans of every copy.
    pub spans: Vec<Span>,
}

/// Reads the item alone (its spans are found afterwards, against the source): what lets a decoder
/// that deserializes items produce `Grounded` ones.
impl<'de, T: serde::Deserialize<'de>> serde::Deserialize<'de> for Grounded<T> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        T::deserialize(deserializer).map(|value| Grounded::new(value, Vec::new()))
    }
}

impl<T> Grounded<T> {
    /// An item with its spans.
    pub fn new(value: T, spans: Vec<Span>) -> Self {
        Grounded { value, spans }
    }

    /// Whether every grounded value was found.
    pub fn is_grounded(&self) -> bool {
        self.spans.iter().all(|span| span.kind.is_found())
    }

    /// Applies `f` to the value, keeping the spans.
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Grounded<U> {
        Grounded {
            value: f(self.value),
            spans: self.spans,
        }
    }
}

//! What each chunk of a document did ([`ChunkReport`]), and the record of a finished chunk an
//! extraction can be given back to resume ([`DoneChunk`]).

use crate::extract::error::ExtractError;
use crate::ground::{Grounded, Span};
use crate::llm::Usage;
use crate::report::Report;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::ops::Range;

/// One chunk of one pass: where it is, what it returned and cost.
#[derive(Debug)]
#[non_exhaustive]
pub struct ChunkReport {
    /// The pass, from 0.
    pub pass: u32,
    /// The chunk's position in its pass, from 0.
    pub index: usize,
    /// Its byte range in the document.
    pub bytes: Range<usize>,
    /// Its char range in the document.
    pub chars: Range<usize>,
    /// How many items it returned (before the merge).
    pub items: usize,
    /// Its attempts, cost and skipped lines (for a failed chunk, the error's report).
    pub report: Report,
    /// Why it failed, if it did.
    pub error: Option<ExtractError>,
    /// Whether it was finished by an earlier run and given back (see [`DocumentSource::resume`](crate::extract::DocumentSource::resume)): not
    /// asked again; its `report` holds only its usage.
    pub resumed: bool,
}

/// A chunk an earlier run finished, given back through [`DocumentSource::resume`](crate::extract::DocumentSource::resume) so it is not asked
/// again. Serializable, so a caller can keep it on disk between runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct DoneChunk {
    /// Its pass, from 0.
    pub pass: u32,
    /// Its byte range in the document: with the pass, what identifies it (the same document, split with
    /// the same settings, gives the same chunks).
    pub bytes: Range<usize>,
    /// Its items before the merge: each value with its spans at document offsets.
    pub items: Vec<(Value, Vec<Span>)>,
    /// The tokens it used.
    pub usage: Usage,
    /// The confidence of its items' leaves, by JSON pointer from the item's position in `items`
    /// (empty unless confidence was asked for).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub confidence: BTreeMap<String, f32>,
}

impl DoneChunk {
    /// A finished chunk's record, from its report and items (as [`DocumentSource::on_chunk`](crate::extract::DocumentSource::on_chunk) hands
    /// them to its callback).
    pub fn new(report: &ChunkReport, items: &[Grounded<Value>]) -> Self {
        DoneChunk {
            pass: report.pass,
            bytes: report.bytes.clone(),
            items: items
                .iter()
                .map(|item| (item.value.clone(), item.spans.clone()))
                .collect(),
            usage: report.report.usage,
            confidence: report.report.confidence.clone(),
        }
    }
}

//! Many values from one answer: JSON Lines and everything models write instead of it.
//!
//! The one-shot functions feed the whole text to the incremental decoder and finish it, so they
//! yield exactly what [`super::LineDecoder`] yields for the same bytes, however those are chunked.
//! A typed text whose every line is one clean value skips the framing and goes line by line
//! straight to `T`; the decoder would find exactly those items in it.

use super::decoder::Reader;
use super::typed;
use super::{LineDecoder, LineEvent, Lines, ParseOptions};
use crate::schema::plan::Plan;
use crate::schema::Schema;
use crate::schema::SchemaSet;
use serde_json::Value;

/// Parses many values of `T` (JSON Lines, fenced, pretty-printed, an array or an `{"items": [...]}` wrapper).
///
/// ```
/// use llm_extract::{Schema, parse::lines_from_str, schema::SchemaSet};
/// use serde_json::json;
/// use std::sync::OnceLock;
///
/// #[derive(serde::Deserialize)]
/// struct A { a: i32 }
/// impl Schema for A {
///     fn schema() -> &'static SchemaSet {
///         static S: OnceLock<SchemaSet> = OnceLock::new();
///         S.get_or_init(|| SchemaSet::new("A", json!({"type": "object",
///             "properties": {"a": {"type": "integer"}}, "required": ["a"], "additionalProperties": false})))
///     }
/// }
///
/// let lines = lines_from_str::<A>("```jsonl\n{\"a\":1}\nNote: one more\n{\"a\":2}\n{\"a\":");
/// assert_eq!(lines.items.iter().map(|i| i.a).collect::<Vec<_>>(), [1, 2]);
/// assert_eq!(lines.skipped.len(), 2); // the prose line and the cut-off last line
/// ```
pub fn lines_from_str<T: Schema>(text: &str) -> Lines<T> {
    lines_from_str_with(text, &ParseOptions::default())
}

/// Parses many values of `T` with options.
pub fn lines_from_str_with<T: Schema>(text: &str, options: &ParseOptions) -> Lines<T> {
    let reader = Reader::<T>::typed(options);
    let clean = reader
        .plan()
        .filter(|plan| plan.closed())
        .and_then(|plan| clean_lines::<T>(text, plan, options.max_frame_bytes));
    if let Some(items) = clean {
        return Lines {
            items,
            skipped: Vec::new(),
        };
    }
    collect(LineDecoder::<T>::with_options(*options).decode_all(text.as_bytes()))
}

/// The items and the skipped lines of `events`.
fn collect<T>(events: Vec<LineEvent<T>>) -> Lines<T> {
    let mut lines = Lines::default();
    for event in events {
        match event {
            LineEvent::Item(item) => lines.items.push(item.value),
            LineEvent::Skipped(skipped) => lines.skipped.push(skipped),
        }
    }
    lines
}

/// The items of `text` when every line is blank or one clean JSON object that the plan accepts
/// (straight from its text to `T`); `None` sends the whole text through the decoder, which would
/// find exactly these items in such a text. The plan's objects are closed, so a line holding an
/// `{"items": [...]}` wrapper is never taken for an item here.
fn clean_lines<T: Schema>(text: &str, plan: &Plan, max_frame: usize) -> Option<Vec<T>> {
    let mut items = Vec::new();
    for line in text.split('\n') {
        // What the decoder passes over between values.
        if line.bytes().all(|b| matches!(b, b' ' | b'\t' | b'\r' | 0)) {
            continue;
        }
        if line.len() > max_frame {
            return None;
        }
        items.push(typed::read::<T>(line, Some(plan))?);
    }
    Some(items)
}

/// Parses many values against a runtime schema, returning validated JSON.
pub fn lines_from_str_value(
    text: &str,
    schema: &SchemaSet,
    options: &ParseOptions,
) -> Lines<Value> {
    collect(LineDecoder::with_schema(schema, *options).decode_all(text.as_bytes()))
}

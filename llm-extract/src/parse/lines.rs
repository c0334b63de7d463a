//! Many values from one answer: JSON Lines and everything models write instead of it.
//!
//! The one-shot functions feed the whole text to the incremental decoder and finish it, so they
//! yield exactly what [`super::LineDecoder`] yields for the same bytes, however those are chunked.

use super::decoder::{Typed, ValueDecoder, ValueEvent};
use super::{LineEvent, Lines, ParseOptions};
use crate::schema::SchemaSet;
use crate::Extract;
use serde_json::Value;

/// Parses many values of `T` (JSON Lines, fenced, pretty-printed, an array or an `{"items": [...]}` wrapper).
///
/// ```
/// use llm_extract::{parse_lines, Extract, SchemaSet};
/// use serde_json::json;
/// use std::sync::OnceLock;
///
/// #[derive(serde::Deserialize)]
/// struct A { a: i32 }
/// impl Extract for A {
///     fn schema() -> &'static SchemaSet {
///         static S: OnceLock<SchemaSet> = OnceLock::new();
///         S.get_or_init(|| SchemaSet::new("A", json!({"type": "object",
///             "properties": {"a": {"type": "integer"}}, "required": ["a"], "additionalProperties": false})))
///     }
/// }
///
/// let lines = parse_lines::<A>("```jsonl\n{\"a\":1}\nNote: one more\n{\"a\":2}\n{\"a\":");
/// assert_eq!(lines.items.iter().map(|i| i.a).collect::<Vec<_>>(), [1, 2]);
/// assert_eq!(lines.skipped.len(), 2); // the prose line and the cut-off last line
/// ```
pub fn parse_lines<T: Extract>(text: &str) -> Lines<T> {
    parse_lines_with(text, &ParseOptions::default())
}

/// Parses many values of `T` with options.
pub fn parse_lines_with<T: Extract>(text: &str, options: &ParseOptions) -> Lines<T> {
    let mut sink = Typed::<T>::new(options);
    let mut decoder = ValueDecoder::new(T::schema(), *options);
    decoder.feed_with(text.as_bytes(), &mut sink);
    decoder.finish_with(&mut sink);
    let mut lines = Lines::default();
    for event in sink.events {
        match event {
            LineEvent::Item(item) => lines.items.push(item.value),
            LineEvent::Skipped(skipped) => lines.skipped.push(skipped),
        }
    }
    lines
}

/// Parses many values against a runtime schema, returning validated JSON.
pub fn parse_lines_value(text: &str, schema: &SchemaSet, options: &ParseOptions) -> Lines<Value> {
    let mut decoder = ValueDecoder::new(schema, *options);
    let mut events = decoder.feed(text.as_bytes());
    events.extend(decoder.finish());
    let mut lines = Lines::default();
    for event in events {
        match event {
            ValueEvent::Item(item) => lines.items.push(item.json),
            ValueEvent::Skipped(skipped) => lines.skipped.push(skipped),
        }
    }
    lines
}

//! Token counts of the format instructions of types (a)-(e) against their minified JSON Schemas,
//! with OpenAI's o200k_base tokenizer (embedded in `tiktoken-rs`, so this works offline).
//!
//! The headline is the types as specified ([`as_specified`]): no doc comments, so
//! the ratio measures the notation, which is what the goal (at most 40%) is about. The
//! same types with a doc comment on every item (`tests/common/types.rs`) are reported beside
//! them: a description costs about as many tokens as a comment as it does inside the schema, so
//! descriptions pull the ratio towards 1 whatever the notation, and no notation reaches 40% with
//! them (for (a) the text of its descriptions alone is 41% of the schema).
//!
//! Shared by `tests/extract/instruction_tokens.rs` and `benches/instructions.rs`; each compiles this module
//! on its own and uses only part of it.
#![allow(dead_code)]

pub mod as_specified;

use crate::common::types as described;
use llm_extract::Schema;
use serde_json::{Map, Value};
use std::fmt::Write as _;

/// The token counts of one type.
pub struct Row {
    /// Which type: "(a) Extracted", ...
    pub name: &'static str,
    /// The generic schema of the type as specified.
    pub specified: &'static Value,
    /// The generic schema of the type with doc comments.
    pub described: &'static Value,
    /// The `format_instructions()` of the type as specified.
    pub specified_instructions: &'static str,
    /// The minified generic schema of the type as specified.
    pub schema: usize,
    /// Its `format_instructions()`.
    pub one: usize,
    /// The minified generic schema of the type with doc comments.
    pub described_schema: usize,
    /// Its `format_instructions()`.
    pub described_one: usize,
    /// The minified line schema of the type with doc comments.
    pub described_line_schema: usize,
    /// Its `line_format_instructions()`.
    pub described_lines: usize,
}

impl Row {
    /// Instructions / schema of the type as specified: the goal.
    pub fn ratio(&self) -> f64 {
        self.one as f64 / self.schema as f64
    }

    /// Instructions / schema of the type with doc comments, for one value.
    pub fn described_ratio(&self) -> f64 {
        self.described_one as f64 / self.described_schema as f64
    }

    /// Instructions / schema of the type with doc comments, for JSON Lines.
    pub fn described_lines_ratio(&self) -> f64 {
        self.described_lines as f64 / self.described_line_schema as f64
    }
}

/// Tokens of `text` under o200k_base.
pub fn count(text: &str) -> usize {
    tiktoken_rs::o200k_base_singleton()
        .encode_ordinary(text)
        .len()
}

fn minified(schema: &Value) -> String {
    serde_json::to_string(schema).expect("a JSON value serializes")
}

/// `schema` without `description` keywords (a property named "description" stays).
pub fn without_descriptions(schema: &Value) -> Value {
    match schema {
        Value::Object(map) => {
            let mut out = Map::new();
            for (key, value) in map {
                match key.as_str() {
                    "description" => {}
                    "properties" => {
                        let properties = value.as_object().into_iter().flatten();
                        let stripped = properties
                            .map(|(name, sub)| (name.clone(), without_descriptions(sub)))
                            .collect();
                        out.insert(key.clone(), Value::Object(stripped));
                    }
                    _ => {
                        out.insert(key.clone(), without_descriptions(value));
                    }
                }
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(without_descriptions).collect()),
        other => other.clone(),
    }
}

/// The counts of type `T` as specified and of `D`, the same type with doc comments.
fn row<T: Schema, D: Schema>(name: &'static str) -> Row {
    Row {
        name,
        specified: T::json_schema(),
        described: D::json_schema(),
        specified_instructions: T::format_instructions(),
        schema: count(&minified(T::json_schema())),
        one: count(T::format_instructions()),
        described_schema: count(&minified(D::json_schema())),
        described_one: count(D::format_instructions()),
        described_line_schema: count(&minified(D::json_schema())),
        described_lines: count(D::line_format_instructions()),
    }
}

/// The counts of types (a)-(e).
pub fn rows() -> Vec<Row> {
    use as_specified as bare;
    vec![
        row::<bare::Extracted, described::Extracted>("(a) Extracted"),
        row::<bare::Fact, described::Fact>("(b) Fact"),
        row::<bare::OntologyItem, described::OntologyItem>("(c) OntologyItem"),
        row::<bare::ConversationTurn, described::ConversationTurn>("(d) ConversationTurn"),
        row::<bare::Sentiment, described::Sentiment>("(e) Sentiment"),
    ]
}

/// The counts as a table.
pub fn table(rows: &[Row]) -> String {
    let mut out = String::from(
        "o200k_base tokens    as specified: schema  instructions  ratio | with doc comments: schema  instructions  ratio | line schema  line instructions  ratio\n",
    );
    for row in rows {
        let _ = writeln!(
            out,
            "{:<20} {:>20} {:>13} {:>6.2} | {:>25} {:>13} {:>6.2} | {:>11} {:>18} {:>6.2}",
            row.name,
            row.schema,
            row.one,
            row.ratio(),
            row.described_schema,
            row.described_one,
            row.described_ratio(),
            row.described_line_schema,
            row.described_lines,
            row.described_lines_ratio(),
        );
    }
    out
}

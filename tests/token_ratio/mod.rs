//! Token counts of the format instructions of types (a)-(e) against their minified JSON Schemas,
//! with OpenAI's o200k_base tokenizer (embedded in `tiktoken-rs`, so this works offline).
//!
//! Shared by `tests/instruction_tokens.rs` and `benches/instructions.rs`.

use crate::common::types::*;
use llm_extract::{Extract, SchemaSet};
use serde_json::{Map, Value};
use std::fmt::Write as _;

/// The token counts of one type.
pub struct Row {
    /// Which type: "(a) Extracted", ...
    pub name: &'static str,
    /// The minified generic schema.
    pub schema: usize,
    /// `format_instructions()`.
    pub one: usize,
    /// The minified line schema.
    pub line_schema: usize,
    /// `line_format_instructions()`.
    pub lines: usize,
    /// The minified generic schema with every `description` removed.
    pub bare_schema: usize,
    /// `format_instructions()` of that schema.
    pub bare_one: usize,
}

impl Row {
    /// Instructions / schema, for one value.
    pub fn one_ratio(&self) -> f64 {
        self.one as f64 / self.schema as f64
    }

    /// Instructions / schema, for JSON Lines.
    pub fn lines_ratio(&self) -> f64 {
        self.lines as f64 / self.line_schema as f64
    }

    /// Instructions / schema without descriptions: what the notation itself costs.
    pub fn bare_ratio(&self) -> f64 {
        self.bare_one as f64 / self.bare_schema as f64
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
fn without_descriptions(schema: &Value) -> Value {
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

fn row<T: Extract>(name: &'static str) -> Row {
    let bare = SchemaSet::new(name, without_descriptions(T::json_schema()));
    Row {
        name,
        schema: count(&minified(T::json_schema())),
        one: count(T::format_instructions()),
        line_schema: count(&minified(T::line_schema())),
        lines: count(T::line_format_instructions()),
        bare_schema: count(&minified(bare.generic())),
        bare_one: count(bare.format_instructions()),
    }
}

/// The counts of types (a)-(e).
pub fn rows() -> Vec<Row> {
    vec![
        row::<Extracted>("(a) Extracted"),
        row::<Fact>("(b) Fact"),
        row::<OntologyItem>("(c) OntologyItem"),
        row::<ConversationTurn>("(d) ConversationTurn"),
        row::<Sentiment>("(e) Sentiment"),
    ]
}

/// The counts as a table.
pub fn table(rows: &[Row]) -> String {
    let mut out = String::from(
        "o200k_base tokens   schema  instructions  ratio | line schema  line instructions  ratio | no descriptions: schema  instructions  ratio\n",
    );
    for row in rows {
        let _ = writeln!(
            out,
            "{:<20} {:>6} {:>13} {:>6.2} | {:>11} {:>18} {:>6.2} | {:>23} {:>13} {:>6.2}",
            row.name,
            row.schema,
            row.one,
            row.one_ratio(),
            row.line_schema,
            row.lines,
            row.lines_ratio(),
            row.bare_schema,
            row.bare_one,
            row.bare_ratio(),
        );
    }
    out
}

//! The type the fuzz targets parse into: strings, numbers, an enum, an option, a nested object, an
//! array, so every path of the parser (coercion included) is reachable.

use llm_extract::{Schema, schema::SchemaSet};
use serde::Deserialize;
use serde_json::json;
use std::sync::OnceLock;

/// The fuzzed type.
#[derive(Debug, Deserialize)]
pub struct Rec {
    pub name: String,
    pub n: i32,
    pub score: Option<f64>,
    pub kind: Kind,
    pub tags: Vec<String>,
    pub sub: Option<Sub>,
}

/// A fieldless enum.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Alpha,
    Beta,
}

/// A nested object.
#[derive(Debug, Deserialize)]
pub struct Sub {
    pub ok: bool,
}

impl Schema for Rec {
    fn schema() -> &'static SchemaSet {
        static S: OnceLock<SchemaSet> = OnceLock::new();
        S.get_or_init(|| {
            SchemaSet::new(
                "Rec",
                json!({
                    "type": "object",
                    "properties": {
                        "name": {"type": "string", "maxLength": 64},
                        "n": {"type": "integer", "minimum": i32::MIN, "maximum": i32::MAX},
                        "score": {"type": ["number", "null"]},
                        "kind": {"type": "string", "enum": ["alpha", "beta"]},
                        "tags": {"type": "array", "items": {"type": "string"}},
                        "sub": {"anyOf": [
                            {"type": "object", "properties": {"ok": {"type": "boolean"}},
                             "required": ["ok"], "additionalProperties": false},
                            {"type": "null"}
                        ]}
                    },
                    "required": ["name", "n", "kind", "tags"],
                    "additionalProperties": false,
                    "x-aliases": {"title": "name"}
                }),
            )
        })
    }
}

//! Small types for runtime tests, with `Extract` written by hand (what the derive generates), so these
//! tests depend only on the runtime.

use llm_extract::{schema::SchemaSet, Extract, Schema};
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::sync::OnceLock;

/// One value: a person.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
pub struct Person {
    pub name: String,
    pub age: u8,
}

impl Extract for Person {}

impl Schema for Person {
    fn schema() -> &'static SchemaSet {
        static SET: OnceLock<SchemaSet> = OnceLock::new();
        SET.get_or_init(|| {
            SchemaSet::new(
                "Person",
                json!({
                    "type": "object",
                    "properties": {
                        "name": {"type": "string", "description": "Full name"},
                        "age": {"type": "integer", "minimum": 0, "maximum": 150}
                    },
                    "required": ["name", "age"],
                    "additionalProperties": false
                }),
            )
        })
    }
}

/// One item of a list: an entity.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Deserialize, Serialize)]
pub struct Entity {
    pub name: String,
    pub kind: String,
}

impl Extract for Entity {}

impl Schema for Entity {
    fn schema() -> &'static SchemaSet {
        static SET: OnceLock<SchemaSet> = OnceLock::new();
        SET.get_or_init(|| SchemaSet::new("Entity", entity_schema()))
    }
}

/// The schema of [`Entity`], for untyped tests.
pub fn entity_schema() -> serde_json::Value {
    json!({
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "kind": {"type": "string", "enum": ["person", "company", "place"]}
        },
        "required": ["name", "kind"],
        "additionalProperties": false
    })
}

/// An entity as one compact JSON line.
pub fn entity_line(name: &str, kind: &str) -> String {
    json!({"name": name, "kind": kind}).to_string()
}

/// An entity value.
pub fn entity(name: &str, kind: &str) -> Entity {
    Entity {
        name: name.into(),
        kind: kind.into(),
    }
}

//! One compiled validator per schema; errors carry the JSON path of every violation.
//!
//! OWNER: schema helper (issue 2/3). Placeholder until implemented.

use crate::error::SchemaError;
use serde_json::Value;

/// A compiled JSON Schema validator.
pub struct Validator {
    inner: jsonschema::Validator,
}

/// One violation: where, and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// JSON pointer into the instance (e.g. `/analysis/subjects/0/name`).
    pub path: String,
    /// What is wrong, for a person.
    pub message: String,
}

impl Validator {
    /// Compiles `schema` (draft 2020-12).
    pub fn new(schema: &Value) -> Result<Self, SchemaError> {
        let inner = jsonschema::draft202012::new(schema).map_err(|e| SchemaError::Invalid {
            path: e.schema_path().to_string(),
            message: e.to_string(),
        })?;
        Ok(Validator { inner })
    }

    /// Every violation of `instance`; empty when it is valid.
    pub fn violations(&self, instance: &Value) -> Vec<Violation> {
        self.inner
            .iter_errors(instance)
            .map(|e| Violation {
                path: e.instance_path().to_string(),
                message: e.to_string(),
            })
            .collect()
    }

    /// Whether `instance` is valid.
    pub fn is_valid(&self, instance: &Value) -> bool {
        self.inner.is_valid(instance)
    }
}

//! [`ParseError`]: why one value could not be had from an answer.

use crate::error::SchemaError;
use crate::validate::Violation;

/// Parsing failed. Every variant carries the raw text.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum ParseError {
    /// No JSON was found.
    #[error("no JSON found in the answer ({} bytes of text); ask the model to answer with a JSON value", .raw.len())]
    NoJson {
        /// The raw text.
        raw: String,
    },
    /// The JSON is broken beyond what the lenient parser fixes.
    #[error("the answer's JSON is broken at byte {offset}: {message}")]
    Syntax {
        /// What is wrong.
        message: String,
        /// Byte offset in the raw text.
        offset: usize,
        /// The raw text.
        raw: String,
    },
    /// The JSON does not match the schema (even after schema-guided fixes).
    #[error("the answer's JSON does not match the schema: {}", list(.violations))]
    Schema {
        /// Every violation with its JSON path.
        violations: Vec<Violation>,
        /// The raw text.
        raw: String,
    },
    /// The JSON matches the schema but serde could not build the type from it.
    #[error("the answer's JSON does not deserialize at {}: {message}", path_or_root(.path))]
    Deserialize {
        /// Where (a serde path such as `items[0].name`; empty at the root).
        path: String,
        /// serde's message.
        message: String,
        /// The raw text.
        raw: String,
    },
    /// The answer was cut off before its JSON value closed.
    #[error("the answer was cut off at byte {offset} before its JSON value closed; raise the token limit, or enable salvage to keep what is complete")]
    Truncated {
        /// Where the input ended.
        offset: usize,
        /// The raw text.
        raw: String,
    },
    /// Several different values in the answer fit the schema.
    #[error("the answer holds {} different JSON values that all fit the schema; ask for exactly one", .candidates.len())]
    Ambiguous {
        /// The raw text of each candidate.
        candidates: Vec<String>,
        /// The raw text.
        raw: String,
    },
    /// The JSON matches the schema, but a [check](crate::check) found hard issues.
    #[error("the answer fails its checks: {}", list(.issues))]
    Check {
        /// Every hard issue with its JSON path.
        issues: Vec<Violation>,
        /// The raw text.
        raw: String,
    },
    /// The schema itself does not compile, so nothing can be validated against it.
    #[error("the schema cannot be used for validation: {source}")]
    InvalidSchema {
        /// Why.
        source: SchemaError,
        /// The raw text.
        raw: String,
    },
}

impl ParseError {
    /// The raw text that failed.
    pub fn raw(&self) -> &str {
        match self {
            ParseError::NoJson { raw }
            | ParseError::Syntax { raw, .. }
            | ParseError::Schema { raw, .. }
            | ParseError::Deserialize { raw, .. }
            | ParseError::Truncated { raw, .. }
            | ParseError::Ambiguous { raw, .. }
            | ParseError::Check { raw, .. }
            | ParseError::InvalidSchema { raw, .. } => raw,
        }
    }

    /// The schema violations, when the error is [`ParseError::Schema`].
    pub fn violations(&self) -> &[Violation] {
        match self {
            ParseError::Schema { violations, .. } => violations,
            _ => &[],
        }
    }
}

/// `at /a: message; at /b: message`.
pub(crate) fn list(violations: &[Violation]) -> String {
    let mut out = String::new();
    for (i, v) in violations.iter().enumerate() {
        if i > 0 {
            out.push_str("; ");
        }
        out.push_str("at ");
        out.push_str(if v.path.is_empty() {
            "the root"
        } else {
            &v.path
        });
        out.push_str(": ");
        out.push_str(&v.message);
    }
    out
}

fn path_or_root(path: &str) -> &str {
    if path.is_empty() || path == "." {
        "the root"
    } else {
        path
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_what_to_do() {
        let e = ParseError::Truncated {
            offset: 7,
            raw: "{\"a\":\"x".into(),
        };
        assert!(e.to_string().contains("byte 7"));
        assert!(e.to_string().contains("salvage"));
        assert_eq!(e.raw(), "{\"a\":\"x");
        let e = ParseError::Schema {
            violations: vec![Violation {
                path: String::new(),
                message: "m".into(),
            }],
            raw: String::new(),
        };
        assert!(e.to_string().ends_with("at the root: m"), "{e}");
        assert_eq!(e.violations().len(), 1);
        let e = ParseError::Deserialize {
            path: ".".into(),
            message: "bad".into(),
            raw: String::new(),
        };
        assert!(e.to_string().contains("at the root: bad"));
    }
}

//! Worked examples: a text and the answer it should give, checked against the schema when made and shown
//! to the model as earlier turns of the conversation, in the exact format of the answer asked for.
//!
//! Small models follow an example far better than an instruction ("settled" means paid, the customer is
//! not the invoice number). An [`Example`] is made from a typed value ([`Example::new`], serialized
//! through the type's `Serialize`) or from JSON for a runtime schema ([`Example::value`]); either way
//! it is validated against the schema, and for a type also read back through its `Deserialize`, so an
//! example the answer parser would reject is an error at once, never a silently misleading prompt.
//!
//! In the request each example is one user turn (the prompt template filled with the example's text)
//! and one assistant turn (the answer), placed after the system prompt and before the real input. The
//! model's answer to the real input is the only thing parsed, so an example can never come back as a
//! result; what it can do is be copied by a weak model, which is why the system prompt says the
//! examples are examples.

use crate::error::SchemaError;
use crate::extract::Extract;
use crate::schema::SchemaSet;
use crate::schema::Shape;
use crate::validate::Violation;
use serde::Serialize;
use serde_json::Value;

/// A worked example: a text and the value (or, for the many-item methods, the items) it holds.
///
/// ```
/// use llm_extract::extract::Example;
/// use llm_extract::{Extract, Schema};
/// # use llm_extract::schema::SchemaSet;
/// # use serde_json::json;
/// # use std::sync::OnceLock;
///
/// #[derive(serde::Serialize, serde::Deserialize)]
/// struct Paid {
///     paid: bool,
/// }
/// # impl Schema for Paid {
/// #     fn schema() -> &'static SchemaSet {
/// #         static SET: OnceLock<SchemaSet> = OnceLock::new();
/// #         SET.get_or_init(|| SchemaSet::new("Paid", json!({
/// #             "type": "object", "properties": {"paid": {"type": "boolean"}},
/// #             "required": ["paid"], "additionalProperties": false
/// #         })))
/// #     }
/// # }
/// impl Extract for Paid {}
///
/// let example = Example::new("Invoice 12 was settled on Monday.", Paid { paid: true })?;
/// assert_eq!(example.answer_json(), vec![json!({"paid": true})]);
/// # Ok::<(), llm_extract::extract::ExampleError>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Example {
    text: String,
    answer: Vec<Value>,
    items: bool,
    schema_name: String,
    schema: Value,
}

/// An example could not be made: its value does not fit the schema, or its text is empty.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ExampleError {
    /// The example's text is empty (or only whitespace): it would teach nothing.
    #[error("an example for `{schema}` has an empty text; give the text the value was read from")]
    EmptyText {
        /// The schema's name.
        schema: String,
    },
    /// The value did not serialize to JSON.
    #[error("the example value for `{schema}` could not be serialized: {message}")]
    Serialize {
        /// The schema's name.
        schema: String,
        /// serde's message.
        message: String,
    },
    /// The value (or one item) does not satisfy the schema.
    #[error("the example value for `{schema}` does not satisfy its schema ({}); the value: {value}", list(.violations))]
    Invalid {
        /// The schema's name.
        schema: String,
        /// The value as compact JSON (the item, for an item list).
        value: String,
        /// Each violation, with its path in the value.
        violations: Vec<Violation>,
    },
    /// The value satisfies the schema but does not read back into the type (its `Serialize` and
    /// `Deserialize` disagree), so the model would be shown an answer the parser rejects.
    #[error("the example value for `{schema}` does not read back into the type (at {path}: {message}); the value: {value}")]
    RoundTrip {
        /// The schema's name.
        schema: String,
        /// The value as compact JSON.
        value: String,
        /// Where in the value.
        path: String,
        /// serde's message.
        message: String,
    },
    /// The schema itself does not compile.
    #[error("the example for `{schema}` cannot be checked: {source}")]
    Schema {
        /// The schema's name.
        schema: String,
        /// Why the schema does not compile.
        source: SchemaError,
    },
}

fn list(violations: &[Violation]) -> String {
    violations
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

impl Example {
    /// An example of one value of `T`: `value` is serialized through `T`'s `Serialize`, validated
    /// against `T`'s schema and read back through its `Deserialize`.
    ///
    /// Used by every method: as the whole answer by `extract`, as a one-line answer by `extract_all`
    /// and `extract_stream`.
    pub fn new<T: Extract + Serialize>(
        text: impl Into<String>,
        value: T,
    ) -> Result<Self, ExampleError> {
        Self::typed::<T>(text.into(), std::iter::once(value), false)
    }

    /// An example of a text holding `items` (possibly none), for `extract_all` and `extract_stream`
    /// only: `extract` leaves it out. Each item is checked as in [`Example::new`].
    pub fn items<T: Extract + Serialize>(
        text: impl Into<String>,
        items: impl IntoIterator<Item = T>,
    ) -> Result<Self, ExampleError> {
        Self::typed::<T>(text.into(), items, true)
    }

    /// An example of one value of a runtime schema (e.g. a
    /// [`DynamicSchema`](crate::schema::DynamicSchema)'s [`schema_set`](crate::schema::DynamicSchema::schema_set)),
    /// validated against it.
    pub fn value(
        schema: &SchemaSet,
        text: impl Into<String>,
        value: Value,
    ) -> Result<Self, ExampleError> {
        Self::untyped(schema, text.into(), vec![value], false)
    }

    /// An example of a text holding `items` of a runtime schema, for the many-item methods only.
    pub fn value_items(
        schema: &SchemaSet,
        text: impl Into<String>,
        items: Vec<Value>,
    ) -> Result<Self, ExampleError> {
        Self::untyped(schema, text.into(), items, true)
    }

    fn typed<T: Extract + Serialize>(
        text: String,
        values: impl IntoIterator<Item = T>,
        items: bool,
    ) -> Result<Self, ExampleError> {
        let set = T::schema();
        let name = || set.name().to_owned();
        let mut answer = Vec::new();
        for value in values {
            let json = serde_json::to_value(&value).map_err(|e| ExampleError::Serialize {
                schema: name(),
                message: e.to_string(),
            })?;
            answer.push(json);
        }
        let example = Self::untyped(set, text, answer, items)?;
        for json in &example.answer {
            if let Err((path, message)) = crate::parse::deserialize::<T>(json) {
                return Err(ExampleError::RoundTrip {
                    schema: name(),
                    value: json.to_string(),
                    path,
                    message,
                });
            }
        }
        Ok(example)
    }

    fn untyped(
        set: &SchemaSet,
        text: String,
        answer: Vec<Value>,
        items: bool,
    ) -> Result<Self, ExampleError> {
        let name = || set.name().to_owned();
        if text.trim().is_empty() {
            return Err(ExampleError::EmptyText { schema: name() });
        }
        let validator = set.validator().map_err(|source| ExampleError::Schema {
            schema: name(),
            source,
        })?;
        for json in &answer {
            let violations = validator.violations(json);
            if !violations.is_empty() {
                return Err(ExampleError::Invalid {
                    schema: name(),
                    value: json.to_string(),
                    violations,
                });
            }
        }
        Ok(Example {
            text,
            answer,
            items,
            schema_name: set.name().to_owned(),
            schema: set.generic().clone(),
        })
    }

    /// The text the answer was read from.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The answer as validated JSON: one value, or the items.
    pub fn answer_json(&self) -> Vec<Value> {
        self.answer.clone()
    }

    /// Whether this is an item list (made by [`Example::items`] or [`Example::value_items`]), which only
    /// the many-item methods use.
    pub fn is_items(&self) -> bool {
        self.items
    }

    /// The same example with another text (a prompt config's example once filled into the template).
    pub(crate) fn with_text(&self, text: String) -> Example {
        Example {
            text,
            ..self.clone()
        }
    }

    /// Whether this example was checked against `set` (same name, same schema).
    pub(crate) fn fits(&self, set: &SchemaSet) -> bool {
        self.schema_name == set.name() && &self.schema == set.generic()
    }

    /// Whether this example can stand for an answer of `shape`.
    pub(crate) fn usable_for(&self, shape: Shape) -> bool {
        shape != Shape::One || !self.items
    }

    /// The assistant turn: the answer written exactly as the model is asked to write it, on one line
    /// per value with `", "` and `": "` between tokens ([`one_line`]).
    pub(crate) fn answer_turn(&self, shape: Shape) -> String {
        let lines: Vec<String> = self.answer.iter().map(one_line).collect();
        match shape {
            Shape::One => lines.join("\n"),
            Shape::Line => lines.join("\n"),
            Shape::List => format!("{{\"items\": [{}]}}", lines.join(", ")),
        }
    }
}

/// `value` on one line the way Python's `json.dumps` writes it (`{"a": 1, "b": [2, 3]}`): how the
/// embedded engine's grammar makes the model write, and the most common one-line JSON in a model's
/// training text. An example written the same way as the answer is followed far better: with compact
/// examples (`{"a":1}`, tokenized unlike the answer) the default 135M model scored fewer fields right
/// than with no examples at all (`BENCHMARKS.md`, field accuracy).
pub(crate) fn one_line(value: &Value) -> String {
    let mut out = Vec::new();
    let mut writer = serde_json::Serializer::with_formatter(&mut out, OneLine);
    if value.serialize(&mut writer).is_err() {
        return value.to_string();
    }
    String::from_utf8(out).unwrap_or_else(|_| value.to_string())
}

/// serde_json's compact output with a space after each `,` and `:`.
struct OneLine;

/// `, ` before every element but the first.
fn separator<W: ?Sized + std::io::Write>(writer: &mut W, first: bool) -> std::io::Result<()> {
    if first {
        Ok(())
    } else {
        writer.write_all(b", ")
    }
}

impl serde_json::ser::Formatter for OneLine {
    fn begin_array_value<W: ?Sized + std::io::Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        separator(writer, first)
    }

    fn begin_object_key<W: ?Sized + std::io::Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        separator(writer, first)
    }

    fn begin_object_value<W: ?Sized + std::io::Write>(
        &mut self,
        writer: &mut W,
    ) -> std::io::Result<()> {
        writer.write_all(b": ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn contact() -> SchemaSet {
        SchemaSet::new(
            "Contact",
            json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string", "maxLength": 20},
                    "phone": {"type": ["string", "null"]}
                },
                "required": ["name", "phone"],
                "additionalProperties": false
            }),
        )
    }

    #[test]
    fn a_valid_value_renders_on_one_line_in_each_shape() {
        let set = contact();
        let one = Example::value(&set, "Call Ada.", json!({"name": "Ada", "phone": null})).unwrap();
        assert_eq!(
            one.answer_turn(Shape::One),
            r#"{"name": "Ada", "phone": null}"#
        );
        let many = Example::value_items(
            &set,
            "Ada and Bo.",
            vec![
                json!({"name": "Ada", "phone": null}),
                json!({"name": "Bo", "phone": "555"}),
            ],
        )
        .unwrap();
        assert_eq!(
            many.answer_turn(Shape::Line),
            "{\"name\": \"Ada\", \"phone\": null}\n{\"name\": \"Bo\", \"phone\": \"555\"}"
        );
        assert_eq!(
            many.answer_turn(Shape::List),
            r#"{"items": [{"name": "Ada", "phone": null}, {"name": "Bo", "phone": "555"}]}"#
        );
        assert!(one.usable_for(Shape::One) && one.usable_for(Shape::Line));
        assert!(!many.usable_for(Shape::One) && many.usable_for(Shape::List));
        assert!(one.fits(&set));
        assert!(!one.fits(&SchemaSet::new("Contact", json!({"type": "object"}))));
    }

    #[test]
    fn an_invalid_value_is_an_error_naming_the_violation() {
        let err = Example::value(&contact(), "Call Ada.", json!({"name": 3})).unwrap_err();
        let ExampleError::Invalid {
            schema, violations, ..
        } = &err
        else {
            panic!("{err:?}");
        };
        assert_eq!(schema, "Contact");
        assert!(
            violations.iter().any(|v| v.path == "/name"),
            "{violations:?}"
        );
        assert!(
            err.to_string().contains("does not satisfy its schema"),
            "{err}"
        );

        let long = "x".repeat(21);
        let err = Example::value_items(
            &contact(),
            "t",
            vec![
                json!({"name": "ok", "phone": null}),
                json!({"name": long, "phone": null}),
            ],
        )
        .unwrap_err();
        assert!(matches!(err, ExampleError::Invalid { .. }), "{err:?}");
    }

    #[test]
    fn an_empty_text_is_an_error() {
        let err = Example::value(&contact(), "  ", json!({"name": "Ada", "phone": null}));
        assert_eq!(
            err,
            Err(ExampleError::EmptyText {
                schema: "Contact".into()
            })
        );
    }
}

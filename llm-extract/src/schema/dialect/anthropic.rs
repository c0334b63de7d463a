//! [`Dialect::Anthropic`](crate::schema::Dialect::Anthropic): Anthropic structured outputs
//! (`output_config.format`, the beta `output_format`) and strict tool input schemas, and the
//! non-strict form (a tool without `strict`).
//!
//! Facts relied on, from Anthropic's structured-outputs documentation ("JSON Schema limitations",
//! <https://docs.claude.com/en/docs/build-with-claude/structured-outputs>):
//! - Supported: the basic types, `enum` (strings, numbers, booleans, null; no complex types), `const`,
//!   `anyOf` and `allOf` (with limits), `$ref`/`$defs`/`definitions` (no external references),
//!   `default`, `required`, `additionalProperties` set to `false`, string `format`s (`date-time`, `time`,
//!   `date`, `duration`, `email`, `hostname`, `uri`, `ipv4`, `ipv6`, `uuid`), array `minItems` of 0 or 1,
//!   `pattern` without back-references, look-arounds or word boundaries.
//! - Not supported: recursive schemas, numerical constraints (`minimum`, `maximum`, `multipleOf`, ...),
//!   string length constraints, array constraints beyond `minItems` 0/1, `additionalProperties` other
//!   than `false`.
//! - A tool without `strict` takes its `input_schema` as any JSON Schema, followed on a best-effort basis.
//!
//! So, strict: references are inlined and a recursion unrolled [`UNROLL_DEPTH`](super::UNROLL_DEPTH)
//! times (Anthropic takes no recursive schema); every object gets `"additionalProperties": false`, an
//! object that lists its properties and says nothing of others being closed (tightening); optional
//! properties stay optional; a `minItems` above 1 goes out as 1 (weaker, still true); a tuple goes out as
//! an array of the union of its item schemas; an `enum` listing objects or arrays goes out as the types
//! of its values. Dropped (checked locally): the unsupported keywords above, `oneOf` exclusivity when
//! the branches overlap, patterns it cannot compile, other `format`s.
//!
//! What the strict form cannot carry (an object with extra keys, any value, an array without `items`, a
//! recursion that cannot end within the unrolled depth) makes the lowering non-strict (the generic schema
//! minus `x-` keys, see [`Lowering::relaxed`](super::Lowering::relaxed)). A root that is not an object
//! goes out wrapped in one ([`Lowering::is_wrapped`](super::Lowering::is_wrapped)).

use super::strict::{Keyed, Keyword, Object, Strict};
use super::{child, json_type, Refs};
use crate::error::SchemaError;
use serde_json::Value;

/// Anthropic structured outputs.
pub(super) struct Anthropic;

impl Strict for Anthropic {
    const NAME: &'static str = "anthropic";
    const REFS: Refs = Refs::Unroll;
    /// The `format` it documents beyond those both strict providers do.
    const MORE_FORMATS: &'static [&'static str] = &["uri"];
    const ANY_HINT: &'static str = "give the field a concrete type instead of serde_json::Value";

    fn keyword(&self, at: Keyed<'_, '_>) -> Result<Keyword, SchemaError> {
        Ok(match at.key {
            "const" => Keyword::Keep,
            "enum" => {
                let values = at.value.as_array().cloned().unwrap_or_default();
                if values.iter().all(|v| !v.is_object() && !v.is_array()) {
                    Keyword::Keep
                } else {
                    if !at.map.contains_key("type") {
                        at.out.insert("type".into(), type_names(&values));
                    }
                    Keyword::Drop
                }
            }
            "pattern" if at.value.as_str().is_some_and(simple_pattern) => Keyword::Keep,
            "minItems" => {
                // Only 0 and 1 are accepted: a larger bound goes out as 1 (weaker, still true).
                let bound = at.value.as_u64().unwrap_or(0);
                at.out.insert(at.key.to_owned(), Value::from(bound.min(1)));
                if bound > 1 {
                    at.cx.drop(at.key, at.path);
                }
                Keyword::Written
            }
            "items" if !at.map.contains_key("prefixItems") => {
                let lowered = child(self, at.cx, at.value, &at.path.child(at.key))?;
                if lowered == Value::Bool(false) {
                    // Only the empty array, which no keyword Anthropic takes can say.
                    return Ok(Keyword::Never);
                }
                at.out.insert(at.key.to_owned(), lowered);
                Keyword::Written
            }
            // A tuple's rest, in the union its items go at.out as (see `prefixItems`).
            "items" => Keyword::Written,
            _ => Keyword::Drop,
        })
    }

    /// The properties the schema requires, among those sent; none when it lists none.
    fn required(&self, map: &Object, lowered: &Object) -> Option<Vec<Value>> {
        map.contains_key("required").then(|| {
            super::required_of(map)
                .into_iter()
                .filter(|name| lowered.contains_key(*name))
                .map(Value::from)
                .collect()
        })
    }
}

/// The JSON types of `values`, each once (one name alone, several as a list).
fn type_names(values: &[Value]) -> Value {
    let mut names: Vec<&str> = Vec::new();
    for name in values.iter().map(|v| json_type(&v)) {
        if !names.contains(&name) {
            names.push(name);
        }
    }
    if names.len() == 1 {
        Value::from(names[0])
    } else {
        Value::from(names)
    }
}

/// Whether a regular expression avoids what Anthropic's structured outputs cannot compile:
/// back-references, look-arounds and word boundaries.
fn simple_pattern(pattern: &str) -> bool {
    let mut chars = pattern.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('b' | 'B' | 'k') => return false,
                Some(digit) if digit.is_ascii_digit() && digit != '0' => return false,
                _ => {}
            },
            '(' if chars.peek() == Some(&'?') => {
                chars.next();
                if matches!(chars.peek(), Some('=' | '!' | '<')) {
                    return false;
                }
            }
            _ => {}
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::dialect::lower as lower_for;
    use crate::schema::dialect::tests::object_of as wrap;
    use crate::schema::dialect::Lowering;
    use crate::schema::Dialect;
    use serde_json::json;

    fn anthropic(schema: Value) -> Result<Lowering, SchemaError> {
        lower_for(&schema, Dialect::Anthropic)
    }

    #[test]
    fn closes_objects_keeps_optional_ones_and_drops_bounds() {
        let schema = json!({
            "type": "object",
            "properties": {
                "name": { "type": "string", "minLength": 1, "maxLength": 5, "pattern": "^a+$" },
                "word": { "type": "string", "pattern": "^\\bx(?=y)$" },
                "age": { "type": "integer", "minimum": 0, "maximum": 150 },
                "when": { "type": "string", "format": "date-time" },
                "tags": { "type": "array", "items": { "type": "string", "format": "color" }, "minItems": 3, "maxItems": 9 }
            },
            "required": ["name"],
            "additionalProperties": false,
            "x-aliases": { "n": "name" }
        });
        let lowered = anthropic(schema).unwrap();
        assert!(lowered.strict());
        assert_eq!(
            serde_json::to_string(lowered.schema()).unwrap(),
            json!({
                "type": "object",
                "properties": {
                    "name": { "type": "string", "pattern": "^a+$" },
                    "word": { "type": "string" },
                    "age": { "type": "integer" },
                    "when": { "type": "string", "format": "date-time" },
                    "tags": { "type": "array", "items": { "type": "string" }, "minItems": 1 }
                },
                "required": ["name"],
                "additionalProperties": false
            })
            .to_string()
        );
        assert_eq!(
            lowered.dropped_keywords(),
            [
                "format",
                "maxItems",
                "maxLength",
                "maximum",
                "minItems",
                "minLength",
                "minimum",
                "pattern"
            ]
        );
    }

    #[test]
    fn unrolls_recursion_to_the_documented_depth() {
        let list = json!({
            "type": "object",
            "properties": { "value": { "type": "integer" }, "next": { "anyOf": [{ "$ref": "#" }, { "type": "null" }] } },
            "required": ["value", "next"],
            "additionalProperties": false
        });
        let lowered = anthropic(list).unwrap();
        assert!(lowered.strict());
        let mut node = lowered.schema();
        for _ in 0..crate::schema::dialect::UNROLL_DEPTH {
            node = &node["properties"]["next"]["anyOf"][0];
            assert_eq!(node["type"], "object");
        }
        assert_eq!(
            node["properties"]["next"],
            json!({ "anyOf": [{ "type": "null" }] })
        );
        assert!(lowered.schema().get("$defs").is_none());
        assert_eq!(lowered.dropped_keywords(), ["$ref"]);
    }

    #[test]
    fn what_strict_cannot_carry_goes_out_non_strict() {
        for open in [
            json!({ "type": "object", "additionalProperties": { "type": "string" } }),
            json!({ "type": "object" }),
            json!({ "type": "array" }),
            json!({}),
        ] {
            let lowered = anthropic(wrap(open.clone())).unwrap();
            assert!(!lowered.strict(), "{open}");
            assert_eq!(lowered.schema(), &wrap(open));
        }
        let tree = json!({
            "type": "object",
            "properties": { "children": { "type": "array", "items": { "$ref": "#" } } },
            "required": ["children"],
            "additionalProperties": false
        });
        let lowered = anthropic(tree).unwrap();
        assert!(!lowered.strict());
        assert!(lowered.relaxed().unwrap().contains("recursion"));
    }

    #[test]
    fn tuples_enums_of_objects_and_one_of() {
        let lowered = anthropic(wrap(json!({ "type": "array", "prefixItems": [{ "type": "string" }, { "type": "integer" }] }))).unwrap();
        assert_eq!(
            lowered.schema()["properties"]["f"]["items"],
            json!({ "anyOf": [{ "type": "string" }, { "type": "integer" }] })
        );
        let lowered = anthropic(wrap(json!({ "enum": [{ "a": 1 }, [1]] }))).unwrap();
        assert_eq!(
            lowered.schema()["properties"]["f"],
            json!({ "type": ["object", "array"] })
        );
        assert_eq!(lowered.dropped_keywords(), ["enum"]);
        let lowered = anthropic(wrap(
            json!({ "oneOf": [{ "type": "number" }, { "type": "integer" }] }),
        ))
        .unwrap();
        assert_eq!(lowered.dropped_keywords(), ["oneOf"]);
    }

    #[test]
    fn wraps_a_root_that_is_not_an_object() {
        let lowered = anthropic(json!({ "type": "string" })).unwrap();
        assert!(lowered.is_wrapped() && lowered.strict());
        assert_eq!(
            lowered.schema()["properties"]["value"],
            json!({ "type": "string" })
        );
    }
}

//! [`Dialect::OpenAiStrict`](crate::schema::Dialect::OpenAiStrict): OpenAI structured outputs
//! (`response_format.json_schema` and function parameters) with `"strict": true`, and its non-strict form.
//!
//! Facts relied on, from OpenAI's structured-outputs guide ("Supported schemas",
//! <https://platform.openai.com/docs/guides/structured-outputs#supported-schemas>):
//! - Supported: `type` (string, number, boolean, integer, object, array, and lists with `"null"`),
//!   `enum`, `const`, `anyOf` (not at the root), `$defs` with `$ref`, recursion included (`#` and
//!   `#/$defs/...`), `description`; strings `pattern` and `format` (`date-time`, `time`, `date`,
//!   `duration`, `email`, `hostname`, `ipv4`, `ipv6`, `uuid`); numbers `multipleOf`, `maximum`,
//!   `exclusiveMaximum`, `minimum`, `exclusiveMinimum`; arrays `minItems`, `maxItems`.
//! - The root must be an object; every object lists all its properties in `required` and has
//!   `"additionalProperties": false`; at most 10 levels of nesting.
//! - Not supported in strict mode: `allOf`, `oneOf`, `not`, `if`/`then`/`else`, `dependentRequired`,
//!   `dependentSchemas`, `patternProperties`, `propertyNames`, `minProperties`/`maxProperties`,
//!   `prefixItems`, `uniqueItems`, `minLength`/`maxLength`.
//! - With `"strict": false` the schema is followed on a best-effort basis, without those limits.
//!
//! So, strict: references are kept; a property the generic schema leaves optional is required and keeps
//! its schema (an `Option<T>` field already accepts `null`; a `#[serde(default)]` field must then be
//! given a value, which serde accepts); an object that lists its properties and says nothing of others is
//! closed (tightening); a scalar `const` goes out as a one-value `enum` with its type; a tuple goes out
//! as an array of the union of its item schemas (`prefixItems` dropped, its length bounds kept).
//! Dropped (checked locally): the unsupported keywords above and `format`s not listed.
//!
//! What the strict form cannot carry (an object with extra keys: `{"type": "object"}`, a map, a flattened
//! map; any value (`{}`); an array without `items`; deeper than [`OPENAI_MAX_DEPTH`]) makes the lowering
//! non-strict: the generic schema minus its `x-` keys, sent with `"strict": false`, with the reason in
//! [`Lowering::relaxed`](super::Lowering::relaxed). A root that is not an object goes out wrapped in
//! one, in either form ([`Lowering::is_wrapped`](super::Lowering::is_wrapped)).

use super::strict::{Keyed, Keyword, Object, Strict};
use super::{child, json_type, Refs};
use crate::error::SchemaError;
use serde_json::{Map, Value};

/// The deepest nesting of objects OpenAI's strict mode accepts.
pub const OPENAI_MAX_DEPTH: usize = 10;

/// OpenAI structured outputs, strict mode.
pub(super) struct OpenAiStrict;

impl Strict for OpenAiStrict {
    const NAME: &'static str = "openai-strict";
    const REFS: Refs = Refs::Keep;
    const MAX_DEPTH: Option<usize> = Some(OPENAI_MAX_DEPTH);
    const ANY_HINT: &'static str =
        "give the field a concrete type instead of serde_json::Value (a struct, an enum, a String holding JSON)";

    /// A scalar `const` (a tag) goes out as a one-value `enum` with its type: the form OpenAI
    /// documents, and the same set of values. Its type first.
    fn begin(&self, map: &Map<String, Value>, out: &mut Map<String, Value>) {
        if let (Some(value), false) = (scalar_const(map), map.contains_key("type")) {
            out.insert("type".to_owned(), Value::from(json_type(&value)));
        }
    }

    fn keyword(&self, at: Keyed<'_, '_>) -> Result<Keyword, SchemaError> {
        Ok(match at.key {
            "const" if scalar_const(at.map).is_some() => {
                at.out
                    .insert("enum".to_owned(), Value::Array(vec![at.value.clone()]));
                Keyword::Written
            }
            "enum" | "const" | "pattern" | "minimum" | "maximum" | "exclusiveMinimum"
            | "exclusiveMaximum" | "multipleOf" | "minItems" | "maxItems" => Keyword::Keep,
            "items" => {
                let lowered = child(self, at.cx, at.value, &at.path.child(at.key))?;
                at.out.insert(at.key.to_owned(), lowered);
                Keyword::Written
            }
            _ => Keyword::Drop,
        })
    }

    /// Every property, as OpenAI's strict mode requires (an optional one keeps its schema).
    fn required(&self, _map: &Object, lowered: &Object) -> Option<Vec<Value>> {
        Some(lowered.keys().cloned().map(Value::String).collect())
    }
}

/// The node's `const`, if it is a scalar (not an object or an array).
fn scalar_const(map: &Map<String, Value>) -> Option<&Value> {
    map.get("const")
        .filter(|value| !value.is_object() && !value.is_array())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::dialect::lower as lower_for;
    use crate::schema::dialect::tests::object_of as wrap;
    use crate::schema::dialect::Lowering;
    use crate::schema::Dialect;
    use serde_json::json;

    fn strict(schema: Value) -> Result<Lowering, SchemaError> {
        lower_for(&schema, Dialect::OpenAiStrict)
    }

    fn tagged() -> Value {
        json!({
            "oneOf": [
                { "type": "object", "properties": { "type": { "const": "definition" }, "entity": { "type": "string" } },
                  "required": ["type", "entity"], "additionalProperties": false },
                { "type": "object", "description": "A relation.",
                  "properties": { "type": { "const": "relationship" }, "subject": { "type": "string", "minLength": 1 } },
                  "required": ["type", "subject"], "additionalProperties": false }
            ]
        })
    }

    #[test]
    fn requires_every_property_and_keeps_optional_ones_as_they_are() {
        let schema = json!({
            "type": "object",
            "properties": {
                "name": { "type": "string", "minLength": 1, "maxLength": 5, "pattern": "^a+$" },
                "nick": { "type": ["string", "null"] },
                "count": { "type": "integer", "minimum": 0 },
                "mood": { "anyOf": [{ "type": "string", "enum": ["up", "down"] }, { "type": "null" }] }
            },
            "required": ["name"],
            "additionalProperties": false
        });
        let lowered = strict(schema).unwrap();
        assert!(lowered.strict());
        assert_eq!(
            serde_json::to_string(lowered.schema()).unwrap(),
            json!({
                "type": "object",
                "properties": {
                    "name": { "type": "string", "pattern": "^a+$" },
                    "nick": { "type": ["string", "null"] },
                    "count": { "type": "integer", "minimum": 0 },
                    "mood": { "anyOf": [{ "type": "string", "enum": ["up", "down"] }, { "type": "null" }] }
                },
                "required": ["name", "nick", "count", "mood"],
                "additionalProperties": false
            })
            .to_string()
        );
        assert_eq!(lowered.dropped_keywords(), ["maxLength", "minLength"]);
    }

    #[test]
    fn wraps_a_root_that_is_not_an_object() {
        for root in [tagged(), json!({ "type": "string", "enum": ["a"] })] {
            let lowered = strict(root.clone()).unwrap();
            assert!(lowered.is_wrapped() && lowered.strict());
            assert_eq!(lowered.schema()["required"], json!(["value"]));
            assert_eq!(lowered.schema()["additionalProperties"], false);
            assert_eq!(
                lowered.schema()["properties"]["value"],
                strict(wrap(root)).unwrap().schema()["properties"]["f"]
            );
        }
    }

    #[test]
    fn turns_tagged_variants_into_any_of() {
        let lowered = strict(wrap(tagged())).unwrap();
        let f = &lowered.schema()["properties"]["f"];
        assert_eq!(f["anyOf"].as_array().unwrap().len(), 2);
        assert_eq!(
            f["anyOf"][0]["properties"]["type"],
            json!({ "type": "string", "enum": ["definition"] })
        );
        assert_eq!(f["anyOf"][1]["description"], "A relation.");
        assert_eq!(lowered.dropped_keywords(), ["minLength"]);
    }

    #[test]
    fn overlapping_one_of_is_any_of_with_the_exclusivity_checked_locally() {
        let lowered = strict(wrap(
            json!({ "oneOf": [{ "type": "number" }, { "type": "integer" }] }),
        ))
        .unwrap();
        assert!(lowered.strict());
        assert_eq!(lowered.dropped_keywords(), ["oneOf"]);
        assert!(lowered.schema()["properties"]["f"].get("anyOf").is_some());
    }

    #[test]
    fn keeps_recursion_as_references() {
        let tree = json!({
            "type": "object",
            "properties": { "name": { "type": "string" }, "children": { "type": "array", "items": { "$ref": "#" } } },
            "required": ["name", "children"],
            "additionalProperties": false
        });
        let lowered = strict(tree).unwrap();
        assert!(lowered.strict());
        assert_eq!(
            lowered.schema()["properties"]["children"]["items"],
            json!({ "$ref": "#/$defs/root" })
        );
        assert_eq!(
            lowered.schema()["$defs"]["root"]["required"],
            json!(["name", "children"])
        );
    }

    #[test]
    fn open_objects_maps_and_deep_nesting_go_out_non_strict() {
        for open in [
            json!({ "type": "object" }),
            json!({ "type": "object", "additionalProperties": { "type": "string" } }),
            json!({ "type": "object", "properties": { "a": { "type": "string" } }, "additionalProperties": true }),
            json!({}),
            json!({ "type": "array" }),
        ] {
            let lowered = strict(wrap(open.clone())).unwrap();
            assert!(!lowered.strict(), "{open}");
            assert_eq!(lowered.schema(), &wrap(open));
            assert!(lowered.relaxed().unwrap().contains("/properties/f"));
        }
        let mut deep = json!({ "type": "string" });
        for _ in 0..OPENAI_MAX_DEPTH {
            deep = wrap(deep);
        }
        assert!(strict(deep.clone()).unwrap().strict());
        assert!(!strict(wrap(deep)).unwrap().strict());
    }

    #[test]
    fn tuples_go_out_as_arrays_of_their_item_union() {
        let pair = json!({ "type": "array", "prefixItems": [{ "type": "string" }, { "type": "integer" }], "minItems": 2, "maxItems": 2 });
        let lowered = strict(wrap(pair)).unwrap();
        assert_eq!(
            lowered.schema()["properties"]["f"],
            json!({ "type": "array", "items": { "anyOf": [{ "type": "string" }, { "type": "integer" }] }, "minItems": 2, "maxItems": 2 })
        );
        assert_eq!(lowered.dropped_keywords(), ["prefixItems"]);
    }

    #[test]
    fn merges_all_of_and_drops_conditionals() {
        let schema = json!({
            "type": "object",
            "allOf": [{ "properties": { "a": { "type": "string" } }, "required": ["a"] }, { "properties": { "b": { "type": "integer" } } }],
            "if": { "required": ["a"] }, "then": { "required": ["b"] },
            "dependentRequired": { "a": ["b"] }
        });
        let lowered = strict(schema).unwrap();
        assert!(lowered.strict());
        assert_eq!(lowered.schema()["required"], json!(["a", "b"]));
        assert_eq!(
            lowered.dropped_keywords(),
            ["dependentRequired", "if", "then"]
        );
    }

    #[test]
    fn a_root_without_a_type_is_narrowed_to_objects() {
        let lowered =
            strict(json!({ "properties": { "a": { "type": "string" } }, "required": ["a"] }))
                .unwrap();
        assert_eq!(lowered.schema()["type"], "object");
        assert!(lowered.strict());
        let lowered = strict(json!({ "type": ["object", "null"], "minProperties": 1 })).unwrap();
        assert!(!lowered.strict());
        assert_eq!(
            lowered.schema(),
            &json!({ "type": "object", "minProperties": 1 })
        );
    }

    #[test]
    fn references_it_cannot_follow_go_out_non_strict() {
        let lowered = strict(wrap(json!({ "$ref": "other.json#/a" }))).unwrap();
        assert!(!lowered.strict());
        assert_eq!(lowered.schema(), &wrap(json!({ "$ref": "other.json#/a" })));
    }
}

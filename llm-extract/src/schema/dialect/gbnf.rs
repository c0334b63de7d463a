//! [`Dialect::Gbnf`](crate::schema::Dialect::Gbnf): what llama.cpp's JSON-Schema-to-GBNF converter enforces
//! (Ollama and llama-server both use it).
//!
//! Facts relied on, read from llama.cpp's `common/json-schema.cpp` (the schema reader) and
//! `common/json-schema-to-grammar.cpp` (the converter) as vendored by `llama-cpp-sys-2` 0.1.161:
//! - `$ref` to any `#/...` pointer of the same document is followed, recursion included (a reference
//!   is reserved before its target is read, so a cycle ends there); keywords beside `$ref` are ignored.
//!   A reference must start with `#/`, so a root reference (`#`) is sent as a definition.
//! - `anyOf` and `oneOf` are alternatives (both alike); keywords beside them are ignored.
//! - A type list is a union: the schema is copied once per type.
//! - `const` and `enum` take precedence over `type`.
//! - Objects: `properties`, `required`, `additionalProperties` (`false` by default when `properties`
//!   is given, `true` or a schema otherwise); `{"type": "object"}` alone accepts any object, `{}` any
//!   value. `allOf` is merged (properties and required of its parts).
//! - Arrays: `items`, `minItems`, `maxItems`; `prefixItems` (or a list under `items`) is a tuple of
//!   exactly its length; an array without `items` accepts any items.
//! - Strings: `pattern` (only anchored `^...$`, a subset of regular expressions), `minLength`/`maxLength`,
//!   `format` `date`, `time`, `date-time`, `uuid`.
//! - Integers: `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`, as 64-bit integers. Bounds on
//!   `number` are ignored.
//! - A schema that is not an object (`true`) fails the conversion ("schema must be an object").
//!
//! So: references are kept, `{}` is sent for any value, open objects stay open; dropped (checked
//! locally): bounds on `number`, `multipleOf`, `uniqueItems`, `contains`, other `format`s,
//! `patternProperties`, `propertyNames`, `minProperties`/`maxProperties`, `dependent*`, `not`,
//! `if`/`then`/`else`, and a `pattern` the converter cannot take (unanchored with anchors inside, or using
//! `\d`, `\w`, `\s`, `\b`, back-references or look-arounds, which it copies verbatim into the grammar).
//! An unanchored pattern without inner anchors goes out as `^.*(?:...).*$`, the same strings.

use super::{child, properties, Pointer, Refs, Rules, Walk};
use crate::error::SchemaError;
use crate::schema::builder::GROUNDED;
use serde_json::{Map, Value};

/// llama.cpp's JSON-Schema-to-grammar subset.
pub(super) struct Gbnf;

/// `format` values llama.cpp turns into grammar rules.
const FORMATS: &[&str] = &["date", "time", "date-time", "uuid"];

impl Rules for Gbnf {
    const NAME: &'static str = "gbnf";
    const REFS: Refs = Refs::Keep;

    fn any(&self, _cx: &mut Walk<'_>, _path: &Pointer) -> Result<Value, SchemaError> {
        Ok(Value::Object(Map::new()))
    }

    fn node(
        &self,
        cx: &mut Walk<'_>,
        map: Map<String, Value>,
        path: &Pointer,
    ) -> Result<Value, SchemaError> {
        let types: Vec<String> = crate::schema::node::types_of(&map)
            .into_iter()
            .map(str::to_owned)
            .collect();
        let has = |name: &str| types.iter().any(|t| t == name);
        let mut out = Map::with_capacity(map.len());
        for (key, value) in &map {
            let keep = match key.as_str() {
                "type" | "enum" | "const" | "description" | "required" | "minItems"
                | "maxItems" => true,
                GROUNDED => cx.grounding(),
                "properties" => {
                    let Some(lowered) = properties(self, cx, &map, path)? else {
                        return Ok(Value::Bool(false));
                    };
                    out.insert(key.clone(), Value::Object(lowered));
                    continue;
                }
                "additionalProperties" => {
                    let lowered = match value {
                        Value::Bool(_) => value.clone(),
                        sub => child(self, cx, sub, &path.child(key))?,
                    };
                    out.insert(key.clone(), lowered);
                    continue;
                }
                "items" => {
                    let lowered = child(self, cx, value, &path.child(key))?;
                    if lowered == Value::Bool(false) {
                        out.insert("maxItems".into(), Value::from(0));
                    } else {
                        out.insert(key.clone(), lowered);
                    }
                    continue;
                }
                "prefixItems" => {
                    let mut tuple = Vec::new();
                    for (i, sub) in value.as_array().into_iter().flatten().enumerate() {
                        let lowered = child(self, cx, sub, &path.child(key).index(i))?;
                        if lowered == Value::Bool(false) {
                            out.insert("maxItems".into(), Value::from(i));
                            break;
                        }
                        tuple.push(lowered);
                    }
                    out.insert(key.clone(), Value::Array(tuple));
                    continue;
                }
                "pattern" if types.is_empty() || has("string") => {
                    match value.as_str().and_then(anchored) {
                        Some(pattern) => {
                            out.insert(key.clone(), Value::String(pattern));
                        }
                        None => cx.drop(key, path),
                    }
                    continue;
                }
                "minLength" | "maxLength" => has("string"),
                "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum" => {
                    has("integer") && is_integral(value)
                }
                "format" => value.as_str().is_some_and(|f| FORMATS.contains(&f)),
                _ => false,
            };
            if keep {
                out.insert(key.clone(), value.clone());
            } else {
                cx.drop(key, path);
            }
        }
        Ok(Value::Object(out))
    }
}

/// The pattern as the converter takes it (anchored `^...$`), or `None` when it cannot: an unanchored
/// pattern is wrapped in `^.*(?:...).*$` (the same strings: JSON Schema patterns search), unless it
/// anchors inside; a class escape, a back-reference or a look-around is not taken.
fn anchored(pattern: &str) -> Option<String> {
    let mut chars = pattern.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('d' | 'D' | 'w' | 'W' | 's' | 'S' | 'b' | 'B') => return None,
                Some(digit) if digit.is_ascii_digit() => return None,
                _ => {}
            },
            '(' if chars.peek() == Some(&'?') => {
                chars.next();
                if chars.peek() != Some(&':') {
                    return None;
                }
            }
            _ => {}
        }
    }
    // The closing `$` must not be escaped: `\$` is a literal dollar sign.
    let ends = pattern
        .strip_suffix('$')
        .is_some_and(|before| before.chars().rev().take_while(|c| *c == '\\').count() % 2 == 0);
    let starts = pattern.starts_with('^');
    if starts && ends {
        return Some(pattern.to_owned());
    }
    if starts || ends || pattern.contains('^') || pattern.contains('$') {
        return None;
    }
    Some(format!("^.*(?:{pattern}).*$"))
}

/// Whether a bound is a whole number (llama.cpp reads integer bounds as 64-bit integers).
fn is_integral(value: &Value) -> bool {
    match value {
        Value::Number(n) => {
            n.is_i64()
                || n.as_f64()
                    .is_some_and(|f| f.fract() == 0.0 && f.abs() < 9.0e15)
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::dialect::{lower, lower_grounded, Lowering};
    use crate::schema::Dialect;
    use serde_json::json;

    fn gbnf(schema: Value) -> Lowering {
        lower(&schema, Dialect::Gbnf).unwrap()
    }

    fn object(field: Value) -> Value {
        json!({
            "type": "object",
            "properties": { "field": field },
            "required": ["field"],
            "additionalProperties": false
        })
    }

    #[test]
    fn keeps_key_order_and_drops_what_the_converter_ignores() {
        let schema = json!({
            "type": "object",
            "properties": {
                "zeta": { "type": "number", "minimum": 0.0, "maximum": 1.0, "examples": [0.5] },
                "alpha": { "type": "integer", "minimum": 0, "maximum": 255 },
                "tags": { "type": "array", "items": { "type": "string" }, "uniqueItems": true, "maxItems": 3 },
                "name": { "type": ["string", "null"], "minLength": 2, "pattern": "^[a-z]+$", "title": "N" }
            },
            "required": ["zeta", "alpha", "tags"],
            "additionalProperties": false
        });
        let lowered = gbnf(schema);
        assert_eq!(
            serde_json::to_string(lowered.schema()).unwrap(),
            json!({
                "type": "object",
                "properties": {
                    "zeta": { "type": "number" },
                    "alpha": { "type": "integer", "minimum": 0, "maximum": 255 },
                    "tags": { "type": "array", "items": { "type": "string" }, "maxItems": 3 },
                    "name": { "type": ["string", "null"], "minLength": 2, "pattern": "^[a-z]+$" }
                },
                "required": ["zeta", "alpha", "tags"],
                "additionalProperties": false
            })
            .to_string()
        );
        assert_eq!(
            lowered.dropped_keywords(),
            ["maximum", "minimum", "uniqueItems"]
        );
        assert!(lowered
            .dropped()
            .iter()
            .any(|d| d.keyword == "uniqueItems" && d.path == "/properties/tags"));
    }

    #[test]
    fn open_objects_any_values_and_arrays_stay_open() {
        for open in [
            json!({ "type": "object" }),
            json!({ "type": "object", "additionalProperties": true }),
            json!({ "type": "object", "properties": { "a": { "type": "string" } }, "additionalProperties": true }),
            json!({ "type": "array" }),
            json!({ "type": "object", "additionalProperties": { "type": "integer" } }),
        ] {
            assert_eq!(gbnf(object(open.clone())).schema(), &object(open));
        }
        assert_eq!(gbnf(object(json!(true))).schema(), &object(json!({})));
        assert_eq!(gbnf(object(json!({}))).schema(), &object(json!({})));
    }

    #[test]
    fn keeps_references_and_recursion_in_defs() {
        let tree = json!({
            "type": "object",
            "properties": {
                "name": { "type": "string" },
                "children": { "type": "array", "items": { "$ref": "#" } },
                "next": { "$ref": "#/$defs/Link" }
            },
            "required": ["name", "children"],
            "additionalProperties": false,
            "$defs": { "Link": { "anyOf": [{ "$ref": "#/$defs/Link2" }, { "type": "null" }] }, "Link2": { "type": "integer", "x-note": 1 } }
        });
        let lowered = gbnf(tree);
        let schema = lowered.schema();
        assert_eq!(
            schema["properties"]["children"]["items"],
            json!({ "$ref": "#/$defs/root" })
        );
        assert_eq!(
            schema["properties"]["next"],
            json!({ "$ref": "#/$defs/Link" })
        );
        assert_eq!(schema["$defs"]["Link2"], json!({ "type": "integer" }));
        assert_eq!(
            schema["$defs"]["root"]["properties"]["name"],
            json!({ "type": "string" })
        );
        assert!(lowered.dropped().is_empty());
    }

    #[test]
    fn merges_all_of_and_distributes_keywords_beside_any_of() {
        let schema = json!({
            "allOf": [
                { "type": "object", "properties": { "a": { "type": "integer", "minimum": 1 } }, "required": ["a"] },
                { "properties": { "a": { "maximum": 9 }, "b": { "type": "string" } }, "required": ["b"] }
            ]
        });
        assert_eq!(
            gbnf(schema).schema(),
            &json!({
                "type": "object",
                "properties": { "a": { "type": "integer", "minimum": 1, "maximum": 9 }, "b": { "type": "string" } },
                "required": ["a", "b"]
            })
        );
        let beside = json!({
            "type": "object",
            "properties": { "k": { "type": "string" } },
            "anyOf": [{ "required": ["k"] }, { "properties": { "n": { "type": "null" } } }]
        });
        let lowered = gbnf(beside);
        assert_eq!(lowered.schema()["anyOf"][0]["required"], json!(["k"]));
        assert_eq!(lowered.schema()["anyOf"][1]["type"], "object");
        assert_eq!(
            lowered.schema()["anyOf"][1]["properties"]["n"],
            json!({ "type": "null" })
        );
        assert!(lowered.schema().get("properties").is_none());
    }

    #[test]
    fn one_of_goes_out_as_any_of_and_overlap_is_reported() {
        let tagged = json!({
            "oneOf": [
                { "type": "object", "properties": { "Card": { "type": "string" } }, "required": ["Card"], "additionalProperties": false },
                { "type": "object", "properties": { "Cash": { "type": "integer" } }, "required": ["Cash"], "additionalProperties": false },
                { "const": "None" }
            ]
        });
        let lowered = gbnf(tagged);
        assert_eq!(lowered.schema()["anyOf"].as_array().unwrap().len(), 3);
        assert!(lowered.dropped().is_empty());
        let overlapping =
            json!({ "oneOf": [{ "type": "string" }, { "type": "string", "maxLength": 3 }] });
        let lowered = gbnf(overlapping);
        assert!(lowered.schema().get("oneOf").is_none());
        assert_eq!(lowered.dropped_keywords(), ["oneOf"]);
    }

    #[test]
    fn tuples_bounds_and_property_names() {
        let tuple = json!({ "type": "array", "items": [{ "type": "string" }, { "type": "integer" }], "additionalItems": false });
        assert_eq!(
            gbnf(tuple).schema(),
            &json!({ "type": "array", "prefixItems": [{ "type": "string" }, { "type": "integer" }], "maxItems": 2 })
        );
        let draft4 = json!({ "type": "integer", "minimum": 0, "exclusiveMinimum": true });
        assert_eq!(
            gbnf(draft4).schema(),
            &json!({ "type": "integer", "exclusiveMinimum": 0 })
        );
        let keyed = json!({ "type": "object", "propertyNames": { "enum": ["red", "blue"] }, "additionalProperties": { "type": "integer" } });
        assert_eq!(
            gbnf(keyed).schema(),
            &json!({ "type": "object", "properties": { "red": { "type": "integer" }, "blue": { "type": "integer" } }, "additionalProperties": false })
        );
    }

    #[test]
    fn patterns_are_anchored_or_dropped() {
        let lowered = gbnf(json!({ "type": "string", "pattern": "[a-z]+" }));
        assert_eq!(lowered.schema()["pattern"], "^.*(?:[a-z]+).*$");
        for dropped in ["^\\d+$", "^(?=a)a$", "^(a)\\1$", "^a|b"] {
            let lowered = gbnf(json!({ "type": "string", "pattern": dropped }));
            assert!(lowered.schema().get("pattern").is_none(), "{dropped}");
            assert_eq!(lowered.dropped_keywords(), ["pattern"]);
        }
        let kept = json!({ "type": "string", "pattern": "^(?:[a-z]|\\$)+$" });
        assert_eq!(gbnf(kept.clone()).schema(), &kept);
    }

    #[test]
    fn keeps_grounding_marks_only_when_grounded() {
        let schema = object(json!({ "type": "string", "x-grounded": true }));
        assert!(gbnf(schema.clone()).schema()["properties"]["field"]
            .get("x-grounded")
            .is_none());
        let grounded = lower_grounded(&schema, Dialect::Gbnf).unwrap();
        assert_eq!(grounded.schema()["properties"]["field"]["x-grounded"], true);
    }

    #[test]
    fn references_it_cannot_follow_go_out_as_any_value() {
        for reference in ["https://example.com/s.json", "#/$defs/Missing", "#anchor"] {
            let lowered = gbnf(object(json!({ "$ref": reference, "minimum": 1 })));
            assert_eq!(lowered.schema()["properties"]["field"], json!({}));
            assert_eq!(lowered.dropped()[0].keyword, "$ref");
            assert_eq!(lowered.dropped()[0].path, "/properties/field");
        }
    }

    #[test]
    fn refuses_schemas_accepting_nothing() {
        for nothing in [
            json!(false),
            object(json!(false)),
            json!({ "allOf": [{ "type": "string" }, { "type": "integer" }] }),
            json!({ "enum": [1, 2], "allOf": [{ "enum": [3] }] }),
        ] {
            assert!(
                matches!(lower(&nothing, Dialect::Gbnf), Err(SchemaError::Unsupported { ref path, .. }) if path == "/"),
                "{nothing}"
            );
        }
    }
}

//! [`Dialect::Gemini`](crate::schema::Dialect::Gemini): Gemini's `responseJsonSchema`.
//!
//! Facts relied on, from the `GenerationConfig.responseJsonSchema` reference (Gemini API and Vertex AI,
//! <https://ai.google.dev/api/generate-content#generationconfig>) and the structured-output guide:
//! - Supported: `$id`, `$defs`, `$ref`, `$anchor`, `type`, `format`, `title`, `description`, `enum`
//!   (strings and numbers), `items`, `prefixItems`, `minItems`, `maxItems`, `minimum`, `maximum`,
//!   `anyOf`, `oneOf` (read as `anyOf`), `properties`, `additionalProperties`, `required`.
//! - "Cyclic references are unrolled to a limited degree and, as such, may only be used within
//!   non-required properties"; a `$ref` may have no sibling keywords but `$`-keywords.
//! - A type list with `"null"` is how a value is made nullable. String `format`s listed: `date-time`,
//!   `date`, `time`.
//!
//! So: references are inlined and recursion unrolled [`UNROLL_DEPTH`](super::UNROLL_DEPTH) times (which
//! holds for required recursive properties as well); `oneOf` and `anyOf` go out as `anyOf`; a string or
//! number `const` goes out as a one-value `enum`, other `const`s and `enum`s as the types of their values;
//! open objects and arrays without `items` go out as they are. Dropped (checked locally): `minLength`,
//! `maxLength`, `pattern`, `exclusiveMinimum`, `exclusiveMaximum`, `multipleOf`, `uniqueItems`,
//! `patternProperties`, `propertyNames`, `minProperties`/`maxProperties`, `not`, `if`/`then`/`else`,
//! `dependent*`, other `format`s.

use super::{child, json_type, properties, Pointer, Refs, Rules, Walk};
use crate::error::SchemaError;
use serde_json::{Map, Value};

/// Gemini's `responseJsonSchema`.
pub(super) struct Gemini;

/// `format` values Gemini's JSON Schema support documents.
const FORMATS: &[&str] = &["date-time", "date", "time"];

impl Rules for Gemini {
    const NAME: &'static str = "gemini";
    const REFS: Refs = Refs::Unroll;

    fn any(&self, _cx: &mut Walk<'_>, _path: &Pointer) -> Result<Value, SchemaError> {
        Ok(Value::Object(Map::new()))
    }

    fn node(
        &self,
        cx: &mut Walk<'_>,
        map: Map<String, Value>,
        path: &Pointer,
    ) -> Result<Value, SchemaError> {
        let enumerable = |value: &Value| value.is_string() || value.is_number();
        let mut out = Map::with_capacity(map.len());
        if let (Some(value), false) = (map.get("const"), map.contains_key("type")) {
            out.insert("type".to_owned(), Value::from(json_type(&value)));
        }
        for (key, value) in &map {
            match key.as_str() {
                "type" | "description" | "required" | "minItems" | "maxItems" | "minimum"
                | "maximum" => {
                    out.insert(key.clone(), value.clone());
                }
                "const" if enumerable(value) => {
                    out.insert("enum".to_owned(), Value::Array(vec![value.clone()]));
                }
                "enum" => match value.as_array() {
                    Some(values) if values.iter().all(enumerable) => {
                        out.insert(key.clone(), value.clone());
                    }
                    Some(values) => {
                        // Not expressible: the types of the values still narrow what is sent.
                        if !map.contains_key("type") {
                            let mut names: Vec<&str> = Vec::new();
                            for name in values.iter().map(|v| json_type(&v)) {
                                if !names.contains(&name) {
                                    names.push(name);
                                }
                            }
                            out.insert("type".to_owned(), Value::from(names));
                        }
                        cx.drop(key, path);
                    }
                    None => {}
                },
                "format" if value.as_str().is_some_and(|f| FORMATS.contains(&f)) => {
                    out.insert(key.clone(), value.clone());
                }
                "properties" => {
                    let Some(lowered) = properties(self, cx, &map, path)? else {
                        return Ok(Value::Bool(false));
                    };
                    out.insert(key.clone(), Value::Object(lowered));
                }
                "additionalProperties" => match value {
                    Value::Bool(false) => {
                        out.insert(key.clone(), value.clone());
                    }
                    Value::Bool(true) => {}
                    sub => {
                        let lowered = child(self, cx, sub, &path.child(key))?;
                        out.insert(key.clone(), lowered);
                    }
                },
                "items" => {
                    let lowered = child(self, cx, value, &path.child(key))?;
                    if lowered == Value::Bool(false) {
                        if !map.contains_key("prefixItems") {
                            out.insert("maxItems".into(), Value::from(0));
                        }
                    } else {
                        out.insert(key.clone(), lowered);
                    }
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
                }
                _ => cx.drop(key, path),
            }
        }
        Ok(Value::Object(out))
    }
}

#[cfg(test)]
mod tests {
    use crate::schema::dialect::lower;
    use crate::schema::Dialect;
    use serde_json::json;

    #[test]
    fn sends_any_of_enums_of_scalars_numeric_bounds_and_tuples() {
        let schema = json!({
            "type": "object",
            "properties": {
                "name": { "type": "string", "minLength": 1, "pattern": "^a+$", "title": "N" },
                "score": { "type": "number", "minimum": 0.0, "maximum": 1.0, "multipleOf": 0.5 },
                "flag": { "const": true },
                "pair": { "type": "array", "items": [{ "type": "string" }, { "type": "integer" }] },
                "counts": { "type": "object", "additionalProperties": { "type": "integer" } },
                "mood": { "enum": ["up", null] }
            },
            "required": ["name"],
            "additionalProperties": false
        });
        let lowered = lower(&schema, Dialect::Gemini).unwrap();
        assert_eq!(
            serde_json::to_string(lowered.schema()).unwrap(),
            json!({
                "type": "object",
                "properties": {
                    "name": { "type": "string" },
                    "score": { "type": "number", "minimum": 0.0, "maximum": 1.0 },
                    "flag": { "type": "boolean" },
                    "pair": { "type": "array", "prefixItems": [{ "type": "string" }, { "type": "integer" }] },
                    "counts": { "type": "object", "additionalProperties": { "type": "integer" } },
                    "mood": { "type": ["string", "null"] }
                },
                "required": ["name"],
                "additionalProperties": false
            })
            .to_string()
        );
        assert_eq!(
            lowered.dropped_keywords(),
            ["const", "enum", "minLength", "multipleOf", "pattern"]
        );
    }

    #[test]
    fn open_objects_any_values_and_scalars_go_out() {
        for schema in [
            json!({ "type": "object" }),
            json!({ "type": "string" }),
            json!({}),
        ] {
            assert_eq!(lower(&schema, Dialect::Gemini).unwrap().schema(), &schema);
        }
        assert_eq!(
            lower(&json!(true), Dialect::Gemini).unwrap().schema(),
            &json!({})
        );
    }

    #[test]
    fn unrolls_required_recursion_and_empties_arrays_below() {
        let tree = json!({
            "type": "object",
            "properties": { "children": { "type": "array", "items": { "$ref": "#/$defs/Node" } } },
            "required": ["children"],
            "$defs": { "Node": { "$ref": "#" } }
        });
        let lowered = lower(&tree, Dialect::Gemini).unwrap();
        let mut node = lowered.schema();
        let mut levels = 0;
        while node["properties"]["children"].get("items").is_some() {
            node = &node["properties"]["children"]["items"];
            levels += 1;
        }
        assert!((1..=crate::schema::dialect::UNROLL_DEPTH).contains(&levels));
        assert_eq!(node["properties"]["children"]["maxItems"], 0);
        assert!(lowered.schema().get("$defs").is_none());
    }
}

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

use super::{branches, child, json_type, properties, Lowering, Pointer, Refs, Rules, Walk};
use crate::error::SchemaError;
use serde_json::{Map, Value};

/// The deepest nesting of objects OpenAI's strict mode accepts.
pub const OPENAI_MAX_DEPTH: usize = 10;

/// OpenAI structured outputs, strict mode.
pub(super) struct OpenAiStrict;

/// `format` values OpenAI's strict mode documents.
const FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
];

/// The strict lowering, or the non-strict form when strict cannot carry the schema.
pub(super) fn lower(generic: &Value) -> Result<Lowering, SchemaError> {
    lower_with(&OpenAiStrict, generic)
}

/// Shared by the dialects with a strict mode and a non-strict form (OpenAI, Anthropic): the strict
/// lowering if it succeeds, else the relaxed form. Both forms need an object root: a root that is not
/// one (an array, a string, a union, a reference to one) is sent wrapped (see [`super::WRAPPER_KEY`]).
pub(super) fn lower_with<R: Rules>(rules: &R, generic: &Value) -> Result<Lowering, SchemaError> {
    if let Some(root) = object_root(generic) {
        match super::run(rules, &root, false) {
            Ok(lowering) if is_object(&lowering.schema) => return Ok(lowering),
            Ok(_) => {}
            Err(error) => return Ok(super::relaxed(&root, error)),
        }
    }
    let wrapper = super::wrap(generic);
    let lowering = match super::run(rules, &wrapper, false) {
        Ok(lowering) => lowering,
        Err(error) => super::relaxed(&wrapper, error),
    };
    Ok(lowering.wrapped())
}

/// Whether a lowered schema is an object (not a reference to one).
fn is_object(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("object")
}

/// The generic schema with a root that describes objects only, or `None` when it admits no object. A
/// root that says nothing of its type (`{"properties": ..}`, `{"required": ..}`) or lists several types is
/// narrowed to objects: a tightening, which the provider requires (its root must be an object).
fn object_root(generic: &Value) -> Option<Value> {
    let mut root = generic.clone();
    let Value::Object(map) = &mut root else {
        return None;
    };
    if ["$ref", "anyOf", "oneOf", "enum", "const"]
        .iter()
        .any(|key| map.contains_key(*key))
    {
        // Followed to its end, a root reference may still be an object; a union or a value list is not
        // one object.
        let resolved = crate::schema::node::resolve(generic, generic);
        let object = resolved
            .as_object()
            .is_some_and(|target| crate::schema::node::types_of(target) == ["object"]);
        return object.then(|| generic.clone());
    }
    let types = crate::schema::node::types_of(map);
    if types.is_empty() || types.contains(&"object") {
        map.insert("type".into(), Value::from("object"));
        return Some(root);
    }
    None
}

impl Rules for OpenAiStrict {
    const NAME: &'static str = "openai-strict";
    const REFS: Refs = Refs::Keep;

    fn any(&self, _cx: &mut Walk<'_>, path: &Pointer) -> Result<Value, SchemaError> {
        Err(self.unsupported("any JSON value (true or {})", path, ANY_VALUE_HINT))
    }

    fn node(
        &self,
        cx: &mut Walk<'_>,
        map: Map<String, Value>,
        path: &Pointer,
    ) -> Result<Value, SchemaError> {
        match kind_of(self, &map, path)? {
            Kind::Object => return self.object(cx, &map, path),
            Kind::Any => return self.any(cx, path),
            Kind::Other => {}
        }
        let mut out = Map::with_capacity(map.len());
        // A scalar `const` (a tag) goes out as a one-value `enum` with its type: the form OpenAI
        // documents, and the same set of values.
        let scalar_const = map
            .get("const")
            .filter(|value| !value.is_object() && !value.is_array());
        if let (Some(value), false) = (scalar_const, map.contains_key("type")) {
            out.insert("type".to_owned(), Value::from(json_type(&value)));
        }
        for (key, value) in &map {
            let keep = match key.as_str() {
                "const" if scalar_const.is_some() => {
                    out.insert("enum".to_owned(), Value::Array(vec![value.clone()]));
                    continue;
                }
                "type" | "enum" | "const" | "description" | "pattern" | "minimum" | "maximum"
                | "exclusiveMinimum" | "exclusiveMaximum" | "multipleOf" | "minItems"
                | "maxItems" => true,
                "format" => value.as_str().is_some_and(|f| FORMATS.contains(&f)),
                "items" => {
                    let lowered = child(self, cx, value, &path.child(key))?;
                    out.insert(key.clone(), lowered);
                    continue;
                }
                "prefixItems" => {
                    let items = tuple_items(self, cx, &map, path)?;
                    out.insert("items".into(), items);
                    cx.drop(key, path);
                    continue;
                }
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

const ANY_VALUE_HINT: &str =
    "give the field a concrete type instead of serde_json::Value (a struct, an enum, a String holding JSON)";

/// What a node is to a strict dialect (OpenAI, Anthropic), by its types.
pub(super) enum Kind {
    /// An object (not a list of values): the dialect's object rule.
    Object,
    /// No type and no list of values: any value, the dialect's [`Rules::any`].
    Any,
    /// A scalar, an array (whose `items` are checked), or a list of values.
    Other,
}

/// What `map` is to a strict dialect.
///
/// # Errors
/// An array that does not say what its items are.
pub(super) fn kind_of<R: Rules>(
    rules: &R,
    map: &Map<String, Value>,
    path: &Pointer,
) -> Result<Kind, SchemaError> {
    let types = crate::schema::node::types_of(map);
    let valued = map.contains_key("enum") || map.contains_key("const");
    if types.contains(&"object") && !valued {
        return Ok(Kind::Object);
    }
    if !valued && types.contains(&"array") {
        check_items(rules, map, path)?;
    }
    Ok(if !valued && types.is_empty() {
        Kind::Any
    } else {
        Kind::Other
    })
}

/// An array schema must say what its items are.
fn check_items<R: Rules>(
    rules: &R,
    map: &Map<String, Value>,
    path: &Pointer,
) -> Result<(), SchemaError> {
    if map.contains_key("items") || map.contains_key("prefixItems") {
        return Ok(());
    }
    Err(rules.unsupported(
        "an array of any values (no \"items\")",
        path,
        "give the sequence a concrete item type",
    ))
}

/// A tuple as one item schema: the union of its position schemas (and of `items`, the rest).
pub(super) fn tuple_items<R: Rules>(
    rules: &R,
    cx: &mut Walk<'_>,
    map: &Map<String, Value>,
    path: &Pointer,
) -> Result<Value, SchemaError> {
    let mut all: Vec<Value> = map
        .get("prefixItems")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if let Some(rest) = map.get("items") {
        all.push(rest.clone());
    }
    let Some(mut lowered) = branches(rules, cx, &all, &path.child("prefixItems"))? else {
        return Err(rules.unsupported(
            "a tuple whose items accept no value",
            path,
            "fix the schema",
        ));
    };
    lowered.dedup();
    Ok(if lowered.len() == 1 {
        lowered.remove(0)
    } else {
        let mut out = Map::new();
        out.insert("anyOf".into(), Value::Array(lowered));
        Value::Object(out)
    })
}

impl OpenAiStrict {
    fn object(
        &self,
        cx: &mut Walk<'_>,
        map: &Map<String, Value>,
        path: &Pointer,
    ) -> Result<Value, SchemaError> {
        if cx.depth >= OPENAI_MAX_DEPTH {
            return Err(self.unsupported(
                &format!("more than {OPENAI_MAX_DEPTH} levels of nested objects"),
                path,
                "flatten the type",
            ));
        }
        let extra = !matches!(map.get("additionalProperties"), Some(Value::Bool(false)));
        if !map.contains_key("properties") && extra {
            return Err(self.unsupported(
                "an object with arbitrary keys",
                path,
                "use a struct with named fields, or a list of key/value structs",
            ));
        }
        if extra && map.contains_key("additionalProperties") {
            return Err(self.unsupported(
                "an object with extra keys beside its properties",
                path,
                "close the object (\"additionalProperties\": false)",
            ));
        }
        cx.depth += 1;
        let lowered = properties(self, cx, map, path);
        cx.depth -= 1;
        let Some(lowered) = lowered? else {
            return Ok(Value::Bool(false));
        };
        for key in map.keys() {
            if !matches!(
                key.as_str(),
                "type" | "description" | "properties" | "required" | "additionalProperties"
            ) {
                cx.drop(key, path);
            }
        }
        let required = lowered.keys().cloned().map(Value::String).collect();
        let mut out = Map::new();
        out.insert(
            "type".to_owned(),
            map.get("type").cloned().unwrap_or_else(|| "object".into()),
        );
        if let Some(description) = map.get("description") {
            out.insert("description".to_owned(), description.clone());
        }
        out.insert("properties".to_owned(), Value::Object(lowered));
        out.insert("required".to_owned(), Value::Array(required));
        out.insert("additionalProperties".to_owned(), Value::Bool(false));
        Ok(Value::Object(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::dialect::lower as lower_for;
    use crate::schema::Dialect;
    use serde_json::json;

    fn strict(schema: Value) -> Result<Lowering, SchemaError> {
        lower_for(&schema, Dialect::OpenAiStrict)
    }

    fn wrap(field: Value) -> Value {
        json!({ "type": "object", "properties": { "f": field }, "required": ["f"], "additionalProperties": false })
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

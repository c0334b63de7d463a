//! Runtime schemas: a JSON Schema held in a value or a file, or a signature shorthand, with the same
//! capabilities a derived type has (dialects, instructions, parsing, validation, extraction).

use super::signature::{self, SignatureError};
use super::{Dialect, SchemaSet, Shape};
use crate::error::SchemaError;
use serde_json::{Map, Value};
use std::path::Path;
use std::sync::Arc;

/// The keywords a runtime schema may use: those we validate locally and can render for some dialect.
const KNOWN_KEYWORDS: &[&str] = &[
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
    "anyOf",
    "oneOf",
    "description",
    "title",
    "pattern",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "minimum",
    "maximum",
    "uniqueItems",
    "examples",
    "default",
    "format",
];

/// Keywords of JSON Schema's vocabularies that constrain a value but that runtime schemas do not
/// enforce yet: a schema using one is refused (accepting it would accept values its author rejects).
/// Every other keyword this module does not know (annotations such as `$comment`, `example`,
/// `readOnly`, `deprecated`, a nested `$schema` or `$id`, and vendor extensions) constrains nothing and
/// is ignored, as JSON Schema says: it is left out of the schema that is validated and sent.
const NOT_ENFORCED: &[&str] = &[
    "allOf",
    "not",
    "if",
    "then",
    "else",
    "patternProperties",
    "propertyNames",
    "minProperties",
    "maxProperties",
    "dependencies",
    "dependentRequired",
    "dependentSchemas",
    "additionalItems",
    "prefixItems",
    "contains",
    "minContains",
    "maxContains",
    "multipleOf",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "unevaluatedProperties",
    "unevaluatedItems",
    "$recursiveRef",
    "$dynamicRef",
];

/// Deepest nesting a runtime schema may have (also bounds `$ref` expansion).
const MAX_DEPTH: usize = 64;

/// The most schema nodes (objects and values copied) a runtime schema may expand to once its `$ref`s
/// are inlined: refs that each use another ref twice double the size at every level.
const MAX_EXPANDED: usize = 100_000;

/// A schema loaded at run time.
///
/// ```
/// use llm_extract::schema::DynamicSchema;
/// let schema = DynamicSchema::from_signature("(text :string) -> {sentiment (positive | negative), score :float}")?;
/// assert_eq!(schema.inputs(), ["text"]);
/// assert!(schema.schema_set().format_instructions().contains("\"positive\""));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct DynamicSchema {
    set: Arc<SchemaSet>,
    inputs: Vec<String>,
}

/// A runtime schema could not be loaded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DynamicSchemaError {
    /// The file could not be read.
    #[error("cannot read schema file {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file is not JSON.
    #[error("schema file {path} is not valid JSON: {source}")]
    Json {
        /// The file.
        path: String,
        /// The JSON error.
        source: serde_json::Error,
    },
    /// The schema uses something we cannot enforce or send.
    #[error(transparent)]
    Schema(#[from] SchemaError),
    /// The signature does not parse.
    #[error(transparent)]
    Signature(#[from] SignatureError),
}

impl DynamicSchema {
    /// Loads a JSON Schema value.
    ///
    /// Local `$ref`s (`#/$defs/..`, `#/definitions/..`) are inlined; objects without
    /// `additionalProperties` are closed (a model must not invent keys). Annotations and
    /// unknown keywords (`$comment`, `example`, `readOnly`, vendor extensions, ...) are ignored. A
    /// keyword that constrains values and that we cannot enforce (`allOf`, `not`, `if`,
    /// `patternProperties`, ...) is an error naming it and where it is.
    pub fn from_json(schema: Value) -> Result<Self, SchemaError> {
        Self::named("DynamicSchema", schema)
    }

    /// Like [`DynamicSchema::from_json`], with the name sent as OpenAI's `json_schema.name`.
    pub fn named(name: impl Into<String>, schema: Value) -> Result<Self, SchemaError> {
        let defs = collect_defs(&schema);
        let mut budget = MAX_EXPANDED;
        let generic = normalize(&schema, &defs, "", 0, &mut budget)?;
        let set = SchemaSet::new(name, generic);
        set.validator()?;
        Ok(DynamicSchema {
            set: Arc::new(set),
            inputs: Vec::new(),
        })
    }

    /// Loads a JSON Schema file.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self, DynamicSchemaError> {
        let path = path.as_ref();
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| DynamicSchemaError::Io {
            path: shown.clone(),
            source,
        })?;
        let value: Value =
            serde_json::from_str(&text).map_err(|source| DynamicSchemaError::Json {
                path: shown,
                source,
            })?;
        let name = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("DynamicSchema")
            .to_owned();
        Ok(Self::named(name, value)?)
    }

    /// Parses the signature shorthand (see [`crate::schema::signature`]):
    /// `(text :string) -> {sentiment :string, score :float}`.
    pub fn from_signature(signature: &str) -> Result<Self, DynamicSchemaError> {
        let parsed = signature::parse(signature)?;
        let mut schema = Self::from_json(parsed.output)?;
        schema.inputs = parsed.inputs;
        Ok(schema)
    }

    /// The template variables a signature names (empty for a JSON Schema).
    pub fn inputs(&self) -> &[String] {
        &self.inputs
    }

    /// Everything derived from the schema: dialects, instructions, validator.
    pub fn schema_set(&self) -> &SchemaSet {
        &self.set
    }

    /// A shareable handle on the schema set.
    pub fn shared(&self) -> Arc<SchemaSet> {
        Arc::clone(&self.set)
    }

    /// The schema of `shape` rendered for `dialect`.
    pub fn for_dialect(&self, dialect: Dialect, shape: Shape) -> Result<&Value, SchemaError> {
        self.set.for_dialect(dialect, shape)
    }
}

fn collect_defs(root: &Value) -> Map<String, Value> {
    let mut defs = Map::new();
    for key in ["$defs", "definitions"] {
        if let Some(Value::Object(map)) = root.get(key) {
            for (name, schema) in map {
                defs.insert(format!("#/{key}/{name}"), schema.clone());
            }
        }
    }
    defs
}

fn invalid(path: &str, message: impl Into<String>) -> SchemaError {
    SchemaError::Invalid {
        path: if path.is_empty() {
            "/".into()
        } else {
            path.into()
        },
        message: message.into(),
    }
}

/// The nodes of `value`, counting no further than `limit + 1`.
fn size_up_to(value: &Value, limit: usize) -> usize {
    let mut count = 0;
    let mut stack = vec![value];
    while let Some(value) = stack.pop() {
        count += 1;
        if count > limit {
            break;
        }
        match value {
            Value::Array(items) => stack.extend(items),
            Value::Object(map) => stack.extend(map.values()),
            _ => {}
        }
    }
    count
}

/// Takes `cost` from the expansion budget, or fails saying why.
fn spend(budget: &mut usize, cost: usize, path: &str) -> Result<(), SchemaError> {
    match budget.checked_sub(cost) {
        Some(left) => {
            *budget = left;
            Ok(())
        }
        None => Err(invalid(
            path,
            format!(
                "the schema expands to more than {MAX_EXPANDED} nodes once its $refs are inlined \
                 (definitions that use others several times multiply); share less, or flatten the schema"
            ),
        )),
    }
}

fn normalize(
    schema: &Value,
    defs: &Map<String, Value>,
    path: &str,
    depth: usize,
    budget: &mut usize,
) -> Result<Value, SchemaError> {
    if depth > MAX_DEPTH {
        return Err(invalid(path, format!("nested deeper than {MAX_DEPTH} levels (a recursive $ref?); recursive schemas are not supported")));
    }
    spend(budget, 1, path)?;
    let map = match schema {
        Value::Object(map) => map,
        Value::Bool(true) => return Ok(Value::Object(Map::new())),
        other => {
            return Err(invalid(
                path,
                format!("expected a schema object, found {other}"),
            ))
        }
    };
    if let Some(reference) = map.get("$ref") {
        let target = reference
            .as_str()
            .and_then(|r| defs.get(r))
            .ok_or_else(|| invalid(path, format!("unresolvable $ref {reference}; only local #/$defs/.. and #/definitions/.. refs are supported")))?;
        if map.len() == 1 {
            return normalize(target, defs, path, depth + 1, budget);
        }
        // Keywords beside the `$ref` are merged into a copy of its target: pay for the copy.
        spend(budget, size_up_to(target, *budget), path)?;
        let mut merged = target.clone();
        if let Value::Object(merged) = &mut merged {
            for (k, v) in map.iter().filter(|(k, _)| k.as_str() != "$ref") {
                spend(budget, size_up_to(v, *budget), path)?;
                merged.insert(k.clone(), v.clone());
            }
        }
        return normalize(&merged, defs, path, depth + 1, budget);
    }
    let mut out = Map::new();
    for (key, value) in map {
        let here = format!("{path}/{key}");
        match key.as_str() {
            "properties" => {
                let props = value
                    .as_object()
                    .ok_or_else(|| invalid(&here, "properties must be an object"))?;
                let mut normalized = Map::new();
                for (name, sub) in props {
                    normalized.insert(
                        name.clone(),
                        normalize(sub, defs, &format!("{here}/{name}"), depth + 1, budget)?,
                    );
                }
                out.insert(key.clone(), Value::Object(normalized));
            }
            "items" | "additionalProperties" if value.is_object() => {
                out.insert(
                    key.clone(),
                    normalize(value, defs, &here, depth + 1, budget)?,
                );
            }
            "anyOf" | "oneOf" => {
                let branches = value
                    .as_array()
                    .ok_or_else(|| invalid(&here, format!("{key} must be an array")))?;
                let normalized = branches
                    .iter()
                    .enumerate()
                    .map(|(i, b)| normalize(b, defs, &format!("{here}/{i}"), depth + 1, budget))
                    .collect::<Result<Vec<_>, _>>()?;
                out.insert(key.clone(), Value::Array(normalized));
            }
            k if KNOWN_KEYWORDS.contains(&k) || k.starts_with("x-") => {
                spend(budget, size_up_to(value, *budget), &here)?;
                out.insert(key.clone(), value.clone());
            }
            other if NOT_ENFORCED.contains(&other) => {
                return Err(SchemaError::Unsupported {
                    dialect: "runtime schema",
                    what: format!("the keyword `{other}`"),
                    path: here,
                    hint: format!(
                        "runtime schemas enforce only: {}; rewrite the schema without `{other}`",
                        KNOWN_KEYWORDS.join(", ")
                    ),
                });
            }
            // An annotation or an unknown keyword: it constrains nothing.
            _ => {}
        }
    }
    let is_object = match out.get("type") {
        Some(Value::String(t)) => t == "object",
        Some(Value::Array(ts)) => ts.iter().any(|t| t == "object"),
        None => out.contains_key("properties"),
        _ => false,
    };
    if is_object && !out.contains_key("additionalProperties") {
        out.insert("additionalProperties".into(), Value::Bool(false));
    }
    Ok(Value::Object(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn refs_are_inlined_and_objects_closed() {
        let schema = DynamicSchema::from_json(json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": {"who": {"$ref": "#/$defs/Person"}},
            "required": ["who"],
            "$defs": {"Person": {"type": "object", "properties": {"name": {"type": "string"}}}}
        }))
        .unwrap();
        assert_eq!(
            schema.schema_set().generic(),
            &json!({
                "type": "object",
                "properties": {"who": {"type": "object", "properties": {"name": {"type": "string"}}, "additionalProperties": false}},
                "required": ["who"],
                "additionalProperties": false
            })
        );
    }

    #[test]
    fn unsupported_keyword_is_named_with_its_path() {
        let err = DynamicSchema::from_json(json!({
            "type": "object",
            "properties": {"a": {"allOf": [{"type": "string"}]}}
        }))
        .unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("`allOf`") && text.contains("/properties/a/allOf"),
            "{text}"
        );
    }

    #[test]
    fn annotations_and_unknown_keywords_are_ignored() {
        let schema = DynamicSchema::from_json(json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "$comment": "a note",
            "type": "object",
            "javaType": "com.example.Person",
            "properties": {
                "name": {"type": "string", "example": "Ada", "readOnly": true, "$comment": "x",
                         "deprecated": false, "$id": "#name", "esriDocumentation": {"a": 1}},
                "links": {"type": "array", "items": {"type": "string", "id": "item"}}
            },
            "required": ["name"]
        }))
        .unwrap();
        assert_eq!(
            schema.schema_set().generic(),
            &json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "links": {"type": "array", "items": {"type": "string"}}
                },
                "required": ["name"],
                "additionalProperties": false
            })
        );
        let validator = schema.schema_set().validator().unwrap();
        assert!(validator.is_valid(&json!({"name": "Ada", "links": ["x"]})));
        assert!(!validator.is_valid(&json!({"links": ["x"]})));
        // A keyword that constrains values and is not enforced is still refused, wherever it is.
        for keyword in [
            "not",
            "minProperties",
            "multipleOf",
            "if",
            "patternProperties",
        ] {
            let mut inner = serde_json::Map::new();
            inner.insert(keyword.into(), json!({}));
            let err = DynamicSchema::from_json(json!({"properties": {"a": inner}})).unwrap_err();
            assert!(err.to_string().contains(&format!("`{keyword}`")), "{err}");
        }
    }

    #[test]
    fn recursive_refs_are_an_error_not_a_hang() {
        let err = DynamicSchema::from_json(json!({
            "$ref": "#/$defs/N",
            "$defs": {"N": {"type": "object", "properties": {"next": {"$ref": "#/$defs/N"}}}}
        }))
        .unwrap_err();
        assert!(err.to_string().contains("recursive"), "{err}");
        assert!(DynamicSchema::from_json(json!({"$ref": "#/$defs/Missing"})).is_err());
        assert!(DynamicSchema::from_json(json!(3)).is_err());
    }

    #[test]
    fn refs_that_multiply_are_an_error_not_a_blow_up() {
        // D0 is a string; each D(k+1) holds two D(k): D30 would expand to 2^30 strings. With
        // `beside`, a keyword stands beside each ref (which copies the target).
        let defs = |beside: Option<(&str, Value)>| {
            let mut defs = serde_json::Map::new();
            defs.insert("D0".into(), json!({"type": "string"}));
            for k in 0..30 {
                let mut inner = json!({"$ref": format!("#/$defs/D{k}")});
                if let (Some((key, value)), Some(map)) = (&beside, inner.as_object_mut()) {
                    map.insert((*key).to_owned(), value.clone());
                }
                defs.insert(
                    format!("D{}", k + 1),
                    json!({"type": "object", "properties": {"a": inner, "b": inner}}),
                );
            }
            defs
        };
        let root = |top: usize, defs: &serde_json::Map<String, Value>| {
            json!({"type": "object", "properties": {"x": {"$ref": format!("#/$defs/D{top}")}},
                   "$defs": defs})
        };
        let err = DynamicSchema::from_json(root(30, &defs(None))).unwrap_err();
        assert!(err.to_string().contains("expands to more than"), "{err}");
        let defs = defs(Some(("description", json!("x"))));
        let err = DynamicSchema::from_json(root(30, &defs)).unwrap_err();
        assert!(err.to_string().contains("expands to more than"), "{err}");
        // Ten levels (1,024 strings) are fine.
        let ok = DynamicSchema::from_json(root(10, &defs)).unwrap();
        assert!(
            ok.schema_set()
                .generic()
                .to_string()
                .matches("string")
                .count()
                == 1024
        );
    }

    #[test]
    fn signature_schema_validates_like_a_derived_one() {
        let schema = DynamicSchema::from_signature(
            "(text :string) -> {sentiment (positive | negative | neutral), score :float}",
        )
        .unwrap();
        let validator = schema.schema_set().validator().unwrap();
        assert!(validator.is_valid(&json!({"sentiment": "positive", "score": 0.5})));
        assert!(!validator.is_valid(&json!({"sentiment": "happy", "score": 0.5})));
        assert!(!validator.is_valid(&json!({"sentiment": "positive", "score": 0.5, "extra": 1})));
        assert!(!validator.is_valid(&json!({"sentiment": "positive"})));
    }

    #[test]
    fn file_errors_name_the_file() {
        let err = DynamicSchema::from_file("/nonexistent/schema.json").unwrap_err();
        assert!(err.to_string().contains("/nonexistent/schema.json"));
    }
}

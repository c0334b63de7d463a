//! Rendering the generic schema for each provider [`Dialect`].
//!
//! The generic schema (see [`super`]) is what we validate locally, always. A rendering is only what we
//! *send*: a keyword a dialect cannot carry is dropped from it (the local validator still checks it), and
//! a construct the dialect cannot express at all is a [`SchemaError::Unsupported`] naming the path into
//! the generic schema and what to do instead, raised before any request is made.
//!
//! Every dialect strips the `x-` extension keys (such as `x-aliases`) the generic schema carries for our
//! own parsers.
//!
//! # [`Dialect::Generic`]
//! The generic schema minus its `x-` keys.
//!
//! # [`Dialect::Ollama`]
//! What llama.cpp's JSON-Schema-to-grammar converter enforces (Ollama and llama-server both use it).
//! Read from `common/json-schema-to-grammar.cpp`:
//! - Kept: `type` (a type array is a union: the converter copies the schema once per type, so
//!   `{"type": ["string", "null"], "minLength": 1}` keeps its length bound on the string branch),
//!   `enum`, `const`, `anyOf`, `properties`, `required`, `additionalProperties` (`false`, or a schema
//!   for a map with string keys), `items`, `minItems`, `maxItems`, `description` (ignored by the
//!   converter but harmless, and it documents the request), `pattern` (anchored `^...$`),
//!   `minLength`/`maxLength` with a string type, `minimum`/`maximum`/`exclusiveMinimum`/
//!   `exclusiveMaximum` with an integer type and integral bounds, `format` for `date`, `time`,
//!   `date-time` and `uuid`.
//! - `oneOf` becomes `anyOf` when its branches are disjoint (the converter treats both alike, and
//!   llguidance-backed servers prefer `anyOf`); overlapping branches stay `oneOf`.
//! - Dropped (ignored or mishandled by the converter): bounds on `number`, `uniqueItems`,
//!   `multipleOf`, other `format`s, `examples`, `default`, `title`, `$schema`, `$comment`, `not`,
//!   `allOf`, `if`/`then`/`else`, `patternProperties`, `minProperties`/`maxProperties`, ...
//! - Errors: a schema with no `type`, `enum`, `const` or `anyOf`/`oneOf` (the converter either fails on
//!   it or reads it as "any object"), such as `{}` or `true`; an object with arbitrary keys *and*
//!   arbitrary values; an array without `items`; `$ref`; constraining keywords beside `anyOf`/`oneOf`
//!   (the converter ignores them); a `pattern` that is not anchored with `^...$` or that uses syntax the
//!   converter copies verbatim into the grammar (`\d`, `\w`, `\s`, `\b`, back-references, look-arounds).
//!
//! # [`Dialect::OpenAiStrict`]
//! OpenAI structured outputs with `"strict": true`:
//! - The root must be an object (`{"items": [...]}`, the list shape, is one).
//! - Every object lists all its properties in `required` and has `"additionalProperties": false`.
//!   A property the generic schema leaves optional keeps its schema: an `Option<T>` field already
//!   accepts `null`, and a `#[serde(default)]` field must then be given a value, which serde accepts
//!   (making it nullable instead would let the model write a `null` that serde rejects).
//! - `oneOf` becomes `anyOf` when its branches are disjoint (tagged variants with distinct `const`
//!   tags, or disjoint types); overlapping branches are an error.
//! - A scalar `const` (a variant's tag) is sent as a one-value `enum` with its type
//!   (`{"type": "string", "enum": ["definition"]}`), the form OpenAI documents.
//! - Kept: `type`, `properties`, `required`, `additionalProperties`, `items`, `enum`, `const`, `anyOf`,
//!   `description`, `pattern`, `format` (`date-time`, `time`, `date`, `duration`, `email`, `hostname`,
//!   `ipv4`, `ipv6`, `uuid`), `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`,
//!   `multipleOf`, `minItems`, `maxItems`: the keywords OpenAI documents as supported. Everything else
//!   (`minLength`/`maxLength` included, which OpenAI does not list) is dropped.
//! - Errors: a root that is not an object, maps with arbitrary keys, `{}`/`true`, `$ref`, arrays without
//!   `items`, more than [`OPENAI_MAX_DEPTH`] levels of nested objects.
//!
//! # [`Dialect::Anthropic`]
//! Anthropic structured outputs (`output_config.format`, the beta `output_format`) and strict tool
//! input schemas, as its structured-outputs documentation lists them:
//! - The root must be an object (the list shape is one), every object gets
//!   `"additionalProperties": false` (the only value accepted); optional properties stay optional.
//! - `oneOf` becomes `anyOf` when its branches are disjoint; overlapping branches are an error.
//! - Kept: `type`, `properties`, `required`, `additionalProperties`, `items`, `enum` (of scalars),
//!   `const`, `anyOf`, `description`, `format` (`date-time`, `time`, `date`, `duration`, `email`,
//!   `hostname`, `uri`, `ipv4`, `ipv6`, `uuid`), `minItems` of 0 or 1 (a larger bound goes out as 1),
//!   and `pattern` when it uses no back-reference, look-around or word boundary.
//! - Dropped: `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`, `multipleOf`,
//!   `minLength`, `maxLength`, `maxItems`, `uniqueItems`, other `format`s, patterns it cannot compile,
//!   `title`, `examples`, `default`, ...
//! - Errors: a root that is not an object, maps with arbitrary keys, `{}`/`true`, `$ref`, arrays
//!   without `items`, tuples, an `enum` listing objects or arrays.
//!
//! # [`Dialect::Gemini`]
//! Gemini's `responseJsonSchema`, as its structured-output documentation lists the keywords:
//! - Any root. `oneOf` and `anyOf` both go out as `anyOf` (Gemini reads `oneOf` as `anyOf`; a value
//!   matching two branches is still refused locally).
//! - A string or number `const` goes out as a one-value `enum`; Gemini's `enum` takes strings and
//!   numbers only, so an `enum` or `const` with other values is dropped (the type stays).
//! - Kept: `type` (a list with `"null"` is how a value is made nullable), `properties`, `required`,
//!   `additionalProperties` (`false` or a schema), `items`, `prefixItems` (a tuple's `items` list is
//!   sent as one), `minItems`, `maxItems`, `minimum`, `maximum`, `description`, `format` (`date-time`,
//!   `date`, `time`).
//! - Dropped: `minLength`, `maxLength`, `pattern`, `exclusiveMinimum`, `exclusiveMaximum`,
//!   `multipleOf`, `uniqueItems`, `title`, `examples`, `default`, other `format`s, ...
//! - Errors: `{}`/`true`, `$ref`, an object with arbitrary keys and values, arrays without `items`.

use super::builder::GROUNDED;
use super::node::types_of;
use super::Dialect;
use crate::error::SchemaError;
use serde_json::{Map, Value};

/// The deepest nesting of objects OpenAI's strict mode accepts.
pub const OPENAI_MAX_DEPTH: usize = 10;

/// Renders `generic` (a schema following the generic convention) for `dialect`.
///
/// ```
/// use llm_extract::schema::{dialect, Dialect};
/// use serde_json::json;
///
/// let generic = json!({
///     "type": "object",
///     "properties": { "nickname": { "type": ["string", "null"], "maxLength": 20 } },
///     "required": [],
///     "additionalProperties": false,
///     "x-aliases": { "nick": "nickname" }
/// });
/// let strict = dialect::render(&generic, Dialect::OpenAiStrict).unwrap();
/// assert_eq!(strict, json!({
///     "type": "object",
///     "properties": { "nickname": { "type": ["string", "null"] } },
///     "required": ["nickname"],
///     "additionalProperties": false
/// }));
/// ```
pub fn render(generic: &Value, dialect: Dialect) -> Result<Value, SchemaError> {
    let root = Pointer::default();
    match dialect {
        Dialect::Generic => Ok(strip_extensions(generic)),
        Dialect::Ollama => Ollama { grounding: false }.schema(generic, &root),
        Dialect::OpenAiStrict => {
            let rendered = OpenAiStrict.schema(generic, &root, 0)?;
            if rendered.get("type").and_then(Value::as_str) != Some("object") {
                return Err(OpenAiStrict.unsupported(
                    "a root that is not an object",
                    &root,
                    "ask for a struct (wrap the value in one), or extract many items at once \
                     (the list shape wraps them in an object)",
                ));
            }
            Ok(rendered)
        }
        Dialect::Anthropic => {
            let rendered = Anthropic.schema(generic, &root)?;
            if rendered.get("type").and_then(Value::as_str) != Some("object") {
                return Err(Anthropic.unsupported(
                    "a root that is not an object",
                    &root,
                    "ask for a struct (wrap the value in one), or extract many items at once \
                     (the list shape wraps them in an object)",
                ));
            }
            Ok(rendered)
        }
        Dialect::Gemini => Gemini.schema(generic, &root),
    }
}

/// [`render`], except that [`Dialect::Ollama`] keeps the grounding marks (`"x-grounded": true`, see
/// [`GROUNDED`]) on the strings that must be spans of the source: the schema a backend that grounds while
/// decoding (the embedded engine, whose dialect is Ollama's) turns into its grammar. The other dialects
/// are rendered as by [`render`]: their servers only see what they enforce.
///
/// # Errors
/// As [`render`].
pub fn render_grounded(generic: &Value, dialect: Dialect) -> Result<Value, SchemaError> {
    match dialect {
        Dialect::Ollama => Ollama { grounding: true }.schema(generic, &Pointer::default()),
        other => render(generic, other),
    }
}

/// A JSON pointer into the generic schema, for error messages.
#[derive(Debug, Clone, Default)]
struct Pointer(String);

impl Pointer {
    fn child(&self, token: &str) -> Pointer {
        let escaped = super::node::escape_token(token);
        Pointer(format!("{}/{}", self.0, escaped))
    }

    fn index(&self, index: usize) -> Pointer {
        Pointer(format!("{}/{}", self.0, index))
    }

    /// The pointer as written in messages: the root is `/`.
    fn shown(&self) -> String {
        if self.0.is_empty() {
            "/".to_owned()
        } else {
            self.0.clone()
        }
    }
}

/// Keywords whose value is one subschema.
const SUBSCHEMA: &[&str] = &[
    "items",
    "additionalProperties",
    "additionalItems",
    "unevaluatedItems",
    "unevaluatedProperties",
    "contains",
    "propertyNames",
    "not",
    "if",
    "then",
    "else",
];
/// Keywords whose value maps names to subschemas.
const SUBSCHEMA_MAP: &[&str] = &[
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
];
/// Keywords whose value is a list of subschemas.
const SUBSCHEMA_LIST: &[&str] = &["anyOf", "oneOf", "allOf", "prefixItems"];

/// Keywords that only annotate: they may sit beside `anyOf`/`oneOf` without changing what is valid.
const ANNOTATIONS: &[&str] = &[
    "description",
    "title",
    "examples",
    "default",
    "$comment",
    "$schema",
    "$id",
    "deprecated",
    "readOnly",
    "writeOnly",
];

fn is_extension(key: &str) -> bool {
    key.starts_with("x-")
}

/// The generic schema minus every `x-` key (only keys of schemas: a property named `x-id` stays).
fn strip_extensions(schema: &Value) -> Value {
    let Value::Object(map) = schema else {
        return schema.clone();
    };
    let mut out = Map::with_capacity(map.len());
    for (key, value) in map {
        if is_extension(key) {
            continue;
        }
        let value = if SUBSCHEMA.contains(&key.as_str()) {
            match value {
                Value::Array(items) => Value::Array(items.iter().map(strip_extensions).collect()),
                other => strip_extensions(other),
            }
        } else if SUBSCHEMA_MAP.contains(&key.as_str()) {
            match value {
                Value::Object(entries) => Value::Object(
                    entries
                        .iter()
                        .map(|(name, sub)| (name.clone(), strip_extensions(sub)))
                        .collect(),
                ),
                other => other.clone(),
            }
        } else if SUBSCHEMA_LIST.contains(&key.as_str()) {
            match value {
                Value::Array(items) => Value::Array(items.iter().map(strip_extensions).collect()),
                other => other.clone(),
            }
        } else {
            value.clone()
        };
        out.insert(key.clone(), value);
    }
    Value::Object(out)
}

/// The union keyword of a schema, if it has one.
fn union_of(schema: &Map<String, Value>) -> Option<(&'static str, &Vec<Value>)> {
    ["anyOf", "oneOf"]
        .into_iter()
        .find_map(|keyword| match schema.get(keyword) {
            Some(Value::Array(branches)) => Some((keyword, branches)),
            _ => None,
        })
}

/// What a dialect needs to say in its errors.
trait DialectName {
    const NAME: &'static str;

    fn unsupported(&self, what: &str, path: &Pointer, hint: &str) -> SchemaError {
        SchemaError::Unsupported {
            dialect: Self::NAME,
            what: what.to_owned(),
            path: path.shown(),
            hint: hint.to_owned(),
        }
    }

    /// The errors shared by both restricted dialects: schemas that accept anything, and references.
    fn check_expressible(&self, schema: &Value, path: &Pointer) -> Result<(), SchemaError> {
        let Value::Object(map) = schema else {
            let what = if schema == &Value::Bool(false) {
                "a schema that accepts nothing (false)"
            } else {
                "any JSON value (true or {})"
            };
            return Err(self.unsupported(what, path, ANY_VALUE_HINT));
        };
        if map.contains_key("$ref") {
            return Err(self.unsupported(
                "a $ref",
                path,
                "inline the referenced schema (the derive inlines every type)",
            ));
        }
        if let Some((keyword, _)) = union_of(map) {
            if let Some(sibling) = map.keys().find(|key| {
                !is_extension(key) && *key != keyword && !ANNOTATIONS.contains(&key.as_str())
            }) {
                return Err(self.unsupported(
                    &format!("\"{sibling}\" beside \"{keyword}\" (the server ignores it)"),
                    path,
                    &format!("move \"{sibling}\" into every branch of \"{keyword}\""),
                ));
            }
            return Ok(());
        }
        if !(map.contains_key("type") || map.contains_key("enum") || map.contains_key("const")) {
            return Err(self.unsupported(
                "a schema without \"type\", \"enum\" or \"const\" (any JSON value)",
                path,
                ANY_VALUE_HINT,
            ));
        }
        let types = types_of(map);
        if map.get("type").is_some() && types.is_empty() {
            return Err(self.unsupported(
                "a \"type\" that is neither a type name nor a list of them",
                path,
                "fix the schema",
            ));
        }
        let constrained_by_values = map.contains_key("enum") || map.contains_key("const");
        if !constrained_by_values && types.contains(&"array") && !map.contains_key("items") {
            return Err(self.unsupported(
                "an array of any values (no \"items\")",
                path,
                "give the sequence a concrete item type",
            ));
        }
        Ok(())
    }
}

const ANY_VALUE_HINT: &str =
    "give the field a concrete type instead of serde_json::Value (a struct, an enum, a String holding JSON)";

/// llama.cpp's JSON-Schema-to-grammar subset.
struct Ollama {
    /// Keep the grounding marks (see [`render_grounded`]).
    grounding: bool,
}

impl DialectName for Ollama {
    const NAME: &'static str = "ollama";
}

/// `format` values llama.cpp turns into grammar rules.
const OLLAMA_FORMATS: &[&str] = &["date", "time", "date-time", "uuid"];

impl Ollama {
    fn schema(&self, schema: &Value, path: &Pointer) -> Result<Value, SchemaError> {
        self.check_expressible(schema, path)?;
        let Value::Object(map) = schema else {
            return Ok(schema.clone());
        };
        if let Some((keyword, branches)) = union_of(map) {
            return self.union(map, keyword, branches, path);
        }
        let types = types_of(map);
        let has = |name: &str| types.contains(&name);
        if has("object") && !map.contains_key("enum") && !map.contains_key("const") {
            let open = matches!(
                map.get("additionalProperties"),
                None | Some(Value::Bool(true))
            );
            if !map.contains_key("properties") && open {
                return Err(self.unsupported(
                    "an object with arbitrary keys and values",
                    path,
                    "use a struct with named fields, or a map whose values have a concrete type",
                ));
            }
        }

        let mut out = Map::with_capacity(map.len());
        for (key, value) in map {
            let keep = match key.as_str() {
                "type" | "enum" | "const" | "description" | "required" | "minItems"
                | "maxItems" => true,
                GROUNDED => self.grounding && value == &Value::Bool(true),
                "properties" => {
                    let Value::Object(properties) = value else {
                        continue;
                    };
                    let mut rendered = Map::with_capacity(properties.len());
                    for (name, sub) in properties {
                        let sub_path = path.child("properties").child(name);
                        rendered.insert(name.clone(), self.schema(sub, &sub_path)?);
                    }
                    out.insert(key.clone(), Value::Object(rendered));
                    continue;
                }
                "additionalProperties" => match value {
                    Value::Bool(false) => true,
                    Value::Bool(true) => {
                        if map.contains_key("properties") {
                            return Err(self.unsupported(
                                "an object that allows extra keys with any value",
                                path,
                                "close the object (\"additionalProperties\": false)",
                            ));
                        }
                        continue;
                    }
                    sub => {
                        let rendered = self.schema(sub, &path.child(key))?;
                        out.insert(key.clone(), rendered);
                        continue;
                    }
                },
                "items" => {
                    let rendered = match value {
                        Value::Array(tuple) => Value::Array(
                            tuple
                                .iter()
                                .enumerate()
                                .map(|(i, sub)| self.schema(sub, &path.child(key).index(i)))
                                .collect::<Result<_, _>>()?,
                        ),
                        sub => self.schema(sub, &path.child(key))?,
                    };
                    out.insert(key.clone(), rendered);
                    continue;
                }
                "pattern" => {
                    if let Value::String(pattern) = value {
                        self.check_pattern(pattern, &path.child(key))?;
                    }
                    types.is_empty() || has("string")
                }
                "minLength" | "maxLength" => has("string"),
                "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum" => {
                    has("integer") && is_integral(value)
                }
                "format" => value
                    .as_str()
                    .is_some_and(|format| OLLAMA_FORMATS.contains(&format)),
                _ => false,
            };
            if keep {
                out.insert(key.clone(), value.clone());
            }
        }
        Ok(Value::Object(out))
    }

    fn union(
        &self,
        map: &Map<String, Value>,
        keyword: &str,
        branches: &[Value],
        path: &Pointer,
    ) -> Result<Value, SchemaError> {
        let rendered = branches
            .iter()
            .enumerate()
            .map(|(i, branch)| self.schema(branch, &path.child(keyword).index(i)))
            .collect::<Result<Vec<_>, _>>()?;
        let keyword = if keyword == "oneOf" && pairwise_disjoint(branches) {
            "anyOf"
        } else {
            keyword
        };
        let mut out = Map::new();
        out.insert(keyword.to_owned(), Value::Array(rendered));
        if let Some(description) = map.get("description") {
            out.insert("description".to_owned(), description.clone());
        }
        Ok(Value::Object(out))
    }

    /// llama.cpp fails on unanchored patterns and copies escapes it does not know into the grammar.
    fn check_pattern(&self, pattern: &str, path: &Pointer) -> Result<(), SchemaError> {
        // The closing `$` must not be escaped: `\$` is a literal dollar sign.
        let anchored_end = pattern
            .strip_suffix('$')
            .is_some_and(|before| before.chars().rev().take_while(|c| *c == '\\').count() % 2 == 0);
        if !(pattern.starts_with('^') && anchored_end) {
            return Err(self.unsupported(
                &format!("the unanchored pattern {pattern:?}"),
                path,
                "anchor it as ^...$ (write ^.*(...).*$ to search inside the string)",
            ));
        }
        let mut chars = pattern.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '\\' => match chars.next() {
                    Some(class @ ('d' | 'D' | 'w' | 'W' | 's' | 'S' | 'b' | 'B')) => {
                        return Err(self.unsupported(
                            &format!("the escape \\{class} in the pattern {pattern:?}"),
                            path,
                            "spell the class out, e.g. [0-9] for \\d, [a-zA-Z0-9_] for \\w, [ \\t\\n] for \\s",
                        ));
                    }
                    Some(digit) if digit.is_ascii_digit() => {
                        return Err(self.unsupported(
                            &format!("the back-reference \\{digit} in the pattern {pattern:?}"),
                            path,
                            "remove the back-reference",
                        ));
                    }
                    _ => {}
                },
                '(' if chars.peek() == Some(&'?') => {
                    chars.next();
                    if chars.peek() != Some(&':') {
                        return Err(self.unsupported(
                            &format!("a look-around or inline flag in the pattern {pattern:?}"),
                            path,
                            "rewrite the pattern without (?...) groups other than (?:...)",
                        ));
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }
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

/// OpenAI structured outputs, strict mode.
struct OpenAiStrict;

impl DialectName for OpenAiStrict {
    const NAME: &'static str = "openai-strict";
}

/// `format` values OpenAI's strict mode documents.
const OPENAI_FORMATS: &[&str] = &[
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

impl OpenAiStrict {
    fn schema(&self, schema: &Value, path: &Pointer, depth: usize) -> Result<Value, SchemaError> {
        self.check_expressible(schema, path)?;
        let Value::Object(map) = schema else {
            return Ok(schema.clone());
        };
        if let Some((keyword, branches)) = union_of(map) {
            return self.union(map, keyword, branches, path, depth);
        }
        let types = types_of(map);
        let valued = map.contains_key("enum") || map.contains_key("const");
        if types.contains(&"object") && !valued {
            return self.object(map, path, depth);
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
        for (key, value) in map {
            let keep = match key.as_str() {
                "const" if scalar_const.is_some() => {
                    out.insert("enum".to_owned(), Value::Array(vec![value.clone()]));
                    continue;
                }
                "type" | "enum" | "const" | "description" | "pattern" | "minimum" | "maximum"
                | "exclusiveMinimum" | "exclusiveMaximum" | "multipleOf" | "minItems"
                | "maxItems" => true,
                "format" => value
                    .as_str()
                    .is_some_and(|format| OPENAI_FORMATS.contains(&format)),
                "items" => {
                    let Value::Array(_) = value else {
                        let rendered = self.schema(value, &path.child(key), depth)?;
                        out.insert(key.clone(), rendered);
                        continue;
                    };
                    return Err(self.unsupported(
                        "a tuple (\"items\" as a list)",
                        path,
                        "use a struct with named fields",
                    ));
                }
                _ => false,
            };
            if keep {
                out.insert(key.clone(), value.clone());
            }
        }
        Ok(Value::Object(out))
    }

    fn object(
        &self,
        map: &Map<String, Value>,
        path: &Pointer,
        depth: usize,
    ) -> Result<Value, SchemaError> {
        if depth >= OPENAI_MAX_DEPTH {
            return Err(self.unsupported(
                &format!("more than {OPENAI_MAX_DEPTH} levels of nested objects"),
                path,
                "flatten the type",
            ));
        }
        let map_values = !matches!(
            map.get("additionalProperties"),
            None | Some(Value::Bool(false))
        );
        let Some(Value::Object(properties)) = map.get("properties") else {
            let what = if map_values {
                "a map with arbitrary keys"
            } else {
                "an object with arbitrary keys"
            };
            return Err(self.unsupported(
                what,
                path,
                "use a struct with named fields, or a list of key/value structs",
            ));
        };
        if map_values {
            return Err(self.unsupported(
                "an object with extra keys beside its properties",
                path,
                "close the object (\"additionalProperties\": false)",
            ));
        }

        let mut rendered = Map::with_capacity(properties.len());
        for (name, sub) in properties {
            let sub_path = path.child("properties").child(name);
            rendered.insert(name.clone(), self.schema(sub, &sub_path, depth + 1)?);
        }
        let required = properties.keys().cloned().map(Value::String).collect();

        let mut out = Map::new();
        out.insert(
            "type".to_owned(),
            map.get("type").cloned().unwrap_or_default(),
        );
        if let Some(description) = map.get("description") {
            out.insert("description".to_owned(), description.clone());
        }
        out.insert("properties".to_owned(), Value::Object(rendered));
        out.insert("required".to_owned(), Value::Array(required));
        out.insert("additionalProperties".to_owned(), Value::Bool(false));
        Ok(Value::Object(out))
    }

    fn union(
        &self,
        map: &Map<String, Value>,
        keyword: &str,
        branches: &[Value],
        path: &Pointer,
        depth: usize,
    ) -> Result<Value, SchemaError> {
        if keyword == "oneOf" && !pairwise_disjoint(branches) {
            return Err(self.unsupported(
                "\"oneOf\" with branches a value could match twice",
                path,
                "make the variants disjoint: an internally tagged enum (#[serde(tag = \"type\")]) \
                 gives each variant a distinct tag",
            ));
        }
        let rendered = branches
            .iter()
            .enumerate()
            .map(|(i, branch)| self.schema(branch, &path.child(keyword).index(i), depth))
            .collect::<Result<Vec<_>, _>>()?;
        let mut out = Map::new();
        out.insert("anyOf".to_owned(), Value::Array(rendered));
        if let Some(description) = map.get("description") {
            out.insert("description".to_owned(), description.clone());
        }
        Ok(Value::Object(out))
    }
}

/// Anthropic structured outputs.
struct Anthropic;

impl DialectName for Anthropic {
    const NAME: &'static str = "anthropic";
}

/// `format` values Anthropic's structured outputs document.
const ANTHROPIC_FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "uri",
    "ipv4",
    "ipv6",
    "uuid",
];

impl Anthropic {
    fn schema(&self, schema: &Value, path: &Pointer) -> Result<Value, SchemaError> {
        self.check_expressible(schema, path)?;
        let Value::Object(map) = schema else {
            return Ok(schema.clone());
        };
        if let Some((keyword, branches)) = union_of(map) {
            if keyword == "oneOf" && !pairwise_disjoint(branches) {
                return Err(self.unsupported(
                    "\"oneOf\" with branches a value could match twice",
                    path,
                    "make the variants disjoint: an internally tagged enum (#[serde(tag = \"type\")]) \
                     gives each variant a distinct tag",
                ));
            }
            let rendered = branches
                .iter()
                .enumerate()
                .map(|(i, branch)| self.schema(branch, &path.child(keyword).index(i)))
                .collect::<Result<Vec<_>, _>>()?;
            return Ok(with_description(map, "anyOf", rendered));
        }
        let types = types_of(map);
        let valued = map.contains_key("enum") || map.contains_key("const");
        if types.contains(&"object") && !valued {
            return self.object(map, path);
        }
        if let Some(Value::Array(values)) = map.get("enum") {
            if values.iter().any(|v| v.is_object() || v.is_array()) {
                return Err(self.unsupported(
                    "an \"enum\" listing objects or arrays",
                    path,
                    "use an enum of strings or numbers",
                ));
            }
        }
        let mut out = Map::with_capacity(map.len());
        for (key, value) in map {
            let keep = match key.as_str() {
                "type" | "enum" | "const" | "description" => true,
                "format" => value
                    .as_str()
                    .is_some_and(|format| ANTHROPIC_FORMATS.contains(&format)),
                "pattern" => value.as_str().is_some_and(simple_pattern),
                "minItems" => {
                    // Only 0 and 1 are accepted: a larger bound goes out as 1 (weaker, still true).
                    let bound = value.as_u64().unwrap_or(0).min(1);
                    out.insert(key.clone(), Value::from(bound));
                    continue;
                }
                "items" => {
                    let Value::Array(_) = value else {
                        let rendered = self.schema(value, &path.child(key))?;
                        out.insert(key.clone(), rendered);
                        continue;
                    };
                    return Err(self.unsupported(
                        "a tuple (\"items\" as a list)",
                        path,
                        "use a struct with named fields",
                    ));
                }
                _ => false,
            };
            if keep {
                out.insert(key.clone(), value.clone());
            }
        }
        Ok(Value::Object(out))
    }

    fn object(&self, map: &Map<String, Value>, path: &Pointer) -> Result<Value, SchemaError> {
        let Some(Value::Object(properties)) = map.get("properties") else {
            return Err(self.unsupported(
                "an object with arbitrary keys",
                path,
                "use a struct with named fields, or a list of key/value structs",
            ));
        };
        if !matches!(
            map.get("additionalProperties"),
            None | Some(Value::Bool(false))
        ) {
            return Err(self.unsupported(
                "an object with extra keys beside its properties",
                path,
                "close the object (\"additionalProperties\": false)",
            ));
        }
        let mut rendered = Map::with_capacity(properties.len());
        for (name, sub) in properties {
            let sub_path = path.child("properties").child(name);
            rendered.insert(name.clone(), self.schema(sub, &sub_path)?);
        }
        let mut out = Map::new();
        out.insert(
            "type".to_owned(),
            map.get("type").cloned().unwrap_or_default(),
        );
        if let Some(description) = map.get("description") {
            out.insert("description".to_owned(), description.clone());
        }
        out.insert("properties".to_owned(), Value::Object(rendered));
        if let Some(required) = map.get("required") {
            out.insert("required".to_owned(), required.clone());
        }
        out.insert("additionalProperties".to_owned(), Value::Bool(false));
        Ok(Value::Object(out))
    }
}

/// Whether a regular expression avoids what Anthropic's structured outputs cannot compile:
/// back-references, look-arounds and word boundaries.
fn simple_pattern(pattern: &str) -> bool {
    let mut chars = pattern.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('b' | 'B') => return false,
                Some(digit) if digit.is_ascii_digit() && digit != '0' => return false,
                Some('k') => return false,
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

/// `{keyword: branches}` with the schema's description, if any.
fn with_description(map: &Map<String, Value>, keyword: &str, branches: Vec<Value>) -> Value {
    let mut out = Map::new();
    out.insert(keyword.to_owned(), Value::Array(branches));
    if let Some(description) = map.get("description") {
        out.insert("description".to_owned(), description.clone());
    }
    Value::Object(out)
}

/// Gemini's `responseJsonSchema`.
struct Gemini;

impl DialectName for Gemini {
    const NAME: &'static str = "gemini";
}

/// `format` values Gemini's JSON Schema support documents.
const GEMINI_FORMATS: &[&str] = &["date-time", "date", "time"];

impl Gemini {
    fn schema(&self, schema: &Value, path: &Pointer) -> Result<Value, SchemaError> {
        self.check_expressible(schema, path)?;
        let Value::Object(map) = schema else {
            return Ok(schema.clone());
        };
        if let Some((keyword, branches)) = union_of(map) {
            let rendered = branches
                .iter()
                .enumerate()
                .map(|(i, branch)| self.schema(branch, &path.child(keyword).index(i)))
                .collect::<Result<Vec<_>, _>>()?;
            return Ok(with_description(map, "anyOf", rendered));
        }
        let types = types_of(map);
        let valued = map.contains_key("enum") || map.contains_key("const");
        if types.contains(&"object")
            && !valued
            && !map.contains_key("properties")
            && matches!(
                map.get("additionalProperties"),
                None | Some(Value::Bool(true))
            )
        {
            return Err(self.unsupported(
                "an object with arbitrary keys and values",
                path,
                "use a struct with named fields, or a map whose values have a concrete type",
            ));
        }
        let enumerable = |value: &Value| value.is_string() || value.is_number();
        let mut out = Map::with_capacity(map.len());
        if let (Some(value), false) = (map.get("const"), map.contains_key("type")) {
            out.insert("type".to_owned(), Value::from(json_type(&value)));
        }
        for (key, value) in map {
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
                    // Not expressible: the types of the values still narrow what is sent.
                    Some(values) if !map.contains_key("type") => {
                        let mut names: Vec<&str> = Vec::new();
                        for name in values.iter().map(|v| json_type(&v)) {
                            if !names.contains(&name) {
                                names.push(name);
                            }
                        }
                        out.insert("type".to_owned(), Value::from(names));
                    }
                    _ => {}
                },
                "format"
                    if value
                        .as_str()
                        .is_some_and(|format| GEMINI_FORMATS.contains(&format)) =>
                {
                    out.insert(key.clone(), value.clone());
                }
                "properties" => {
                    let Value::Object(properties) = value else {
                        continue;
                    };
                    let mut rendered = Map::with_capacity(properties.len());
                    for (name, sub) in properties {
                        let sub_path = path.child("properties").child(name);
                        rendered.insert(name.clone(), self.schema(sub, &sub_path)?);
                    }
                    out.insert(key.clone(), Value::Object(rendered));
                }
                "additionalProperties" => match value {
                    Value::Bool(false) => {
                        out.insert(key.clone(), value.clone());
                    }
                    Value::Bool(true) => {}
                    sub => {
                        let rendered = self.schema(sub, &path.child(key))?;
                        out.insert(key.clone(), rendered);
                    }
                },
                "items" | "prefixItems" => match value {
                    Value::Array(tuple) => {
                        let rendered = tuple
                            .iter()
                            .enumerate()
                            .map(|(i, sub)| self.schema(sub, &path.child(key).index(i)))
                            .collect::<Result<_, _>>()?;
                        out.insert("prefixItems".to_owned(), Value::Array(rendered));
                    }
                    sub => {
                        let rendered = self.schema(sub, &path.child(key))?;
                        out.insert(key.clone(), rendered);
                    }
                },
                _ => {}
            }
        }
        Ok(Value::Object(out))
    }
}

/// Whether no value can satisfy two of `branches` at once (so `oneOf` means the same as `anyOf`).
///
/// Conservative: `false` when disjointness cannot be shown.
pub(crate) fn pairwise_disjoint(branches: &[Value]) -> bool {
    branches
        .iter()
        .enumerate()
        .all(|(i, a)| branches.iter().skip(i + 1).all(|b| disjoint(a, b)))
}

fn disjoint(a: &Value, b: &Value) -> bool {
    let (Value::Object(a), Value::Object(b)) = (a, b) else {
        return false;
    };
    if let (Some(a_types), Some(b_types)) = (type_set(a), type_set(b)) {
        let overlap = a_types.iter().any(|x| {
            b_types.iter().any(|y| {
                x == y || (*x == "integer" && *y == "number") || (*x == "number" && *y == "integer")
            })
        });
        if !overlap {
            return true;
        }
    }
    if let (Some(a_values), Some(b_values)) = (value_set(a), value_set(b)) {
        if a_values.iter().all(|v| !b_values.contains(v)) {
            return true;
        }
    }
    tags_differ(a, b)
}

/// The types a schema can take, when it says (absent `type` means any type: `None`).
fn type_set(schema: &Map<String, Value>) -> Option<Vec<&str>> {
    if let Some(values) = value_set(schema) {
        return Some(values.iter().map(json_type).collect());
    }
    schema.get("type").map(|_| types_of(schema))
}

/// The values a schema allows, when it lists them (`const` or `enum`).
fn value_set(schema: &Map<String, Value>) -> Option<Vec<&Value>> {
    if let Some(value) = schema.get("const") {
        return Some(vec![value]);
    }
    match schema.get("enum") {
        Some(Value::Array(values)) => Some(values.iter().collect()),
        _ => None,
    }
}

fn json_type(value: &&Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Whether two object schemas require a common property to take values no value shares
/// (the discriminator of a tagged enum).
fn tags_differ(a: &Map<String, Value>, b: &Map<String, Value>) -> bool {
    let (Some(Value::Object(a_props)), Some(Value::Object(b_props))) =
        (a.get("properties"), b.get("properties"))
    else {
        return false;
    };
    let required = |schema: &Map<String, Value>, name: &str| {
        schema
            .get("required")
            .and_then(Value::as_array)
            .is_some_and(|names| names.iter().any(|n| n == name))
    };
    a_props.iter().any(|(name, a_sub)| {
        let Some(b_sub) = b_props.get(name) else {
            return false;
        };
        let (Value::Object(a_sub), Value::Object(b_sub)) = (a_sub, b_sub) else {
            return false;
        };
        match (value_set(a_sub), value_set(b_sub)) {
            (Some(x), Some(y)) => {
                required(a, name) && required(b, name) && x.iter().all(|v| !y.contains(v))
            }
            _ => false,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ollama(schema: Value) -> Result<Value, SchemaError> {
        render(&schema, Dialect::Ollama)
    }

    fn strict(schema: Value) -> Result<Value, SchemaError> {
        render(&schema, Dialect::OpenAiStrict)
    }

    fn unsupported_path(result: Result<Value, SchemaError>) -> String {
        match result {
            Err(SchemaError::Unsupported { path, .. }) => path,
            other => panic!("expected Unsupported, got {other:?}"),
        }
    }

    fn tagged() -> Value {
        json!({
            "oneOf": [
                {
                    "type": "object",
                    "properties": {
                        "type": { "const": "definition" },
                        "entity": { "type": "string" }
                    },
                    "required": ["type", "entity"],
                    "additionalProperties": false
                },
                {
                    "type": "object",
                    "description": "A relation.",
                    "properties": {
                        "type": { "const": "relationship" },
                        "subject": { "type": "string", "minLength": 1 }
                    },
                    "required": ["type", "subject"],
                    "additionalProperties": false
                }
            ],
            "description": "A fact."
        })
    }

    #[test]
    fn generic_strips_extension_keys_but_not_property_names() {
        let schema = json!({
            "type": "object",
            "x-aliases": { "nick": "x-id" },
            "properties": {
                "x-id": { "type": "string", "x-note": 1 },
                "tags": { "type": "array", "items": { "type": "string", "x-note": 2 } }
            },
            "required": ["x-id"],
            "additionalProperties": false
        });
        let rendered = render(&schema, Dialect::Generic).unwrap();
        assert_eq!(
            rendered,
            json!({
                "type": "object",
                "properties": {
                    "x-id": { "type": "string" },
                    "tags": { "type": "array", "items": { "type": "string" } }
                },
                "required": ["x-id"],
                "additionalProperties": false
            })
        );
    }

    #[test]
    fn ollama_keeps_key_order_and_drops_what_the_converter_ignores() {
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
        let rendered = ollama(schema).unwrap();
        assert_eq!(
            serde_json::to_string(&rendered).unwrap(),
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
    }

    #[test]
    fn ollama_turns_disjoint_one_of_into_any_of() {
        let rendered = ollama(tagged()).unwrap();
        assert!(rendered.get("oneOf").is_none());
        assert_eq!(
            rendered["anyOf"][1]["properties"]["subject"]["minLength"],
            1
        );
        assert_eq!(rendered["description"], "A fact.");
        let overlapping =
            json!({ "oneOf": [{ "type": "string" }, { "type": "string", "maxLength": 3 }] });
        assert!(ollama(overlapping).unwrap().get("oneOf").is_some());
    }

    #[test]
    fn ollama_rejects_what_llama_cpp_cannot_express() {
        let object = |field: Value| {
            json!({
                "type": "object",
                "properties": { "field": field },
                "required": ["field"],
                "additionalProperties": false
            })
        };
        for bad in [
            json!({}),
            json!(true),
            json!({ "description": "only a comment" }),
            json!({ "type": "object" }),
            json!({ "type": "object", "additionalProperties": true }),
            json!({ "type": "array" }),
            json!({ "$ref": "#/$defs/x" }),
            json!({ "type": "string", "pattern": "[a-z]+" }),
            json!({ "type": "string", "pattern": "^[a-z]+\\$" }),
            json!({ "type": "string", "pattern": "^\\d+$" }),
            json!({ "type": "string", "pattern": "^(?=a)a$" }),
            json!({ "type": "string", "pattern": "^(a)\\1$" }),
            json!({ "anyOf": [{ "type": "object", "properties": {}, "additionalProperties": false }], "properties": {} }),
        ] {
            let path = unsupported_path(ollama(object(bad.clone())));
            assert!(path.starts_with("/properties/field"), "{bad}: {path}");
        }
    }

    #[test]
    fn ollama_accepts_maps_with_typed_values_and_anchored_patterns() {
        let map = json!({ "type": "object", "additionalProperties": { "type": "integer" } });
        assert_eq!(ollama(map.clone()).unwrap(), map);
        let pattern = json!({ "type": "string", "pattern": "^(?:[a-z]|\\$)+$" });
        assert_eq!(ollama(pattern.clone()).unwrap(), pattern);
    }

    #[test]
    fn ollama_keeps_format_only_where_llama_cpp_has_a_rule() {
        let schema = json!({ "anyOf": [{ "type": "string", "format": "date-time" }, { "type": "string", "format": "email" }] });
        let rendered = ollama(schema).unwrap();
        assert_eq!(rendered["anyOf"][0]["format"], "date-time");
        assert!(rendered["anyOf"][1].get("format").is_none());
    }

    #[test]
    fn strict_requires_every_property_and_keeps_optional_ones_as_they_are() {
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
        assert_eq!(
            serde_json::to_string(&strict(schema).unwrap()).unwrap(),
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
    }

    #[test]
    fn strict_rejects_a_root_that_is_not_an_object() {
        assert_eq!(unsupported_path(strict(tagged())), "/");
        assert_eq!(
            unsupported_path(strict(json!({ "type": "string", "enum": ["a"] }))),
            "/"
        );
    }

    #[test]
    fn strict_turns_tagged_variants_into_any_of() {
        let list = json!({
            "type": "object",
            "properties": { "items": { "type": "array", "items": tagged() } },
            "required": ["items"],
            "additionalProperties": false
        });
        let rendered = strict(list).unwrap();
        let items = &rendered["properties"]["items"]["items"];
        assert_eq!(items["anyOf"].as_array().unwrap().len(), 2);
        assert!(items["anyOf"][1]["properties"]["subject"]
            .get("minLength")
            .is_none());
        assert_eq!(items["anyOf"][1]["description"], "A relation.");
    }

    #[test]
    fn strict_rejects_overlapping_one_of_maps_and_deep_nesting() {
        let wrap = |field: Value| json!({ "type": "object", "properties": { "f": field }, "required": ["f"], "additionalProperties": false });
        let overlapping = json!({ "oneOf": [{ "type": "number" }, { "type": "integer" }] });
        assert_eq!(unsupported_path(strict(wrap(overlapping))), "/properties/f");
        let map = json!({ "type": "object", "additionalProperties": { "type": "string" } });
        assert_eq!(unsupported_path(strict(wrap(map))), "/properties/f");
        let mut deep = json!({ "type": "string" });
        for _ in 0..OPENAI_MAX_DEPTH {
            deep = wrap(deep);
        }
        assert!(strict(deep.clone()).is_ok());
        assert!(strict(wrap(deep)).is_err());
    }

    #[test]
    fn disjointness_is_shown_by_types_values_or_tags() {
        assert!(pairwise_disjoint(&[
            json!({ "type": "string" }),
            json!({ "type": "null" })
        ]));
        assert!(pairwise_disjoint(&[
            json!({ "const": "a" }),
            json!({ "enum": ["b", "c"] })
        ]));
        assert!(pairwise_disjoint(&[
            json!({ "const": 1 }),
            json!({ "type": "string" })
        ]));
        assert!(!pairwise_disjoint(&[
            json!({ "const": 1 }),
            json!({ "type": "number" })
        ]));
        assert!(!pairwise_disjoint(&[
            json!({ "type": "object" }),
            json!({ "type": "object" })
        ]));
        assert!(pairwise_disjoint(tagged()["oneOf"].as_array().unwrap()));
        let untagged_required = json!({
            "type": "object",
            "properties": { "type": { "const": "a" } },
            "required": [],
        });
        let other = json!({
            "type": "object",
            "properties": { "type": { "const": "b" } },
            "required": [],
        });
        assert!(!pairwise_disjoint(&[untagged_required, other]));
    }

    #[test]
    fn anthropic_closes_objects_keeps_optional_ones_and_drops_bounds() {
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
        assert_eq!(
            serde_json::to_string(&render(&schema, Dialect::Anthropic).unwrap()).unwrap(),
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
    }

    #[test]
    fn anthropic_refuses_what_it_cannot_express() {
        let wrap = |field: Value| json!({ "type": "object", "properties": { "f": field }, "required": ["f"], "additionalProperties": false });
        for bad in [
            json!({}),
            json!({ "$ref": "#/$defs/x" }),
            json!({ "type": "object", "additionalProperties": { "type": "string" } }),
            json!({ "type": "array" }),
            json!({ "type": "array", "items": [{ "type": "string" }] }),
            json!({ "enum": [{ "a": 1 }] }),
            json!({ "oneOf": [{ "type": "number" }, { "type": "integer" }] }),
        ] {
            assert_eq!(
                unsupported_path(render(&wrap(bad.clone()), Dialect::Anthropic)),
                "/properties/f",
                "{bad}"
            );
        }
        assert_eq!(unsupported_path(render(&tagged(), Dialect::Anthropic)), "/");
        let list = json!({
            "type": "object",
            "properties": { "items": { "type": "array", "items": tagged() } },
            "required": ["items"],
            "additionalProperties": false
        });
        let rendered = render(&list, Dialect::Anthropic).unwrap();
        assert_eq!(
            rendered["properties"]["items"]["items"]["anyOf"][0]["properties"]["type"],
            json!({ "const": "definition" })
        );
    }

    #[test]
    fn gemini_sends_any_of_enums_of_scalars_and_numeric_bounds() {
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
        assert_eq!(
            serde_json::to_string(&render(&schema, Dialect::Gemini).unwrap()).unwrap(),
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
        let rendered = render(&tagged(), Dialect::Gemini).unwrap();
        assert_eq!(
            rendered["anyOf"][0]["properties"]["type"],
            json!({ "type": "string", "enum": ["definition"] })
        );
        assert!(render(&json!({ "type": "string" }), Dialect::Gemini).is_ok());
        for bad in [
            json!({}),
            json!({ "type": "object" }),
            json!({ "$ref": "#/x" }),
        ] {
            assert_eq!(
                unsupported_path(render(&bad, Dialect::Gemini)),
                "/",
                "{bad}"
            );
        }
    }

    #[test]
    fn error_messages_name_the_path_and_the_way_out() {
        let schema = json!({
            "type": "object",
            "properties": { "a/b": { "type": "string", "pattern": "x" } },
            "required": [],
            "additionalProperties": false
        });
        let message = ollama(schema).unwrap_err().to_string();
        assert_eq!(
            message,
            "the ollama dialect cannot express the unanchored pattern \"x\" at /properties/a~1b/pattern; \
             anchor it as ^...$ (write ^.*(...).*$ to search inside the string)"
        );
    }
}

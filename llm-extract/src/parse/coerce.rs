//! Schema-guided coercion: fixes a value only where the schema makes the intent certain.
//!
//! It runs only on a value that failed validation, walks value and schema together (the value is at
//! most [`super::ParseOptions::max_depth`] deep, so the walk is bounded), and records every change
//! with the JSON path where it happened:
//! - a numeric string for a number (digit groups too: `82_461_110`, which the lenient parser reads as
//!   text), `"true"`/`"false"` for a boolean, a number or boolean for a string;
//! - one value where an array is wanted, an array of one object or an obvious one-key wrapper
//!   (`{"result": {...}}`) around a wanted object, JSON text inside a string where an object is wanted;
//! - an enum value or a tag differing only in case or separators that matches exactly one variant,
//!   or an alias recorded in `x-aliases` beside the names;
//! - the variant of an externally tagged enum a one-key object is for (the key in any case), a unit
//!   variant written `{"name": null}` or `{"name": {}}` as its name, a string where a union has one
//!   branch for it;
//! - object keys: aliases from `x-aliases` and case-different keys renamed, keys a closed object does
//!   not allow dropped.
//!
//! A `$ref` is followed inside the schema being coerced to (its root), wherever a schema is read;
//! the walk follows the value, so it ends on a recursive schema too.
//!
//! [`is_schema_echo`] recognizes a model that answered with the schema instead of data.

use super::{literal, Fix, FixKind};
use crate::schema::node::{escape_token, resolve, types_of};
use serde_json::{Map, Number, Value};

/// Walks deeper than any value the parsers produce; a guard, not a limit anyone meets.
const MAX_DEPTH: usize = 512;

/// Coerces `value` toward `schema`, appending what was done to `fixes` (at byte `offset`).
pub(crate) fn coerce(value: &mut Value, schema: &Value, offset: usize, fixes: &mut Vec<Fix>) {
    let mut coercer = Coercer {
        root: schema,
        offset,
        fixes,
        path: String::new(),
    };
    coercer.walk(value, schema, 0);
}

/// Whether `value` is a JSON Schema rather than data (a model echoing the schema it was given).
pub(crate) fn is_schema_echo(value: &Value, schema: &Value) -> bool {
    if value == schema {
        return true;
    }
    let Some(object) = value.as_object() else {
        return false;
    };
    let declares = |key: &str| schema.get("properties").and_then(|p| p.get(key)).is_some();
    let looks_like_schema = object.contains_key("$schema")
        || (object.get("properties").is_some_and(Value::is_object)
            && (object.get("type").is_some_and(|t| t == "object")
                || object.get("required").is_some_and(Value::is_array)));
    looks_like_schema && !declares("properties") && !declares("$schema")
}

/// `firstName`, `first_name` and `First Name` are the same name.
pub(crate) fn same_name(a: &str, b: &str) -> bool {
    let normal = |s: &str| {
        s.chars()
            .filter(|c| !matches!(c, '_' | '-' | ' '))
            .flat_map(char::to_lowercase)
            .collect::<String>()
    };
    let a = normal(a);
    !a.is_empty() && a == normal(b)
}

struct Coercer<'r, 's> {
    /// The whole schema, which `$ref`s point into.
    root: &'s Value,
    offset: usize,
    fixes: &'r mut Vec<Fix>,
    /// JSON pointer of the value being walked.
    path: String,
}

fn fits(value: &Value, ty: &str) -> bool {
    match ty {
        "null" => value.is_null(),
        "boolean" => value.is_boolean(),
        "integer" => {
            value.is_i64() || value.is_u64() || value.as_f64().is_some_and(|f| f.fract() == 0.0)
        }
        "number" => value.is_number(),
        "string" => value.is_string(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        _ => true,
    }
}

fn is_null_schema(schema: &Value) -> bool {
    schema.get("type").is_some_and(|t| t == "null")
}

/// The tag of a variant of an internally tagged enum: its first property, a `const`.
fn tag_of(variant: &Value) -> Option<(&str, &Value)> {
    let (key, schema) = variant.get("properties")?.as_object()?.iter().next()?;
    Some((key.as_str(), schema.get("const")?))
}

/// The branch a string is for: the one string enum or `const` that names it (in any case, or by an
/// alias), else the one branch that takes any string.
fn pick_name<'s>(value: &Value, variants: &[&'s Value]) -> Option<&'s Value> {
    let text = value.as_str()?;
    let mut naming = variants.iter().filter(|v| name_in(v, text).is_some());
    if let (Some(variant), None) = (naming.next(), naming.next()) {
        return Some(variant);
    }
    let mut strings = variants.iter().filter(|v| {
        v.get("enum").is_none()
            && v.get("const").is_none()
            && v.as_object()
                .is_some_and(|map| types_of(map).contains(&"string"))
    });
    match (strings.next(), strings.next()) {
        (Some(variant), None) => Some(variant),
        _ => None,
    }
}

/// The variant of an externally tagged enum an object with one key is for: the one variant object
/// whose only property is that key (in any case, or by an alias).
fn external_variant<'s>(object: &Map<String, Value>, variants: &[&'s Value]) -> Option<&'s Value> {
    let mut keys = object.keys();
    let (Some(key), None) = (keys.next(), keys.next()) else {
        return None;
    };
    let mut matching = variants.iter().filter(|v| {
        let Some(properties) = v.get("properties").and_then(Value::as_object) else {
            return false;
        };
        let aliased = v
            .get("x-aliases")
            .and_then(|a| a.get(key.as_str()))
            .is_some();
        properties.len() == 1 && (aliased || properties.keys().any(|name| same_name(name, key)))
    });
    match (matching.next(), matching.next()) {
        (Some(variant), None) => Some(variant),
        _ => None,
    }
}

/// The name `schema` (a string `enum` or a `const`, with its `x-aliases`) asks for where `given`
/// is written: `given` itself, the canonical name of an alias, or the one name differing only in
/// case or separators.
fn name_in(schema: &Value, given: &str) -> Option<String> {
    let names: Vec<&str> = match (schema.get("enum"), schema.get("const")) {
        (Some(Value::Array(values)), _) => values.iter().filter_map(Value::as_str).collect(),
        (_, Some(Value::String(name))) => vec![name.as_str()],
        _ => return None,
    };
    if names.contains(&given) {
        return Some(given.to_owned());
    }
    let aliases = schema.get("x-aliases").and_then(Value::as_object);
    if let Some(canonical) = aliases.and_then(|a| a.get(given)).and_then(Value::as_str) {
        return Some(canonical.to_owned());
    }
    let mut matching = names.iter().filter(|name| same_name(name, given));
    match (matching.next(), matching.next()) {
        (Some(name), None) => Some((*name).to_owned()),
        _ => None,
    }
}

/// `"42"`, `" 42 "`, `"42.0"` as an integer.
fn integer_from(s: &str) -> Option<Number> {
    let s = s.trim();
    if let Ok(n) = s.parse::<i64>() {
        return Some(n.into());
    }
    if let Ok(n) = s.parse::<u64>() {
        return Some(n.into());
    }
    let f: f64 = s.parse().ok()?;
    integral(f)
}

fn integral(f: f64) -> Option<Number> {
    // i64::MAX as f64 rounds up to 2^63, which is out of range: compare strictly.
    (f.is_finite() && f.fract() == 0.0 && f >= i64::MIN as f64 && f < i64::MAX as f64)
        .then(|| Number::from(f as i64))
}

fn number_from(s: &str) -> Option<Number> {
    integer_from(s).or_else(|| {
        let s = s.trim();
        // Rust parses "inf" and "NaN"; a model's "inf" is not a number we should invent.
        if !s.bytes().any(|c| c.is_ascii_digit()) {
            return None;
        }
        Number::from_f64(s.parse().ok()?)
    })
}

impl<'s> Coercer<'_, 's> {
    fn record(&mut self, kind: FixKind, what: impl std::fmt::Display) {
        let at = if self.path.is_empty() {
            "the root"
        } else {
            &self.path
        };
        // A path holds the keys above the value, which the input may make as long as it likes:
        // copied whole into each of many fixes, it would take memory quadratic in the input.
        let at = shortened(at, MAX_PATH_SHOWN);
        let description = format!("at {at}: {what}");
        self.fixes.push(Fix::new(kind, self.offset, description));
    }

    fn walk(&mut self, value: &mut Value, schema: &'s Value, depth: usize) {
        if depth > MAX_DEPTH {
            return;
        }
        let Some(schema) = resolve(self.root, schema).as_object() else {
            return;
        };
        if let Some(branches) = schema
            .get("anyOf")
            .or_else(|| schema.get("oneOf"))
            .and_then(Value::as_array)
        {
            self.branches(value, branches, depth);
            return;
        }
        let types = types_of(schema);
        // A wrapper may take two steps: `{"result": [{...}]}`.
        for _ in 0..3 {
            if !types.is_empty() && !types.iter().any(|t| fits(value, t)) {
                self.convert(value, &types, schema);
            }
            match self.unwrap_key(value, schema) {
                Some(inner) => *value = inner,
                None => break,
            }
        }
        match value {
            Value::Object(map) => self.object(map, schema, depth),
            Value::Array(items) => {
                if let Some(item_schema) = schema.get("items") {
                    let len = self.path.len();
                    for (i, item) in items.iter_mut().enumerate() {
                        self.path.push('/');
                        self.path.push_str(&i.to_string());
                        self.walk(item, item_schema, depth + 1);
                        self.path.truncate(len);
                    }
                }
            }
            Value::String(s) => {
                let alias = schema
                    .get("x-aliases")
                    .and_then(|a| a.get(s.as_str()))
                    .and_then(Value::as_str);
                if let Some(canonical) = alias {
                    let canonical = canonical.to_owned();
                    self.record(
                        FixKind::EnumCase,
                        format_args!("read the alias {s:?} as the enum value {canonical:?}"),
                    );
                    *s = canonical;
                } else if let Some(variants) = schema.get("enum").and_then(Value::as_array) {
                    if !variants.iter().any(|v| v.as_str() == Some(s)) {
                        let mut matching = variants
                            .iter()
                            .filter_map(Value::as_str)
                            .filter(|v| same_name(v, s));
                        if let (Some(variant), None) = (matching.next(), matching.next()) {
                            let variant = variant.to_owned();
                            self.record(
                                FixKind::EnumCase,
                                format_args!("read {s:?} as the enum value {variant:?}"),
                            );
                            *s = variant;
                        }
                    }
                }
            }
            Value::Number(n) => {
                let wants_integer = types.contains(&"integer") && !types.contains(&"number");
                if wants_integer && !n.is_i64() && !n.is_u64() {
                    if let Some(int) = n.as_f64().and_then(integral) {
                        self.record(
                            FixKind::Coerced,
                            format_args!("read the number {n} as the integer {int}"),
                        );
                        *n = int;
                    }
                }
            }
            _ => {}
        }
    }

    fn branches(&mut self, value: &mut Value, branches: &'s [Value], depth: usize) {
        let root = self.root;
        let branches: Vec<&'s Value> = branches.iter().map(|b| resolve(root, b)).collect();
        if value.is_null() && branches.iter().any(|b| is_null_schema(b)) {
            return;
        }
        let variants: Vec<&Value> = branches
            .into_iter()
            .filter(|b| !is_null_schema(b))
            .collect();
        if let [only] = variants[..] {
            self.walk(value, only, depth + 1);
            return;
        }
        self.unit_variant_object(value, &variants);
        let picked = match value {
            Value::String(_) => pick_name(value, &variants),
            _ => self.pick_variant(value, &variants),
        };
        if let Some(variant) = picked {
            self.walk(value, variant, depth + 1);
        }
    }

    /// `{"Cash": null}` or `{"Cash": {}}` for the unit variant `"Cash"` of an externally tagged enum
    /// (serde reads the first too, the schema asks for the string): the name alone.
    fn unit_variant_object(&mut self, value: &mut Value, variants: &[&Value]) {
        let Some((key, inner)) = value
            .as_object()
            .filter(|map| map.len() == 1)
            .and_then(|map| map.iter().next())
        else {
            return;
        };
        let empty = inner.is_null() || inner.as_object().is_some_and(Map::is_empty);
        let declared = variants.iter().any(|v| {
            v.get("properties")
                .and_then(|p| p.get(key.as_str()))
                .is_some()
        });
        if !empty || declared || !variants.iter().any(|v| name_in(v, key).is_some()) {
            return;
        }
        let key = key.clone();
        let inner = inner.to_string();
        self.record(
            FixKind::Unwrapped,
            format_args!("read {{{key:?}: {inner}}} as the name {key:?}"),
        );
        *value = Value::String(key);
    }

    /// The variant of a tagged enum whose tag the value carries (fixing the tag's case if needed).
    fn pick_variant<'v>(&mut self, value: &mut Value, variants: &[&'v Value]) -> Option<&'v Value> {
        let object = value.as_object_mut()?;
        if let Some(variant) = variants
            .iter()
            .find(|v| tag_of(v).is_some_and(|(tag, name)| object.get(tag) == Some(name)))
        {
            return Some(variant);
        }
        let mut matching = variants.iter().filter(|v| {
            tag_of(v).is_some_and(|(tag, _)| {
                let given = object.get(tag).and_then(Value::as_str);
                let tag_schema = v.get("properties").and_then(|p| p.get(tag));
                matches!((given, tag_schema), (Some(g), Some(s)) if name_in(s, g).is_some())
            })
        });
        let (Some(variant), None) = (matching.next(), matching.next()) else {
            return external_variant(object, variants);
        };
        let (tag, name) = tag_of(variant)?;
        let old = object.insert(tag.to_owned(), name.clone());
        let old = old.unwrap_or_default();
        self.record(
            FixKind::EnumCase,
            format_args!("read the tag {tag:?} = {old} as {name}"),
        );
        Some(variant)
    }

    /// Converts a scalar or a shape to the first wanted type it can be read as.
    fn convert(&mut self, value: &mut Value, types: &[&str], schema: &Map<String, Value>) {
        for ty in types {
            let converted = match (*ty, &*value) {
                ("integer", Value::String(s)) => integer_from(s)
                    .or_else(|| literal::grouped_number(s).filter(|n| n.is_i64() || n.is_u64()))
                    .map(Value::Number),
                ("number", Value::String(s)) => number_from(s)
                    .or_else(|| literal::grouped_number(s))
                    .map(Value::Number),
                ("boolean", Value::String(s)) => match s.trim().to_ascii_lowercase().as_str() {
                    "true" => Some(Value::Bool(true)),
                    "false" => Some(Value::Bool(false)),
                    _ => None,
                },
                ("string", Value::Number(_) | Value::Bool(_)) => {
                    let text = value.to_string();
                    let allowed = schema
                        .get("enum")
                        .and_then(Value::as_array)
                        .is_none_or(|e| e.iter().any(|v| v.as_str() == Some(&text)));
                    allowed.then_some(Value::String(text))
                }
                ("object" | "array", Value::String(s)) => {
                    let parsed = serde_json::from_str::<Value>(s.trim()).ok();
                    parsed.filter(|p| fits(p, ty))
                }
                _ => None,
            };
            if let Some(new) = converted {
                self.record(
                    FixKind::Coerced,
                    format_args!("read {} as the {ty} {}", short(value), short(&new)),
                );
                *value = new;
                return;
            }
            match (*ty, &mut *value) {
                ("object", Value::Array(items)) if items.len() == 1 && items[0].is_object() => {
                    self.record(
                        FixKind::Unwrapped,
                        "took the object out of a one-element array",
                    );
                    *value = items.pop().unwrap_or_default();
                    return;
                }
                ("array", v) if !v.is_null() && !v.is_array() => {
                    self.record(
                        FixKind::WrappedInArray,
                        format_args!("wrapped {} in an array", short(v)),
                    );
                    *value = Value::Array(vec![v.take()]);
                    return;
                }
                _ => {}
            }
        }
    }

    /// `{"result": {...}}` around a wanted object: the inner value.
    fn unwrap_key(&mut self, value: &mut Value, schema: &Map<String, Value>) -> Option<Value> {
        let map = value.as_object_mut()?;
        let properties = schema.get("properties")?.as_object()?;
        if map.len() != 1 || schema.get("additionalProperties") != Some(&Value::Bool(false)) {
            return None;
        }
        let (key, inner) = map.iter().next()?;
        let is_known = properties.contains_key(key)
            || properties.keys().any(|p| same_name(p, key))
            || schema
                .get("x-aliases")
                .and_then(|a| a.get(key.as_str()))
                .is_some();
        let wraps_object = match inner {
            Value::Object(_) => true,
            Value::Array(items) => items.len() == 1 && items[0].is_object(),
            _ => false,
        };
        if is_known || !wraps_object {
            return None;
        }
        let key = key.clone();
        self.record(
            FixKind::Unwrapped,
            format_args!("took the value out of the wrapper key {key:?}"),
        );
        map.remove(&key)
    }

    fn object(
        &mut self,
        map: &mut Map<String, Value>,
        schema: &'s Map<String, Value>,
        depth: usize,
    ) {
        let properties = schema.get("properties").and_then(Value::as_object);
        if let Some(aliases) = schema.get("x-aliases").and_then(Value::as_object) {
            for (alias, canonical) in aliases {
                let Some(canonical) = canonical.as_str() else {
                    continue;
                };
                if !map.contains_key(canonical) {
                    if let Some(v) = map.remove(alias) {
                        self.record(
                            FixKind::RenamedKey,
                            format_args!("renamed the alias {alias:?} to {canonical:?}"),
                        );
                        map.insert(canonical.to_owned(), v);
                    }
                }
            }
        }
        if let Some(properties) = properties {
            let unknown: Vec<String> = map
                .keys()
                .filter(|k| !properties.contains_key(k.as_str()))
                .cloned()
                .collect();
            for key in unknown {
                let mut matching = properties.keys().filter(|p| same_name(p, &key));
                if let (Some(canonical), None) = (matching.next(), matching.next()) {
                    if !map.contains_key(canonical) {
                        if let Some(v) = map.remove(&key) {
                            self.record(
                                FixKind::RenamedKey,
                                format_args!("renamed the key {key:?} to {canonical:?}"),
                            );
                            map.insert(canonical.clone(), v);
                        }
                        continue;
                    }
                }
                if schema.get("additionalProperties") == Some(&Value::Bool(false)) {
                    map.remove(&key);
                    self.record(
                        FixKind::DroppedExtraKey,
                        format_args!("dropped the key {key:?}, which the schema does not allow"),
                    );
                }
            }
        }
        let additional = schema.get("additionalProperties").filter(|a| a.is_object());
        let len = self.path.len();
        for (key, child) in map.iter_mut() {
            let child_schema = properties.and_then(|p| p.get(key)).or(additional);
            if let Some(child_schema) = child_schema {
                self.path.push('/');
                self.path.push_str(&escape_token(key));
                self.walk(child, child_schema, depth + 1);
                self.path.truncate(len);
            }
        }
    }
}

/// The most bytes of a JSON path a fix's description shows.
const MAX_PATH_SHOWN: usize = 120;

/// `text` if it is at most `max` bytes long, else its start and end around `...`.
fn shortened(text: &str, max: usize) -> std::borrow::Cow<'_, str> {
    if text.len() <= max {
        return text.into();
    }
    let mut head = max / 2;
    while !text.is_char_boundary(head) {
        head -= 1;
    }
    let mut tail = text.len() - max / 2;
    while !text.is_char_boundary(tail) {
        tail += 1;
    }
    format!("{}...{}", &text[..head], &text[tail..]).into()
}

/// A value for a fix message, cut short.
fn short(value: &Value) -> String {
    let text = value.to_string();
    if text.len() <= 40 {
        return text;
    }
    let mut end = 37;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &text[..end])
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(mut value: Value, schema: Value) -> (Value, Vec<FixKind>) {
        let mut fixes = Vec::new();
        coerce(&mut value, &schema, 0, &mut fixes);
        (value, fixes.iter().map(|r| r.kind).collect())
    }

    fn object(properties: Value) -> Value {
        json!({"type":"object","properties":properties,"additionalProperties":false})
    }

    #[test]
    fn scalars_follow_the_schema() {
        let schema = object(json!({
            "n": {"type":"integer"}, "x": {"type":["number","null"]}, "ok": {"type":"boolean"},
            "s": {"type":"string"}, "tags": {"type":"array","items":{"type":"string"}}
        }));
        let (v, kinds) = run(
            json!({"n":"42","x":" 2.5","ok":"TRUE","s":12,"tags":"a"}),
            schema.clone(),
        );
        assert_eq!(v, json!({"n":42,"x":2.5,"ok":true,"s":"12","tags":["a"]}));
        assert_eq!(kinds.iter().filter(|k| **k == FixKind::Coerced).count(), 4);
        assert!(kinds.contains(&FixKind::WrappedInArray));
        let (v, kinds) = run(json!({"n":"4x2","ok":"yes","x":"inf"}), schema);
        assert_eq!(v, json!({"n":"4x2","ok":"yes","x":"inf"}));
        assert!(kinds.is_empty());
    }

    #[test]
    fn fixes_under_a_long_key_stay_short() {
        // Every coerced value below a key of `key` bytes used to copy the key into its fix.
        let schema = json!({"type":"object","additionalProperties":
            {"type":"object","additionalProperties":{"type":"integer"}}});
        for key in [10_000, 40_000] {
            let inner: Map<String, Value> = (0..key / 10)
                .map(|i| (format!("k{i}"), json!("1")))
                .collect();
            let mut value = json!({ "é".repeat(key / 2): inner });
            let mut fixes = Vec::new();
            coerce(&mut value, &schema, 0, &mut fixes);
            assert_eq!(fixes.len(), key / 10);
            let described: usize = fixes.iter().map(|r| r.description.len()).sum();
            assert!(
                described <= 200 * fixes.len(),
                "{described} bytes for a {key}-byte key"
            );
            assert!(fixes[0].description.starts_with("at /ééé"));
            assert!(fixes[0].description.contains("...éé"));
            assert!(fixes[0].description.contains("é/k0: read"));
        }
        assert_eq!(shortened("abc", 3), "abc");
        assert_eq!(shortened("abcdef", 4), "ab...ef");
    }

    #[test]
    fn enums_match_one_variant_or_none() {
        let schema = json!({"type":"string","enum":["positive","negative","very_positive"]});
        assert_eq!(run(json!("Positive"), schema.clone()).0, json!("positive"));
        assert_eq!(
            run(json!("Very Positive"), schema.clone()).0,
            json!("very_positive")
        );
        assert_eq!(
            run(json!("positive or negative"), schema).0,
            json!("positive or negative")
        );
    }

    #[test]
    fn wrappers_are_unwrapped() {
        let schema = object(json!({"a": {"type":"integer"}}));
        assert_eq!(
            run(json!({"result":{"a":1}}), schema.clone()).0,
            json!({"a":1})
        );
        assert_eq!(run(json!([{"a":1}]), schema.clone()).0, json!({"a":1}));
        assert_eq!(
            run(json!({"items":[{"a":1}]}), schema.clone()).0,
            json!({"a":1})
        );
        assert_eq!(run(json!("{\"a\":1}"), schema.clone()).0, json!({"a":1}));
        // Not obvious: a scalar behind the key, or two keys.
        assert_eq!(run(json!({"result":1}), schema.clone()).0, json!({}));
        assert_eq!(
            run(json!([{"a":1},{"a":2}]), schema).0,
            json!([{"a":1},{"a":2}])
        );
    }

    #[test]
    fn keys_are_renamed_or_dropped() {
        let mut schema =
            object(json!({"first_name": {"type":"string"}, "age": {"type":"integer"}}));
        schema["x-aliases"] = json!({"years": "age"});
        let (v, kinds) = run(json!({"firstName":"A","years":3,"status":"x"}), schema);
        assert_eq!(v, json!({"first_name":"A","age":3}));
        assert_eq!(
            kinds,
            [
                FixKind::RenamedKey,
                FixKind::RenamedKey,
                FixKind::DroppedExtraKey
            ]
        );
    }

    #[test]
    fn tagged_variants_and_options() {
        let schema = json!({"oneOf":[
            {"type":"object","properties":{"kind":{"const":"circle"},"r":{"type":"number"}},"required":["kind"],"additionalProperties":false},
            {"type":"object","properties":{"kind":{"const":"square"},"side":{"type":"integer"}},"required":["kind"],"additionalProperties":false}
        ]});
        let (v, _) = run(json!({"kind":"Square","side":"3","extra":1}), schema);
        assert_eq!(v, json!({"kind":"square","side":3}));
        let option = json!({"anyOf":[{"type":"integer"},{"type":"null"}]});
        assert_eq!(run(json!("7"), option.clone()).0, json!(7));
        assert_eq!(run(json!(null), option).0, json!(null));
    }

    /// An externally tagged enum: `"cash"`, `{"card": {"last4": string}}`, `{"gift": string}`.
    fn external() -> Value {
        let mut names = json!({"type":"string","enum":["cash","check"]});
        names["x-aliases"] = json!({"cheque": "check"});
        json!({"oneOf":[
            names,
            object(json!({"card": object(json!({"last4": {"type":"string"}}))})),
            object(json!({"gift": {"type":"string"}}))
        ]})
    }

    #[test]
    fn externally_tagged_names_and_keys() {
        let (v, kinds) = run(json!("Cash"), external());
        assert_eq!((v, kinds), (json!("cash"), vec![FixKind::EnumCase]));
        assert_eq!(run(json!("cheque"), external()).0, json!("check"));
        let (v, kinds) = run(json!({"cash": null}), external());
        assert_eq!((v, kinds), (json!("cash"), vec![FixKind::Unwrapped]));
        assert_eq!(run(json!({"Check": {}}), external()).0, json!("check"));
        // A one-key object whose key is a variant with data is that variant, in any case.
        let (v, _) = run(json!({"Card": {"Last4": 1234}}), external());
        assert_eq!(v, json!({"card": {"last4": "1234"}}));
        // Not certain: an unknown name, a unit name with data, two keys.
        assert_eq!(run(json!("coins"), external()).0, json!("coins"));
        assert_eq!(run(json!({"cash": 3}), external()).0, json!({"cash": 3}));
        assert_eq!(
            run(json!({"card": {}, "gift": "x"}), external()).0,
            json!({"card": {}, "gift": "x"})
        );
    }

    #[test]
    fn strings_go_to_the_one_branch_that_takes_them() {
        let untagged = json!({"anyOf":[
            object(json!({"address": {"type":"string"}})),
            {"type":"string"},
            {"type":"null"}
        ]});
        assert_eq!(run(json!("x"), untagged.clone()).1, Vec::<FixKind>::new());
        let two = json!({"anyOf":[{"type":"string","format":"date"},{"type":"string"}]});
        assert_eq!(run(json!("x"), two).1, Vec::<FixKind>::new());
    }

    #[test]
    fn tag_aliases_are_read_as_their_variant() {
        let schema = json!({"oneOf":[
            object(json!({"kind": {"const":"circle","x-aliases":{"round":"circle"}}})),
            object(json!({"kind": {"const":"square"}}))
        ]});
        let (v, kinds) = run(json!({"kind":"round"}), schema);
        assert_eq!(
            (v, kinds),
            (json!({"kind":"circle"}), vec![FixKind::EnumCase])
        );
    }

    #[test]
    fn schema_echo_is_recognized() {
        let schema = object(json!({"a": {"type":"integer"}}));
        assert!(is_schema_echo(&schema, &schema));
        assert!(is_schema_echo(
            &json!({"type":"object","properties":{"a":{"type":"integer"}}}),
            &json!({"type":"object","properties":{"b":{}}})
        ));
        assert!(!is_schema_echo(&json!({"a":1}), &schema));
        let declares = object(json!({"properties": {"type":"object"}, "type": {"type":"string"}}));
        assert!(!is_schema_echo(
            &json!({"type":"object","properties":{}}),
            &declares
        ));
    }

    #[test]
    fn integral_floats_become_integers() {
        let (v, kinds) = run(json!({"n": 3.0}), object(json!({"n":{"type":"integer"}})));
        assert_eq!(v, json!({"n": 3}));
        assert_eq!(kinds, [FixKind::Coerced]);
        assert_eq!(integral(1e300), None);
    }
}

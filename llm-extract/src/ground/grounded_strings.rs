//! Walking a schema and a value of it together to the grounded strings.

use super::{Source, Span};
use crate::schema::builder::GROUNDED;
use crate::schema::node::resolve;
use serde_json::Value;

/// Whether `schema` marks any string as grounded (`"x-grounded": true` anywhere in it).
pub fn has_grounded(schema: &Value) -> bool {
    match schema {
        Value::Object(map) => map.iter().any(|(key, value)| {
            (key == GROUNDED && value == &Value::Bool(true)) || has_grounded(value)
        }),
        Value::Array(values) => values.iter().any(has_grounded),
        _ => false,
    }
}

/// The JSON pointers of the grounded strings of `value` (a value of `schema`), with the strings.
///
/// Objects are followed through `properties`, arrays through `items`; for `anyOf`/`oneOf`, the branch
/// whose `const` properties (a tagged enum's tag) and type fit the value. `null` is not listed; a
/// string with no text is (it quotes nothing, so it is not found). A `$ref` is followed inside
/// `schema` (the root of the references); the walk follows the value, so it ends on a recursive
/// schema too.
pub fn grounded_paths<'v>(schema: &Value, value: &'v Value) -> Vec<(String, &'v str)> {
    let mut out = Vec::new();
    let mut walker = Walker {
        root: schema,
        out: &mut out,
    };
    walker.walk(schema, value, &mut String::new(), 0);
    out
}

/// Schemas nest no deeper than this (the parser's own depth limit is lower).
const MAX_DEPTH: usize = 256;

/// The walk of [`grounded_paths`]: the schema's root, and the paths found.
struct Walker<'s, 'o, 'v> {
    root: &'s Value,
    out: &'o mut Vec<(String, &'v str)>,
}

impl<'s, 'v> Walker<'s, '_, 'v> {
    fn walk(&mut self, schema: &'s Value, value: &'v Value, path: &mut String, depth: usize) {
        let Value::Object(map) = resolve(self.root, schema) else {
            return;
        };
        if depth > MAX_DEPTH {
            return;
        }
        for keyword in ["anyOf", "oneOf"] {
            if let Some(Value::Array(branches)) = map.get(keyword) {
                let root = self.root;
                if let Some(branch) = branches
                    .iter()
                    .find(|branch| fits(resolve(root, branch), value))
                {
                    self.walk(branch, value, path, depth + 1);
                }
                return;
            }
        }
        match value {
            Value::String(text) if map.get(GROUNDED) == Some(&Value::Bool(true)) => {
                self.out.push((path.clone(), text));
            }
            Value::Object(fields) => {
                let Some(Value::Object(properties)) = map.get("properties") else {
                    return;
                };
                for (name, field) in fields {
                    if let Some(property) = properties.get(name) {
                        let len = path.len();
                        path.push('/');
                        path.push_str(&crate::schema::node::escape_token(name));
                        self.walk(property, field, path, depth + 1);
                        path.truncate(len);
                    }
                }
            }
            Value::Array(elements) => {
                let Some(items) = map.get("items") else {
                    return;
                };
                for (i, element) in elements.iter().enumerate() {
                    let len = path.len();
                    path.push('/');
                    path.push_str(&i.to_string());
                    self.walk(items, element, path, depth + 1);
                    path.truncate(len);
                }
            }
            _ => {}
        }
    }
}

/// Whether a branch of `anyOf`/`oneOf` can describe `value`: its type allows the value's, and every
/// `const` property it has (a tag) is the value's.
fn fits(branch: &Value, value: &Value) -> bool {
    let type_ok = match branch.get("type") {
        Some(Value::String(ty)) => type_fits(ty, value),
        Some(Value::Array(types)) => types
            .iter()
            .filter_map(Value::as_str)
            .any(|ty| type_fits(ty, value)),
        _ => true,
    };
    let tags_ok = match (branch.get("properties"), value) {
        (Some(Value::Object(properties)), Value::Object(fields)) => {
            properties.iter().all(|(name, property)| {
                match (property.get("const"), fields.get(name)) {
                    (Some(tag), Some(field)) => tag == field,
                    (Some(_), None) => false,
                    _ => true,
                }
            })
        }
        _ => true,
    };
    type_ok && tags_ok
}

fn type_fits(ty: &str, value: &Value) -> bool {
    matches!(
        (ty, value),
        ("string", Value::String(_))
            | ("object", Value::Object(_))
            | ("array", Value::Array(_))
            | ("null", Value::Null)
            | ("boolean", Value::Bool(_))
            | ("number", Value::Number(_))
    ) || (ty == "integer" && (value.is_i64() || value.is_u64()))
}

impl Source<'_> {
    /// The span of every grounded value of `item` (a validated value of `schema`), in the item's
    /// order.
    ///
    /// ```
    /// use llm_extract::ground::{MatchKind, Source};
    /// use serde_json::json;
    ///
    /// let schema = json!({
    ///     "type": "object",
    ///     "properties": {
    ///         "name": {"type": "string", "x-grounded": true},
    ///         "role": {"type": "string"}
    ///     }
    /// });
    /// let source = Source::new("Dr. Watson, my friend");
    /// let spans = source.ground(&schema, &json!({"name": "Watson", "role": "friend"}));
    /// assert_eq!(spans.len(), 1);
    /// assert_eq!((spans[0].path.as_str(), spans[0].bytes.clone()), ("/name", 4..10));
    /// assert_eq!(spans[0].kind, MatchKind::Exact);
    /// ```
    pub fn ground(&self, schema: &Value, item: &Value) -> Vec<Span> {
        grounded_paths(schema, item)
            .into_iter()
            .map(|(path, text)| self.span(path, text))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn follows_references_of_a_recursive_schema() {
        let schema = json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "x-grounded": true},
                "reports": {"type": "array", "items": {"$ref": "#/$defs/Employee"}}
            },
            "$defs": {"Employee": {
                "type": "object",
                "properties": {
                    "name": {"type": "string", "x-grounded": true},
                    "boss": {"anyOf": [{"$ref": "#/$defs/Employee"}, {"type": "null"}]},
                    "reports": {"type": "array", "items": {"$ref": "#/$defs/Employee"}}
                }
            }}
        });
        let value = json!({"name": "Ada", "reports": [
            {"name": "Bob", "boss": {"name": "Cy", "boss": null, "reports": []}, "reports": [
                {"name": "Dee", "boss": null, "reports": []}
            ]}
        ]});
        let paths: Vec<String> = grounded_paths(&schema, &value)
            .into_iter()
            .map(|(path, text)| format!("{path}={text}"))
            .collect();
        assert_eq!(
            paths,
            [
                "/name=Ada",
                "/reports/0/name=Bob",
                "/reports/0/boss/name=Cy",
                "/reports/0/reports/0/name=Dee"
            ]
        );
    }

    #[test]
    fn follows_lists_options_and_tagged_variants() {
        let schema = json!({
            "oneOf": [
                {"type": "object", "properties": {
                    "kind": {"const": "person"},
                    "name": {"type": "string", "x-grounded": true},
                    "aliases": {"type": "array", "items": {"type": "string", "x-grounded": true}}
                }},
                {"type": "object", "properties": {
                    "kind": {"const": "place"},
                    "name": {"type": "string"},
                    "town": {"anyOf": [{"type": "string", "x-grounded": true}, {"type": "null"}]}
                }}
            ]
        });
        assert!(has_grounded(&schema));
        let person = json!({"kind": "person", "name": "Irene", "aliases": ["the woman", ""]});
        let paths: Vec<(String, &str)> = grounded_paths(&schema, &person);
        assert_eq!(
            paths,
            vec![
                ("/name".into(), "Irene"),
                ("/aliases/0".into(), "the woman"),
                ("/aliases/1".into(), "")
            ]
        );
        let place = json!({"kind": "place", "name": "Baker Street", "town": "London"});
        assert_eq!(
            grounded_paths(&schema, &place),
            vec![("/town".into(), "London")]
        );
        let nowhere = json!({"kind": "place", "name": "x", "town": null});
        assert!(grounded_paths(&schema, &nowhere).is_empty());
        assert!(!has_grounded(&json!({"type": "string"})));
    }
}

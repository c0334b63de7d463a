//! Reading one node of a schema: following local `$ref`s, the types a node admits, and the tokens
//! of JSON pointers. Every module that walks a schema's raw `Value` reads it through these, so a
//! schema with `$defs` and (possibly recursive) references reads the same everywhere.
//!
//! A reference is *local* when it starts with `#`: `#/$defs/Node`, `#/definitions/Node`, `#` (the
//! root) or any other JSON pointer into the root document, percent-encoded as URI fragments are. A
//! reference to another document (`https://...`, `other.json#/a`) is not local; [`target`] does not
//! follow it.

use serde_json::{Map, Value};

/// How many references [`resolve`] follows in a row before it gives up (a chain of `$ref`s that
/// only point at one another never reaches a schema).
const MAX_CHAIN: usize = 64;

/// The schema a local `reference` (`#/$defs/Node`) points at inside `root`, or `None` when the
/// reference is not local or points nowhere.
pub(crate) fn target<'a>(root: &'a Value, reference: &str) -> Option<&'a Value> {
    let fragment = reference.strip_prefix('#')?;
    if fragment.is_empty() {
        return Some(root);
    }
    let pointer = percent_decode(fragment)?;
    if !pointer.starts_with('/') {
        return None;
    }
    // `Value::pointer` unescapes `~1` and `~0` itself.
    root.pointer(&pointer)
}

/// `node` with its `$ref` chain followed inside `root`: the first schema along the chain that is not
/// a local reference. Keywords beside a `$ref` are not merged in (readers that generate text need
/// the referenced shape; validation reads the schema as written). A reference that points nowhere,
/// or a chain longer than [`MAX_CHAIN`], leaves the last node reached.
pub(crate) fn resolve<'a>(root: &'a Value, node: &'a Value) -> &'a Value {
    let mut current = node;
    for _ in 0..MAX_CHAIN {
        let Some(reference) = reference_of(current) else {
            return current;
        };
        match target(root, reference) {
            Some(next) => current = next,
            None => return current,
        }
    }
    current
}

/// The `$ref` of a schema object, if it has one.
pub(crate) fn reference_of(node: &Value) -> Option<&str> {
    node.get("$ref").and_then(Value::as_str)
}

/// The types a schema's `type` keyword names (empty when absent or malformed).
pub(crate) fn types_of(schema: &Map<String, Value>) -> Vec<&str> {
    match schema.get("type") {
        Some(Value::String(one)) => vec![one.as_str()],
        Some(Value::Array(many)) => many.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

/// One reference token of a JSON pointer (RFC 6901): `~` as `~0`, `/` as `~1`.
pub(crate) fn escape_token(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

/// Decodes `%XX` escapes (URI fragments percent-encode pointers, e.g. `#/$defs/a%20b`); `None` when
/// an escape is malformed or the bytes are not UTF-8.
fn percent_decode(text: &str) -> Option<String> {
    if !text.contains('%') {
        return Some(text.to_owned());
    }
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&byte) = bytes.get(i) {
        if byte == b'%' {
            let hex = bytes.get(i + 1..i + 3)?;
            let hex = std::str::from_utf8(hex).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(byte);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn local_references_point_into_the_root() {
        let root = json!({
            "$defs": { "Node": { "type": "object" }, "a b": { "type": "string" }, "x/y": { "type": "null" } },
            "definitions": { "Old": { "type": "integer" } },
            "properties": { "n": { "$ref": "#/$defs/Node" } }
        });
        assert_eq!(
            target(&root, "#/$defs/Node"),
            Some(&json!({ "type": "object" }))
        );
        assert_eq!(
            target(&root, "#/definitions/Old"),
            Some(&json!({ "type": "integer" }))
        );
        assert_eq!(
            target(&root, "#/$defs/a%20b"),
            Some(&json!({ "type": "string" }))
        );
        assert_eq!(
            target(&root, "#/$defs/x~1y"),
            Some(&json!({ "type": "null" }))
        );
        assert_eq!(target(&root, "#"), Some(&root));
        assert_eq!(
            target(&root, "#/properties/n/$ref"),
            Some(&json!("#/$defs/Node"))
        );
        assert_eq!(target(&root, "#/$defs/Missing"), None);
        assert_eq!(target(&root, "https://example.com/s.json"), None);
        assert_eq!(target(&root, "#/$defs/%zz"), None);
        assert_eq!(target(&root, "#Node"), None);
    }

    #[test]
    fn resolve_follows_chains_and_stops_on_cycles() {
        let root = json!({
            "$defs": {
                "A": { "$ref": "#/$defs/B" },
                "B": { "type": "string" },
                "Loop": { "$ref": "#/$defs/Loop" },
                "Dangling": { "$ref": "#/$defs/Nowhere" }
            }
        });
        let a = json!({ "$ref": "#/$defs/A" });
        assert_eq!(resolve(&root, &a), &json!({ "type": "string" }));
        let looping = json!({ "$ref": "#/$defs/Loop" });
        assert_eq!(resolve(&root, &looping), &json!({ "$ref": "#/$defs/Loop" }));
        let dangling = json!({ "$ref": "#/$defs/Dangling" });
        assert_eq!(
            resolve(&root, &dangling),
            &json!({ "$ref": "#/$defs/Nowhere" })
        );
        let plain = json!({ "type": "integer" });
        assert_eq!(resolve(&root, &plain), &plain);
    }

    #[test]
    fn types_and_tokens() {
        let one = json!({ "type": "string" });
        let many = json!({ "type": ["string", "null"] });
        assert_eq!(types_of(one.as_object().unwrap()), ["string"]);
        assert_eq!(types_of(many.as_object().unwrap()), ["string", "null"]);
        assert!(types_of(&Map::new()).is_empty());
        assert_eq!(escape_token("a/b~c"), "a~1b~0c");
    }
}

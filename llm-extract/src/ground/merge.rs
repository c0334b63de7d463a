//! Merging the items of several chunks or passes into one list, by identity.
//!
//! An item's identity is its key: the values of the properties marked `"x-key": true`
//! (`#[extract(key)]`), strings normalized (case, whitespace runs and typographic quotes ignored),
//! together with the tag of a tagged enum's variant. Items without key properties, and items whose key
//! properties are all missing, `null` or empty (the key was not in the text: nothing says two such items
//! are one), are identified by their whole value, so only exact duplicates (the same item read twice,
//! as in the overlap of two chunks) collapse. Items with equal identities become one: the spans
//! accumulate (each distinct span once), for every other property the first non-empty value wins,
//! and a later, different non-empty value is recorded as a [`Conflict`] rather than lost. Each item
//! costs one hash lookup: merging is linear in the number of items.

use super::Span;
use crate::schema::builder::KEY;
use crate::schema::node::resolve;
use serde::Serialize;
use serde_json::{Map, Value};
use std::collections::{HashMap, HashSet};

/// Two copies of one item that disagree on a property: the value kept and the one set aside.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Conflict {
    /// The item's identity, as the merge computed it.
    pub key: String,
    /// The property (a JSON pointer into the item).
    pub path: String,
    /// The value kept (the first non-empty one).
    pub kept: Value,
    /// The value that differed.
    pub other: Value,
}

/// Where a span is: its path and byte range (what makes two copies' spans the same span).
type SpanId = (String, usize, usize);

/// A merged item, its spans, and the spans it already has.
type Entry = (Value, Vec<Span>, HashSet<SpanId>);

/// Collects items and merges copies of the same item. See the [module](self) docs.
///
/// ```
/// use llm_extract::ground::Merger;
/// use serde_json::json;
///
/// let schema = json!({
///     "type": "object",
///     "properties": {"name": {"type": "string", "x-key": true}, "role": {"type": ["string", "null"]}}
/// });
/// let mut merger = Merger::new(&schema);
/// assert!(merger.add(json!({"name": "Sherlock Holmes", "role": null}), vec![]));
/// assert!(!merger.add(json!({"name": "sherlock  holmes", "role": "detective"}), vec![]));
/// let (items, conflicts) = merger.finish();
/// assert_eq!(items.len(), 1);
/// assert_eq!(items[0].0, json!({"name": "Sherlock Holmes", "role": "detective"}));
/// assert!(conflicts.is_empty());
/// ```
#[derive(Debug)]
pub struct Merger {
    keys: HashSet<String>,
    tags: HashSet<String>,
    items: Vec<Entry>,
    by_key: HashMap<String, usize>,
    conflicts: Vec<Conflict>,
}

impl Merger {
    /// A merger for items of `schema` (the schema of one item).
    pub fn new(schema: &Value) -> Self {
        let mut keys = HashSet::new();
        let mut tags = HashSet::new();
        key_properties(schema, schema, &mut keys, &mut tags, 0);
        Merger {
            keys,
            tags,
            items: Vec::new(),
            by_key: HashMap::new(),
            conflicts: Vec::new(),
        }
    }

    /// The properties that identify an item (empty: the whole value does).
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.keys.iter().map(String::as_str)
    }

    /// The identity of `item`: its key values (and variant tag), or its whole value when it has no
    /// key value (none of its key properties is there with a non-empty value).
    pub fn identity(&self, item: &Value) -> String {
        let mut parts = Vec::new();
        let keyed = match item {
            Value::Object(fields) => self
                .keys
                .iter()
                .any(|key| fields.get(key).is_some_and(|value| !is_empty(value))),
            _ => false,
        };
        if let (Value::Object(fields), true) = (item, keyed) {
            let mut names: Vec<&String> = fields.keys().collect();
            names.sort();
            for name in names {
                let Some(value) = fields.get(name) else {
                    continue;
                };
                let is_tag = self.tags.contains(name.as_str());
                if self.keys.contains(name.as_str()) || (is_tag && !self.keys.is_empty()) {
                    parts.push(format!("{name}={}", normalized(value)));
                }
            }
        }
        if parts.is_empty() {
            canonical(item)
        } else {
            parts.join("\u{1f}")
        }
    }

    /// Adds an item; `true` if its identity is new, `false` if it was merged into an earlier copy.
    pub fn add(&mut self, item: Value, spans: Vec<Span>) -> bool {
        let key = self.identity(&item);
        match self.by_key.get(&key).copied() {
            None => {
                let seen = spans.iter().map(span_id).collect();
                self.by_key.insert(key, self.items.len());
                self.items.push((item, spans, seen));
                true
            }
            Some(index) => {
                let Some((kept, kept_spans, seen)) = self.items.get_mut(index) else {
                    return false;
                };
                for span in spans {
                    if seen.insert(span_id(&span)) {
                        kept_spans.push(span);
                    }
                }
                if let (Value::Object(kept), Value::Object(other)) = (kept, item) {
                    merge_fields(&key, &self.keys, kept, other, &mut self.conflicts);
                }
                false
            }
        }
    }

    /// How many distinct items so far.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether no item was added.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The merged items in the order their first copy arrived, with their spans, and the conflicts.
    pub fn finish(self) -> (Vec<(Value, Vec<Span>)>, Vec<Conflict>) {
        let items = self
            .items
            .into_iter()
            .map(|(item, spans, _)| (item, spans))
            .collect();
        (items, self.conflicts)
    }
}

fn span_id(span: &Span) -> SpanId {
    (span.path.clone(), span.bytes.start, span.bytes.end)
}

fn merge_fields(
    key: &str,
    keys: &HashSet<String>,
    kept: &mut Map<String, Value>,
    other: Map<String, Value>,
    conflicts: &mut Vec<Conflict>,
) {
    for (name, value) in other {
        if is_empty(&value) {
            continue;
        }
        match kept.get_mut(&name) {
            Some(slot) if is_empty(slot) => *slot = value,
            Some(slot) => {
                let same = keys.contains(&name) || normalized(slot) == normalized(&value);
                if !same {
                    conflicts.push(Conflict {
                        key: key.to_owned(),
                        path: format!("/{}", crate::schema::node::escape_token(&name)),
                        kept: slot.clone(),
                        other: value,
                    });
                }
            }
            None => {
                kept.insert(name, value);
            }
        }
    }
}

/// Whether a value says nothing: `null`, a blank string, an empty array or object.
pub(crate) fn is_empty(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::String(text) => text.trim().is_empty(),
        Value::Array(values) => values.is_empty(),
        Value::Object(map) => map.is_empty(),
        _ => false,
    }
}

/// The names of the properties marked as keys, and of the tags (`const` properties), in an object
/// schema or any of its variants (`$ref`s followed inside `root`).
pub(crate) fn key_properties(
    root: &Value,
    schema: &Value,
    keys: &mut HashSet<String>,
    tags: &mut HashSet<String>,
    depth: usize,
) {
    if depth > 8 {
        return;
    }
    let schema = resolve(root, schema);
    for keyword in ["anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = schema.get(keyword) {
            for branch in branches {
                key_properties(root, branch, keys, tags, depth + 1);
            }
        }
    }
    if let Some(Value::Object(properties)) = schema.get("properties") {
        for (name, property) in properties {
            if is_key(resolve(root, property)) {
                keys.insert(name.clone());
            }
            if property.get("const").is_some() {
                tags.insert(name.clone());
            }
        }
    }
}

/// `"x-key": true` on the property, or on a branch of its nullable `anyOf`.
fn is_key(property: &Value) -> bool {
    property.get(KEY) == Some(&Value::Bool(true))
        || property
            .get("anyOf")
            .and_then(Value::as_array)
            .is_some_and(|branches| branches.iter().any(is_key))
}

/// A value with strings normalized and object keys sorted, as one string.
pub(crate) fn normalized(value: &Value) -> String {
    match value {
        Value::String(text) => {
            let folded: String = text
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
                .to_lowercase();
            folded
                .replace(['\u{2018}', '\u{2019}'], "'")
                .replace(['\u{201C}', '\u{201D}'], "\"")
        }
        other => canonical(other),
    }
}

/// `value` as JSON text with object keys sorted: equal values, equal text.
fn canonical(value: &Value) -> String {
    fn sorted(value: &Value) -> Value {
        match value {
            Value::Object(map) => {
                let mut names: Vec<&String> = map.keys().collect();
                names.sort();
                Value::Object(
                    names
                        .into_iter()
                        .filter_map(|name| Some((name.clone(), sorted(map.get(name)?))))
                        .collect(),
                )
            }
            Value::Array(values) => Value::Array(values.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    sorted(value).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ground::MatchKind;
    use serde_json::json;

    fn span(start: usize) -> Span {
        Span {
            path: "/name".into(),
            value: "x".into(),
            bytes: start..start + 1,
            chars: start..start + 1,
            kind: MatchKind::Exact,
        }
    }

    #[test]
    fn without_keys_exact_duplicates_collapse_and_spans_accumulate() {
        let schema = json!({"type": "object", "properties": {"name": {"type": "string"}}});
        let mut merger = Merger::new(&schema);
        assert!(merger.add(json!({"name": "Holmes"}), vec![span(0)]));
        assert!(!merger.add(json!({"name": "Holmes"}), vec![span(0), span(9)]));
        assert!(merger.add(json!({"name": "holmes"}), vec![]));
        let (items, conflicts) = merger.finish();
        assert_eq!(items.len(), 2);
        assert_eq!(items[0].1, vec![span(0), span(9)]);
        assert!(conflicts.is_empty());
    }

    #[test]
    fn keyed_items_merge_and_conflicts_are_kept() {
        let schema = json!({"type": "object", "properties": {
            "name": {"type": "string", "x-key": true},
            "role": {"type": "string"}
        }});
        let mut merger = Merger::new(&schema);
        merger.add(json!({"name": "Irene Adler", "role": "singer"}), vec![]);
        merger.add(
            json!({"name": "IRENE ADLER", "role": "adventuress"}),
            vec![],
        );
        let (items, conflicts) = merger.finish();
        assert_eq!(items.len(), 1);
        assert_eq!(items[0].0["role"], "singer");
        assert_eq!(conflicts.len(), 1);
        assert_eq!(conflicts[0].path, "/role");
        assert_eq!(conflicts[0].other, json!("adventuress"));
    }

    #[test]
    fn tagged_variants_with_equal_keys_stay_apart() {
        let schema = json!({"oneOf": [
            {"type": "object", "properties": {"type": {"const": "person"}, "name": {"type": "string", "x-key": true}}},
            {"type": "object", "properties": {"type": {"const": "place"}, "name": {"type": "string", "x-key": true}}}
        ]});
        let mut merger = Merger::new(&schema);
        merger.add(json!({"type": "person", "name": "Baker"}), vec![]);
        merger.add(json!({"type": "place", "name": "Baker"}), vec![]);
        assert_eq!(merger.len(), 2);
    }

    #[test]
    fn items_without_a_key_value_are_each_their_own_item() {
        let schema = json!({"oneOf": [
            {"type": "object", "properties": {"type": {"const": "person"},
             "name": {"type": ["string", "null"], "x-key": true}, "role": {"type": "string"}}},
            {"type": "object", "properties": {"type": {"const": "place"},
             "name": {"type": ["string", "null"], "x-key": true}, "role": {"type": "string"}}}
        ]});
        let mut merger = Merger::new(&schema);
        let unkeyed = [
            json!({"type": "person", "name": null, "role": "the cabman"}),
            json!({"type": "person", "name": "", "role": "the landlady"}),
            json!({"type": "person", "name": "  ", "role": "a constable"}),
            json!({"type": "person", "role": "the boy"}),
            json!({"type": "person", "name": null}),
            json!({"type": "person"}),
        ];
        for item in &unkeyed {
            assert!(merger.add(item.clone(), vec![]), "{item} merged away");
        }
        // The same unkeyed item read twice (the overlap of two chunks) is one item.
        assert!(!merger.add(unkeyed[0].clone(), vec![span(3)]));
        // A keyed item still merges with its copies, and never with an unkeyed one.
        assert!(merger.add(json!({"type": "person", "name": "Lestrade"}), vec![]));
        assert!(!merger.add(
            json!({"type": "person", "name": "LESTRADE", "role": "inspector"}),
            vec![]
        ));
        let (items, conflicts) = merger.finish();
        assert_eq!(items.len(), unkeyed.len() + 1);
        for (item, (kept, _)) in unkeyed.iter().zip(&items) {
            assert_eq!(item, kept);
        }
        assert_eq!(items[0].1, vec![span(3)]);
        assert!(conflicts.is_empty(), "{conflicts:?}");
    }
}

//! Which predicted item of a list answers which gold item.
//!
//! When the schema marks key properties on the items (`"x-key": true`, `#[extract(key)]`, read as
//! [`crate::ground::Merger`] reads them: the keys and any tag (`const`) properties), a predicted item
//! answers the gold item with the same key values (strings compared [`normalise`]d), each gold item
//! answered at most once. Otherwise items are paired by the assignment that maximises the number of
//! matched fields ([`assign`]): exact (the Hungarian algorithm, O(n³)) when the shorter list has at
//! most [`EXACT_LIMIT`] items, else greedy (the pair with the most matched fields first, O(n·m·log(n·m))).

use super::normalise::normalise;
pub use crate::ground::assign::{assign, EXACT_LIMIT};
use crate::ground::merge::key_properties;
use serde_json::Value;
use std::collections::{HashMap, HashSet};

/// The key and tag properties of an item schema (already resolved), sorted; empty when it has no key.
pub(crate) fn keys_of(item_schema: &Value) -> Vec<String> {
    let mut keys = HashSet::new();
    let mut tags = HashSet::new();
    key_properties(item_schema, item_schema, &mut keys, &mut tags, 0);
    if keys.is_empty() {
        return Vec::new();
    }
    let mut all: Vec<String> = keys.into_iter().chain(tags).collect();
    all.sort();
    all.dedup();
    all
}

/// An item's identity: its key values, normalised; `None` when it is not an object or gives no key.
fn identity(item: &Value, keys: &[String]) -> Option<String> {
    let object = item.as_object()?;
    let mut parts = Vec::with_capacity(keys.len());
    let mut any = false;
    for key in keys {
        let part = match object.get(key) {
            Some(Value::String(text)) => normalise(text),
            Some(Value::Null) | None => String::new(),
            Some(other) => other.to_string(),
        };
        any |= !part.is_empty();
        parts.push(part);
    }
    any.then(|| serde_json::to_string(&parts).unwrap_or_default())
}

/// Pairs of (gold index, predicted index) by equal identities; every item appears once, an item
/// without a counterpart paired with `None`.
pub(crate) fn by_key(
    gold: &[Value],
    predicted: &[Value],
    keys: &[String],
) -> Vec<(Option<usize>, Option<usize>)> {
    let mut waiting: HashMap<String, Vec<usize>> = HashMap::new();
    for (i, item) in gold.iter().enumerate().rev() {
        if let Some(id) = identity(item, keys) {
            waiting.entry(id).or_default().push(i);
        }
    }
    let mut answered = vec![None; gold.len()];
    let mut pairs = Vec::new();
    for (j, item) in predicted.iter().enumerate() {
        let found = identity(item, keys).and_then(|id| waiting.get_mut(&id)?.pop());
        match found.and_then(|i| answered.get_mut(i).map(|slot| (i, slot))) {
            Some((i, slot)) => {
                *slot = Some(j);
                pairs.push((Some(i), Some(j)));
            }
            None => pairs.push((None, Some(j))),
        }
    }
    for (i, slot) in answered.iter().enumerate() {
        if slot.is_none() {
            pairs.push((Some(i), None));
        }
    }
    pairs
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keyed_items_pair_by_normalised_key_values() {
        let keys = keys_of(&json!({"type": "object", "properties": {
            "name": {"type": "string", "x-key": true},
            "kind": {"const": "person"},
            "age": {"type": "integer"}
        }}));
        assert_eq!(keys, ["kind", "name"]);
        let gold = [
            json!({"name": "Ada Lovelace", "kind": "person"}),
            json!({"name": "Bo", "kind": "person"}),
        ];
        let predicted = [
            json!({"name": "bo", "kind": "person"}),
            json!({"name": "Cy", "kind": "person"}),
            json!({"name": " ADA  lovelace.", "kind": "person"}),
        ];
        let pairs = by_key(&gold, &predicted, &keys);
        assert_eq!(
            pairs,
            [(Some(1), Some(0)), (None, Some(1)), (Some(0), Some(2))]
        );
        assert!(keys_of(&json!({"properties": {"a": {"const": 1}}})).is_empty());
    }
}

//! The default `max_tokens` of a request: what the schema lets a value cost, where it bounds the value.
//!
//! The bound is the longest compact JSON text a valid value can have, counted in bytes (a token is at
//! least one byte, so bytes bound tokens): a string's `maxLength` plus its quotes, an enum's longest
//! member, a number's 24 digits, an object's keys and values with their separators, an array's
//! `maxItems` elements. A quarter more plus 16 tokens of margin covers escapes and a reply's envelope.
//! Anything unbounded (a string without `maxLength`, an array without `maxItems`, an open object) has no
//! bound, and the request gets the documented default instead.

use serde_json::{Map, Value};

/// `max_tokens` for one value whose schema bounds nothing.
pub(crate) const DEFAULT_ONE: u32 = 1024;

/// `max_tokens` for a list whose schema or `max_items` bounds nothing.
pub(crate) const DEFAULT_LIST: u32 = 4096;

/// Deeper schemas are not bounded (they take the default).
const MAX_DEPTH: usize = 32;

/// The default `max_tokens` for one value of `schema`.
pub(crate) fn for_one(schema: &Value) -> u32 {
    longest(schema, 0).map_or(DEFAULT_ONE, with_margin)
}

/// The default `max_tokens` for a list of items of `item_schema`, at most `max_items` of them.
pub(crate) fn for_list(item_schema: &Value, max_items: Option<usize>) -> u32 {
    let items = max_items.and_then(|n| u64::try_from(n).ok());
    match (longest(item_schema, 0), items) {
        // Each item, a separator or a newline, and the `{"items": [` ... `]}` around them.
        (Some(item), Some(n)) => with_margin(item.saturating_add(2).saturating_mul(n) + 16),
        _ => DEFAULT_LIST,
    }
}

fn with_margin(bytes: u64) -> u32 {
    let tokens = bytes.saturating_add(bytes / 4).saturating_add(16);
    u32::try_from(tokens).unwrap_or(u32::MAX)
}

/// The longest compact JSON text of a value valid against `schema`, if the schema bounds it.
fn longest(schema: &Value, depth: usize) -> Option<u64> {
    if depth > MAX_DEPTH {
        return None;
    }
    let map = schema.as_object()?;
    if let Some(value) = map.get("const") {
        return Some(text_len(value));
    }
    if let Some(Value::Array(members)) = map.get("enum") {
        return members.iter().map(text_len).max();
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(alternatives)) = map.get(key) {
            return max_of(alternatives.iter().map(|a| longest(a, depth + 1)));
        }
    }
    match map.get("type") {
        Some(Value::String(kind)) => of_type(kind, map, depth),
        Some(Value::Array(kinds)) => max_of(
            kinds
                .iter()
                .map(|k| k.as_str().and_then(|k| of_type(k, map, depth))),
        ),
        _ => None,
    }
}

fn of_type(kind: &str, map: &Map<String, Value>, depth: usize) -> Option<u64> {
    match kind {
        "null" => Some(4),
        "boolean" => Some(5),
        "integer" | "number" => Some(24),
        "string" => match map.get("format").and_then(Value::as_str) {
            Some("date" | "time" | "date-time" | "uuid") => Some(40),
            _ => map.get("maxLength")?.as_u64().map(|n| n.saturating_add(2)),
        },
        "array" => {
            let n = map.get("maxItems")?.as_u64()?;
            let item = longest(map.get("items")?, depth + 1)?;
            Some(item.saturating_add(2).saturating_mul(n).saturating_add(2))
        }
        "object" => {
            if map
                .get("additionalProperties")
                .is_some_and(|a| a != &Value::Bool(false))
            {
                return None;
            }
            let properties = map.get("properties").and_then(Value::as_object);
            let mut total: u64 = 2;
            for (key, value) in properties.into_iter().flatten() {
                // `"key": value, `
                let key_len = u64::try_from(key.len()).unwrap_or(u64::MAX);
                total = total
                    .saturating_add(key_len.saturating_add(6))
                    .saturating_add(longest(value, depth + 1)?);
            }
            Some(total)
        }
        _ => None,
    }
}

fn max_of(bounds: impl Iterator<Item = Option<u64>>) -> Option<u64> {
    let mut most = None;
    for bound in bounds {
        most = Some(most.unwrap_or(0).max(bound?));
    }
    most
}

fn text_len(value: &Value) -> u64 {
    u64::try_from(value.to_string().len()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn bounded_schemas_get_their_bound_and_others_the_default() {
        let bounded = json!({
            "type": "object",
            "properties": {
                "code": {"type": "string", "maxLength": 10},
                "status": {"enum": ["paid", "unpaid"]},
                "total": {"type": "number"},
                "tags": {"type": "array", "items": {"type": "boolean"}, "maxItems": 3}
            },
            "additionalProperties": false
        });
        // 2 + (4+6+12) + (6+6+8) + (5+6+24) + (4+6+(7*3+2)) = 112 bytes, plus a quarter and 16.
        assert_eq!(for_one(&bounded), 112 + 28 + 16);
        let open = json!({"type": "object", "properties": {"name": {"type": "string"}}});
        assert_eq!(for_one(&open), DEFAULT_ONE);
        assert_eq!(for_list(&bounded, None), DEFAULT_LIST);
        assert_eq!(for_list(&open, Some(3)), DEFAULT_LIST);
        assert!(for_list(&bounded, Some(2)) > 2 * 112);
    }

    #[test]
    fn tagged_unions_take_their_longest_variant() {
        let schema = json!({"oneOf": [
            {"type": "object", "properties": {"kind": {"const": "a"}}, "additionalProperties": false},
            {"type": "object", "properties": {"kind": {"const": "bb"}, "n": {"type": "integer"}}, "additionalProperties": false}
        ]});
        // The second: 2 + (4+6+4) + (1+6+24) = 47.
        assert_eq!(for_one(&schema), 47 + 11 + 16);
        assert_eq!(
            for_one(&json!({"oneOf": [{"type": "string"}, {"type": "null"}]})),
            DEFAULT_ONE
        );
    }
}

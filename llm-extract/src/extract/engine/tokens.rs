//! How many tokens a request may spend: the extraction's token budget
//! ([`Extractor::token_budget`](crate::extract::Extractor::token_budget)), checked before each request,
//! whose `max_tokens` it lowers to what is left; and the default `max_tokens` of a request, what the
//! schema lets a value cost, where it bounds the value.
//!
//! The bound is the longest compact JSON text a valid value can have, counted in bytes (a token is at
//! least one byte, so bytes bound tokens, even for a byte-level tokenizer that spends a token per
//! byte): a string's `maxLength` characters at [`BYTES_PER_CHAR`] each plus its quotes, an enum's
//! longest member, a number's 24 digits, an object's keys and values with their separators, an array's
//! `maxItems` elements. A quarter more plus 16 tokens of margin covers a reply's envelope. Anything
//! unbounded (a string without `maxLength`, an array without `maxItems`, an open object) has no
//! bound, and the request gets the documented default instead. A `$ref` is followed inside the schema
//! (its root); a recursive schema (a reference met again inside what it points at: a report's
//! sections of sections) bounds nothing, since a value may nest as deep as it likes, and takes the
//! default too. Every sum saturates: a huge bound gives `u32::MAX`, never an overflow.

use super::Engine;
use crate::extract::error::ExtractErrorKind;
use crate::llm::ChatRequest;
use crate::report::Report;
use crate::schema::node;
use serde_json::{Map, Value};

impl Engine<'_> {
    /// Checks the token budget before a request and lowers its `max_tokens` to what is left.
    pub(super) fn within_budget(
        &self,
        report: &Report,
        request: &mut ChatRequest,
    ) -> Result<(), ExtractErrorKind> {
        let Some(budget) = self.config.token_budget else {
            return Ok(());
        };
        let spent = report.usage.total();
        if spent >= budget {
            return Err(ExtractErrorKind::Budget { budget, spent });
        }
        let left = u32::try_from(budget - spent).unwrap_or(u32::MAX);
        request.max_tokens = Some(request.max_tokens.map_or(left, |n| n.min(left)));
        Ok(())
    }
}

/// `max_tokens` for one value whose schema bounds nothing.
pub(crate) const DEFAULT_ONE: u32 = 1024;

/// `max_tokens` for a list whose schema or `max_items` bounds nothing.
pub(crate) const DEFAULT_LIST: u32 = 4096;

/// The most bytes one character of a string can take in JSON text, as `maxLength` counts characters
/// (code points): an escaped surrogate pair (`\ud83d\ude00`, one character outside the Basic
/// Multilingual Plane) is 12 bytes; an escape of any other character (`\u6771`) is 6; raw UTF-8 at
/// most 4.
pub(crate) const BYTES_PER_CHAR: u64 = 12;

/// Deeper schemas are not bounded (they take the default).
const MAX_DEPTH: usize = 32;

/// The default `max_tokens` for one value of `schema`.
pub(crate) fn for_one(schema: &Value) -> u32 {
    Bound::new(schema)
        .longest(schema, 0)
        .map_or(DEFAULT_ONE, with_margin)
}

/// The default `max_tokens` for a list of items of `item_schema`, at most `max_items` of them.
pub(crate) fn for_list(item_schema: &Value, max_items: Option<usize>) -> u32 {
    let items = max_items.and_then(|n| u64::try_from(n).ok());
    match (Bound::new(item_schema).longest(item_schema, 0), items) {
        // Each item, a separator or a newline, and the `{"items": [` ... `]}` around them.
        (Some(item), Some(n)) => {
            with_margin(item.saturating_add(2).saturating_mul(n).saturating_add(16))
        }
        _ => DEFAULT_LIST,
    }
}

fn with_margin(bytes: u64) -> u32 {
    let tokens = bytes.saturating_add(bytes / 4).saturating_add(16);
    u32::try_from(tokens).unwrap_or(u32::MAX)
}

/// The walk of a schema for its bound: the root its `$ref`s point into, and the references being
/// followed (one met again is a recursion, which bounds nothing).
struct Bound<'a> {
    root: &'a Value,
    following: Vec<&'a str>,
}

impl<'a> Bound<'a> {
    fn new(root: &'a Value) -> Self {
        Bound {
            root,
            following: Vec::new(),
        }
    }

    /// The longest compact JSON text of a value valid against `schema`, if the schema bounds it.
    fn longest(&mut self, schema: &'a Value, depth: usize) -> Option<u64> {
        if depth > MAX_DEPTH {
            return None;
        }
        if let Some(reference) = node::reference_of(schema) {
            if self.following.contains(&reference) {
                return None;
            }
            let target = node::target(self.root, reference)?;
            self.following.push(reference);
            let bound = self.longest(target, depth + 1);
            self.following.pop();
            return bound;
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
                return max_of(alternatives.iter().map(|a| self.longest(a, depth + 1)));
            }
        }
        match map.get("type") {
            Some(Value::String(kind)) => self.of_type(kind, map, depth),
            Some(Value::Array(kinds)) => max_of(
                kinds
                    .iter()
                    .map(|k| k.as_str().and_then(|k| self.of_type(k, map, depth))),
            ),
            _ => None,
        }
    }

    fn of_type(&mut self, kind: &str, map: &'a Map<String, Value>, depth: usize) -> Option<u64> {
        match kind {
            "null" => Some(4),
            "boolean" => Some(5),
            "integer" | "number" => Some(24),
            "string" => match map.get("format").and_then(Value::as_str) {
                Some("date" | "time" | "date-time" | "uuid") => Some(40),
                _ => map
                    .get("maxLength")?
                    .as_u64()
                    .map(|n| n.saturating_mul(BYTES_PER_CHAR).saturating_add(2)),
            },
            "array" => {
                let n = map.get("maxItems")?.as_u64()?;
                let item = self.longest(map.get("items")?, depth + 1)?;
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
                        .saturating_add(self.longest(value, depth + 1)?);
                }
                Some(total)
            }
            _ => None,
        }
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
    use crate::schema::SchemaSet;
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
        // 2 + (4+6+(10*12+2)) + (6+6+8) + (5+6+24) + (4+6+(7*3+2)) = 222 bytes, plus a quarter and 16.
        assert_eq!(for_one(&bounded), 222 + 55 + 16);
        let open = json!({"type": "object", "properties": {"name": {"type": "string"}}});
        assert_eq!(for_one(&open), DEFAULT_ONE);
        assert_eq!(for_list(&bounded, None), DEFAULT_LIST);
        assert_eq!(for_list(&open, Some(3)), DEFAULT_LIST);
        assert!(for_list(&bounded, Some(2)) > 2 * 222);
    }

    #[test]
    fn references_are_followed_and_recursion_takes_the_default() {
        let leaf = json!({"type": "string", "maxLength": 2});
        let reused = json!({
            "type": "object",
            "properties": {"a": {"$ref": "#/$defs/Leaf"}, "b": {"$ref": "#/$defs/Leaf"}},
            "required": ["a", "b"],
            "additionalProperties": false,
            "$defs": {"Leaf": leaf.clone()}
        });
        let inlined = json!({
            "type": "object",
            "properties": {"a": leaf.clone(), "b": leaf},
            "required": ["a", "b"],
            "additionalProperties": false
        });
        assert_eq!(for_one(&reused), for_one(&inlined));
        assert!(for_one(&reused) < DEFAULT_ONE);
        let recursive = json!({
            "type": "object",
            "properties": {"next": {"anyOf": [{"$ref": "#"}, {"type": "null"}]}},
            "required": ["next"],
            "additionalProperties": false
        });
        assert_eq!(for_one(&recursive), DEFAULT_ONE);
        assert_eq!(for_list(&recursive, Some(3)), DEFAULT_LIST);
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

    /// Ten characters written every way JSON allows: raw ASCII, raw CJK (3 bytes each), CJK as `\uXXXX`
    /// escapes (6), raw emoji (4), emoji as escaped surrogate pairs (12).
    fn ten_chars_every_way() -> Vec<String> {
        let escaped = |c: char| {
            let mut units = [0u16; 2];
            c.encode_utf16(&mut units)
                .iter()
                .map(|unit| format!("\\u{unit:04x}"))
                .collect::<String>()
        };
        vec![
            format!("\"{}\"", "a".repeat(10)),
            format!("\"{}\"", "東京".repeat(5)),
            format!("\"{}\"", escaped('東').repeat(10)),
            format!("\"{}\"", "😀".repeat(10)),
            format!("\"{}\"", escaped('😀').repeat(10)),
        ]
    }

    #[test]
    fn a_string_of_max_length_characters_fits_however_it_is_written() {
        let set = SchemaSet::new("Name", json!({"type": "string", "maxLength": 10}));
        let validator = set.validator().unwrap();
        let one = for_one(set.generic());
        let list = for_list(set.generic(), Some(3));
        for answer in ten_chars_every_way() {
            let value: Value = serde_json::from_str(&answer).unwrap();
            assert!(validator.is_valid(&value), "{answer}");
            // A byte-level tokenizer spends at most a token per byte.
            assert!(
                answer.len() <= one as usize,
                "{answer}: {} > {one}",
                answer.len()
            );
            let items = format!("{{\"items\": [{answer},{answer},{answer}]}}");
            assert!(
                items.len() <= list as usize,
                "{items}: {} > {list}",
                items.len()
            );
        }
        // An object of such strings.
        let object = json!({
            "type": "object",
            "properties": {"city": {"type": "string", "maxLength": 10}},
            "additionalProperties": false
        });
        let bound = for_one(&object) as usize;
        for answer in ten_chars_every_way() {
            let text = format!("{{\"city\":{answer}}}");
            assert!(text.len() <= bound, "{text}: {} > {bound}", text.len());
        }
    }

    #[test]
    fn huge_bounds_saturate_instead_of_overflowing() {
        let huge_string = json!({"type": "string", "maxLength": u64::MAX});
        assert_eq!(for_one(&huge_string), u32::MAX);
        assert_eq!(for_list(&huge_string, Some(usize::MAX)), u32::MAX);
        assert_eq!(
            for_list(&json!({"type": "boolean"}), Some(usize::MAX)),
            u32::MAX
        );
        let huge_array = json!({"type": "array", "items": huge_string, "maxItems": u64::MAX});
        assert_eq!(for_one(&huge_array), u32::MAX);
        assert_eq!(for_list(&huge_array, Some(usize::MAX)), u32::MAX);
        let object = json!({
            "type": "object",
            "properties": {"a": huge_array, "b": huge_string, "c": {"const": "x"}},
            "additionalProperties": false
        });
        assert_eq!(for_one(&object), u32::MAX);
        assert_eq!(for_list(&object, Some(usize::MAX)), u32::MAX);
    }
}

//! How an answer is scored against the answer written down by careful reading.
//!
//! Field accuracy: each field of the expected object is one point. A field matches when
//! - both are strings and they are equal after trimming, collapsing runs of whitespace to one space and
//!   case-folding (lowercase), or the answer
//!   equals (the same way) one of the alternatives listed for that field under `accept`;
//! - both are numbers and they are equal (as f64, within 1e-9);
//! - both are booleans and equal, or both are null; an empty string (after trimming) counts as null.
//!
//!   A document without a valid value scores no field. Field accuracy is matched fields over all fields
//!   of all documents (failures included).

use serde_json::{Map, Value};

/// Fields matched and fields in total for one document.
pub fn fields(expected: &Value, accept: Option<&Value>, answer: Option<&Value>) -> (usize, usize) {
    let Some(expected) = expected.as_object() else {
        return (0, 1);
    };
    let total = expected.len();
    let Some(answer) = answer.and_then(Value::as_object) else {
        return (0, total);
    };
    let empty = Map::new();
    let accept = accept.and_then(Value::as_object).unwrap_or(&empty);
    let matched = expected
        .iter()
        .filter(|(key, want)| {
            let got = answer.get(key.as_str()).unwrap_or(&Value::Null);
            same(want, got)
                || accept
                    .get(key.as_str())
                    .and_then(Value::as_array)
                    .is_some_and(|alternatives| alternatives.iter().any(|alt| same(alt, got)))
        })
        .count();
    (matched, total)
}

fn same(want: &Value, got: &Value) -> bool {
    match (normal(want), normal(got)) {
        (Value::String(a), Value::String(b)) => folded(&a) == folded(&b),
        (Value::Number(a), Value::Number(b)) => match (a.as_f64(), b.as_f64()) {
            (Some(a), Some(b)) => (a - b).abs() < 1e-9,
            _ => false,
        },
        (a, b) => a == b,
    }
}

/// Lowercase, with every run of whitespace one space and none at either end.
fn folded(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

fn normal(value: &Value) -> Value {
    match value {
        Value::String(s) if s.trim().is_empty() => Value::Null,
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn strings_fold_numbers_compare_and_alternatives_count() {
        let expected = json!({"a": "Ada Lovelace", "n": 2.5, "b": true, "c": null, "d": "x"});
        let accept = json!({"d": ["y"]});
        let answer = json!({"a": " ada \n lovelace ", "n": 2.5, "b": false, "c": "", "d": "Y"});
        assert_eq!(fields(&expected, Some(&accept), Some(&answer)), (4, 5));
        assert_eq!(fields(&expected, None, None), (0, 5));
        assert_eq!(
            fields(&json!({"n": 1}), None, Some(&json!({"n": 1.0}))),
            (1, 1)
        );
    }
}

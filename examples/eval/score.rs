//! How an answer is scored against the answer written down by careful reading: by the library's
//! evaluation module, [`llm_extract::eval`], with the kind's schema.
//!
//! Field accuracy: each field of the expected object is one point. A field matches when
//! - both are strings and they are equal once normalised ([`llm_extract::eval::normalise`]: case
//!   folded, runs of whitespace collapsed, surrounding punctuation trimmed), or the answer equals (the
//!   same way) one of the alternatives listed for that field under `accept`; an enum's value (the
//!   currency, the sentiment) must be exact;
//! - both are numbers and they are equal (as f64, within 1e-9);
//! - both are booleans and equal, or neither gives a value (null; a string that normalises to nothing
//!   counts as null).
//!
//!   A document without a valid value scores no field. Field accuracy is matched fields over all fields
//!   of all documents (failures included).

use llm_extract::eval::{score_document, GoldCase, ScoreOptions};
use serde_json::Value;

/// Fields matched and fields in total for one document, `schema` the kind's schema.
pub fn fields(
    expected: &Value,
    accept: Option<&Value>,
    answer: Option<&Value>,
    schema: &Value,
) -> (usize, usize) {
    let mut case = GoldCase::new("", "", expected.clone());
    case.accept = accept.and_then(Value::as_object).cloned();
    let options = ScoreOptions::default().tolerance(0.0, 1e-9);
    let leaves = score_document(&case, answer, &[], Some(schema), &options);
    let matched = leaves.iter().filter(|l| l.outcome.is_right()).count();
    (matched, leaves.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn strings_fold_numbers_compare_and_alternatives_count() {
        let schema = json!({"type": "object"});
        let expected = json!({"a": "Ada Lovelace", "n": 2.5, "b": true, "c": null, "d": "x"});
        let accept = json!({"d": ["y"]});
        let answer = json!({"a": " ada \n lovelace ", "n": 2.5, "b": false, "c": "", "d": "Y"});
        assert_eq!(
            fields(&expected, Some(&accept), Some(&answer), &schema),
            (4, 5)
        );
        assert_eq!(fields(&expected, None, None, &schema), (0, 5));
        assert_eq!(
            fields(&json!({"n": 1}), None, Some(&json!({"n": 1.0})), &schema),
            (1, 1)
        );
    }
}

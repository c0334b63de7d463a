//! The input an answer is extracted from, as the repetition checks ask it: how many times the text
//! holds a value. A run of equal items or elements is real data when the text holds that many copies
//! of what they copy (a receipt with four identical coffee lines, the same train twice in a
//! timetable), and a loop when it does not.
//!
//! A value is known by its leaves (its strings, numbers and literals, at most [`MAX_LEAVES`] of them,
//! each of at least [`MIN_LEAF`] characters): the text holds it as many times as its most specific
//! leaf, the one with the fewest non-overlapping occurrences among those it holds at all (a leaf the
//! model wrote in its own words, a normalised date, says nothing). A value none of whose leaves is in
//! the text is held zero times. Case is ignored.
//!
//! Cost: the text is lowered once; each distinct leaf is counted once, in one linear scan, and the
//! count is kept. At most [`MAX_COUNTED`] distinct leaves are counted per answer; past that a leaf
//! counts as absent (the repetition checks then judge as if there were no text), so the work is at
//! most `MAX_COUNTED` scans of the text whatever the answer.

use std::collections::HashMap;
use std::sync::Arc;

/// Leaves shorter than this many characters (`1`, `x`) are too common to say which value is copied.
pub(crate) const MIN_LEAF: usize = 3;
/// At most this many leaves of one value are looked at.
pub(crate) const MAX_LEAVES: usize = 16;
/// At most this many bytes of one leaf are kept while it streams (a longer leaf is looked for by
/// this prefix: a more lenient count, never a stricter one).
pub(crate) const MAX_LEAF_BYTES: usize = 512;
/// At most this many distinct leaves are counted in the text per answer.
pub(crate) const MAX_COUNTED: usize = 64;

/// The text an answer is extracted from (cheap to clone), for the repetition checks. The empty
/// input text holds nothing: every repeat is judged as a copy, as without an input text.
///
/// ```
/// use llm_extract::extract::InputText;
///
/// let receipt = InputText::new("Flat white 3.50\nFlat white 3.50\nCroissant 2.80\nFlat white 3.50");
/// let mut count = receipt.counter();
/// assert_eq!(count.value_in_text(["Flat white", "3.50"]), 3);
/// assert_eq!(count.value_in_text(["Croissant", "2.80"]), 1);
/// assert_eq!(count.value_in_text(["Espresso"]), 0);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InputText {
    /// The text, lowered.
    lowered: Arc<str>,
}

impl InputText {
    /// The input text `text`.
    pub fn new(text: &str) -> Self {
        InputText {
            lowered: Arc::from(text.to_lowercase()),
        }
    }

    /// Whether there is no text.
    pub fn is_empty(&self) -> bool {
        self.lowered.is_empty()
    }

    /// A counter of occurrences in this text, with a cache of its own (one per answer).
    pub fn counter(&self) -> Occurrences {
        Occurrences {
            input_text: self.clone(),
            counted: HashMap::new(),
        }
    }
}

/// Counts occurrences of leaves in a [`InputText`], each distinct leaf once, at most 64 distinct leaves
/// (so the work is at most 64 linear scans of the text, whatever the answer).
#[derive(Debug, Clone, Default)]
pub struct Occurrences {
    input_text: InputText,
    counted: HashMap<String, usize>,
}

impl Occurrences {
    /// Non-overlapping occurrences of `leaf` in the text, case ignored; 0 for a leaf shorter than
    /// 3 characters, longer than the text, or past the 64 distinct leaves counted per answer.
    pub fn leaf_in_text(&mut self, leaf: &str) -> usize {
        let leaf = leaf.trim();
        let text = &self.input_text.lowered;
        if leaf.chars().count() < MIN_LEAF || leaf.len() > text.len() {
            return 0;
        }
        let leaf = leaf.to_lowercase();
        if let Some(&n) = self.counted.get(&leaf) {
            return n;
        }
        if self.counted.len() >= MAX_COUNTED {
            return 0;
        }
        let n = text.matches(leaf.as_str()).count();
        self.counted.insert(leaf, n);
        n
    }

    /// How many times the text holds a value with these leaves: the fewest occurrences of a leaf that
    /// occurs at all (at most the first 16 leaves are looked at), 0 when none does.
    pub fn value_in_text<S: AsRef<str>>(&mut self, leaves: impl IntoIterator<Item = S>) -> usize {
        leaves
            .into_iter()
            .take(MAX_LEAVES)
            .map(|leaf| self.leaf_in_text(leaf.as_ref()))
            .filter(|&n| n > 0)
            .min()
            .unwrap_or(0)
    }
}

/// The leaves of a JSON value (strings as their text, numbers and literals as their JSON), at most
/// [`MAX_LEAVES`], in document order (a walk without recursion).
pub(crate) fn leaves(value: &serde_json::Value) -> Vec<String> {
    use serde_json::Value;
    let mut out = Vec::new();
    let mut stack = vec![value];
    while let Some(value) = stack.pop() {
        if out.len() >= MAX_LEAVES {
            break;
        }
        match value {
            Value::Object(map) => stack.extend(map.values().rev()),
            Value::Array(items) => stack.extend(items.iter().rev()),
            Value::String(text) => out.push(text.clone()),
            other => out.push(other.to_string()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_value_is_held_as_often_as_its_most_specific_leaf() {
        let text = "IC 512 Utrecht 08:15 platform 3\nIC 514 Utrecht 08:45 platform 3\nIC 512 Utrecht 08:15 platform 3";
        let mut count = InputText::new(text).counter();
        // `Utrecht` is in every line, `08:15` in two: the train is there twice.
        assert_eq!(count.value_in_text(["IC 512", "Utrecht", "08:15"]), 2);
        // A leaf in the model's own words says nothing; a short one neither.
        assert_eq!(count.value_in_text(["IC 514", "Utrecht Centraal", "3"]), 1);
        assert_eq!(count.value_in_text(["elsewhere"]), 0);
        // Case is ignored, occurrences do not overlap.
        assert_eq!(InputText::new("aaaaaaa").counter().leaf_in_text("AAA"), 2);
    }

    #[test]
    fn the_empty_input_text_holds_nothing_and_the_count_of_leaves_is_bounded() {
        assert_eq!(
            InputText::default().counter().value_in_text(["anything"]),
            0
        );
        let text: String = (0..200).map(|n| format!("leaf{n:03} ")).collect();
        let mut count = InputText::new(&text).counter();
        let held = (0..200)
            .filter(|n| count.leaf_in_text(&format!("leaf{n:03}")) == 1)
            .count();
        assert_eq!(held, MAX_COUNTED);
        // What was counted stays counted.
        assert_eq!(count.leaf_in_text("leaf000"), 1);
    }

    #[test]
    fn leaves_are_the_scalars_in_order() {
        let value = json!({"name": "Flat white", "qty": 1, "tags": ["hot", null]});
        let found = leaves(&value);
        assert!(found.contains(&"Flat white".to_owned()));
        assert!(found.contains(&"1".to_owned()));
        assert!(found.contains(&"null".to_owned()));
        let many = json!((0..40).collect::<Vec<_>>());
        assert_eq!(leaves(&many).len(), MAX_LEAVES);
    }
}

//! One document's prediction against its gold value, leaf by leaf (see the
//! [module documentation](super) for what a leaf and its outcome are).

use super::gold::GoldCase;
use super::lists;
use super::normalise::normalise;
use crate::ground::Span;
use crate::schema::node;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// How values are compared.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ScoreOptions {
    /// Two numbers agree when they differ by at most this share of the larger magnitude (default 1e-6)...
    pub relative: f64,
    /// ...or by at most this much (default 1e-9).
    pub absolute: f64,
    /// A predicted span agrees with a gold span when their overlap is at least this share of their union
    /// (intersection over union, default 0.5).
    pub span_overlap: f64,
}

impl Default for ScoreOptions {
    fn default() -> Self {
        ScoreOptions {
            relative: 1e-6,
            absolute: 1e-9,
            span_overlap: 0.5,
        }
    }
}

impl ScoreOptions {
    /// Numbers agree within `relative` of the larger magnitude or within `absolute` (negative or
    /// non-finite values count as 0).
    pub fn tolerance(mut self, relative: f64, absolute: f64) -> Self {
        self.relative = finite_or_zero(relative);
        self.absolute = finite_or_zero(absolute);
        self
    }

    /// Spans agree when their intersection over union is at least `share` (clamped to 0..=1).
    pub fn span_overlap(mut self, share: f64) -> Self {
        self.span_overlap = finite_or_zero(share).min(1.0);
        self
    }

    /// Whether two numbers agree.
    pub fn numbers_agree(&self, a: f64, b: f64) -> bool {
        let allowed = self.absolute.max(self.relative * a.abs().max(b.abs()));
        a == b || (a - b).abs() <= allowed
    }
}

fn finite_or_zero(x: f64) -> f64 {
    if x.is_finite() && x > 0.0 {
        x
    } else {
        0.0
    }
}

/// What became of one leaf.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Outcome {
    /// Both give a value and they agree (a true positive).
    Correct,
    /// The gold has no value here and neither has the prediction.
    Empty,
    /// Both give a value and they disagree (a false positive and a false negative).
    Wrong,
    /// The gold gives a value, the prediction none (a false negative).
    Missing,
    /// The prediction gives a value the gold has not (a false positive).
    Extra,
    /// The gold has no value here, and the prediction has not even the object or item around it (no
    /// valid value, or an unanswered list item): wrong, but neither positive nor negative.
    Unanswered,
}

impl Outcome {
    /// Whether the leaf counts as right for accuracy.
    pub fn is_right(self) -> bool {
        matches!(self, Outcome::Correct | Outcome::Empty)
    }

    /// (true positives, false positives, false negatives) this outcome adds.
    pub fn counts(self) -> (usize, usize, usize) {
        match self {
            Outcome::Correct => (1, 0, 0),
            Outcome::Wrong => (0, 1, 1),
            Outcome::Missing => (0, 0, 1),
            Outcome::Extra => (0, 1, 0),
            Outcome::Empty | Outcome::Unanswered => (0, 0, 0),
        }
    }
}

/// One scored leaf.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Leaf {
    /// The field: the leaf's path with list indices collapsed (`items[].name`; `""` for a scalar root).
    pub field: String,
    /// JSON pointer to the leaf in the gold value (in the prediction for [`Outcome::Extra`]).
    pub path: String,
    /// What became of it.
    pub outcome: Outcome,
    /// The gold value, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gold: Option<Value>,
    /// The predicted value, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub predicted: Option<Value>,
    /// The extraction's confidence in the predicted value (its
    /// [`Report::confidence`](crate::Report::confidence) at the leaf's path in the prediction), when
    /// the run had confidences ([`score_document_with_confidence`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confidence: Option<f32>,
    /// The share of the answers that gave the predicted value (its
    /// [`Report::agreement`](crate::report::Report::agreement) at the leaf's path in the prediction),
    /// when the run voted several answers ([`score_document_with_signals`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agreement: Option<f32>,
    /// Whether a check found an issue at the leaf or above it (a soft issue in
    /// [`Report::issues`](crate::Report::issues)), when the run had checks ([`mark_doubts`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub doubtful: Option<bool>,
}

/// Marks each of `leaves` doubtful when one of `issues` (a run's soft issues) is at its path or above
/// it, and the others not doubtful: the checks as a signal of doubt, for
/// [`Calibration::of_doubts`](super::Calibration::of_doubts). An issue of an item of a list is under
/// the item's index (`/2/name`); paths are read in the gold value, so a list item the scoring paired
/// with another index is matched by position.
pub fn mark_doubts(leaves: &mut [Leaf], issues: &[crate::check::Issue]) {
    let pointers: Vec<String> = issues
        .iter()
        .map(|issue| match issue.item {
            Some(item) => format!("/{item}{}", issue.path),
            None => issue.path.clone(),
        })
        .collect();
    for leaf in leaves {
        let under = |pointer: &String| {
            leaf.path
                .strip_prefix(pointer.as_str())
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
        };
        leaf.doubtful = Some(pointers.iter().any(under));
    }
}

/// No value: null, a string that normalises to nothing, an empty list or object.
fn is_blank(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::String(text) => normalise(text).is_empty(),
        Value::Array(items) => items.is_empty(),
        Value::Object(fields) => fields.is_empty(),
        _ => false,
    }
}

/// The leaves of `predicted` (a valid value; `None` when the document has none) scored against
/// `case.value`. `schema` (the schema the prediction was extracted with) marks enum values (compared
/// exactly) and the key properties of list items (see [`lists`]); without it every string is
/// normalised and every list paired by the best assignment. `spans` are the predicted value's grounded
/// spans (e.g. from [`Source::ground`](crate::ground::Source::ground)): where the gold gives a span for a
/// leaf and the prediction has one, the leaf is correct when the spans overlap enough.
pub fn score_document(
    case: &GoldCase,
    predicted: Option<&Value>,
    spans: &[Span],
    schema: Option<&Value>,
    options: &ScoreOptions,
) -> Vec<Leaf> {
    score_document_with_confidence(case, predicted, spans, schema, options, &BTreeMap::new())
}

/// [`score_document`], each leaf given the confidence `confidence` holds at its path in the prediction
/// (a [`Report::confidence`](crate::Report::confidence); for a list of items, pointers under each
/// item's index: `/0/name`), for [`Calibration`](super::Calibration).
pub fn score_document_with_confidence(
    case: &GoldCase,
    predicted: Option<&Value>,
    spans: &[Span],
    schema: Option<&Value>,
    options: &ScoreOptions,
    confidence: &BTreeMap<String, f32>,
) -> Vec<Leaf> {
    let none = BTreeMap::new();
    score_document_with_signals(case, predicted, spans, schema, options, confidence, &none)
}

/// [`score_document_with_confidence`], each leaf also given the agreement `agreement` holds at its
/// path in the prediction (a [`Report::agreement`](crate::report::Report::agreement), by the same
/// pointers).
pub fn score_document_with_signals(
    case: &GoldCase,
    predicted: Option<&Value>,
    spans: &[Span],
    schema: Option<&Value>,
    options: &ScoreOptions,
    confidence: &BTreeMap<String, f32>,
    agreement: &BTreeMap<String, f32>,
) -> Vec<Leaf> {
    let mut walk = Walk {
        root: schema,
        case,
        spans,
        options,
        confidence,
        agreement,
        leaves: Vec::new(),
    };
    let at = At {
        field: String::new(),
        gold: String::new(),
        predicted: String::new(),
        depth: 0,
    };
    walk.walk(
        schema,
        Some(&case.value),
        predicted,
        predicted.is_some(),
        &at,
    );
    walk.leaves
}

/// Values nest no deeper than this (serde_json's own parser stops at 128); deeper ones compare whole.
const MAX_DEPTH: usize = 256;

/// Where a walk is: the field, and the JSON pointers into the gold value and the prediction.
struct At {
    field: String,
    gold: String,
    predicted: String,
    depth: usize,
}

impl At {
    fn property(&self, name: &str) -> At {
        let field = if self.field.is_empty() {
            name.to_owned()
        } else {
            format!("{}.{name}", self.field)
        };
        let token = node::escape_token(name);
        At {
            field,
            gold: format!("{}/{token}", self.gold),
            predicted: format!("{}/{token}", self.predicted),
            depth: self.depth + 1,
        }
    }

    fn item(&self, gold: Option<usize>, predicted: Option<usize>) -> At {
        let index = |i: Option<usize>| i.map_or_else(|| "-".to_owned(), |i| i.to_string());
        At {
            field: format!("{}[]", self.field),
            gold: format!("{}/{}", self.gold, index(gold)),
            predicted: format!("{}/{}", self.predicted, index(predicted)),
            depth: self.depth + 1,
        }
    }
}

struct Walk<'a> {
    root: Option<&'a Value>,
    case: &'a GoldCase,
    spans: &'a [Span],
    options: &'a ScoreOptions,
    confidence: &'a BTreeMap<String, f32>,
    agreement: &'a BTreeMap<String, f32>,
    leaves: Vec<Leaf>,
}

impl<'a> Walk<'a> {
    fn leaf(&mut self, at: &At, outcome: Outcome, gold: Option<&Value>, predicted: Option<&Value>) {
        let path = if outcome == Outcome::Extra {
            &at.predicted
        } else {
            &at.gold
        };
        self.leaves.push(Leaf {
            field: at.field.clone(),
            path: path.clone(),
            outcome,
            gold: gold.cloned(),
            predicted: predicted.cloned(),
            confidence: self.confidence.get(&at.predicted).copied(),
            agreement: self.agreement.get(&at.predicted).copied(),
            doubtful: None,
        });
    }

    /// Scores the gold slot `gold` (`None`: the gold has no such slot) against `predicted`; `answered`
    /// says whether the prediction holds the object or item around this slot.
    fn walk(
        &mut self,
        schema: Option<&'a Value>,
        gold: Option<&Value>,
        predicted: Option<&Value>,
        answered: bool,
        at: &At,
    ) {
        let schema = self.resolve(schema);
        let g = gold.filter(|v| !is_blank(v));
        let p = predicted.filter(|v| !is_blank(v));
        let container = |v: &Value| (v.is_object() || v.is_array()) && at.depth < MAX_DEPTH;
        match (g, p) {
            (Some(Value::Object(a)), Some(Value::Object(b))) if at.depth < MAX_DEPTH => {
                for (name, value) in a {
                    let child = self.property(schema, name);
                    self.walk(child, Some(value), b.get(name), true, &at.property(name));
                }
                for (name, value) in b.iter().filter(|(name, _)| !a.contains_key(*name)) {
                    let child = self.property(schema, name);
                    self.walk(child, None, Some(value), true, &at.property(name));
                }
            }
            (Some(Value::Array(a)), Some(Value::Array(b))) if at.depth < MAX_DEPTH => {
                self.list(schema, a, b, at);
            }
            (Some(gv), Some(pv)) if container(gv) || container(pv) => {
                self.walk(schema, Some(gv), None, false, at);
                self.walk(schema, None, Some(pv), true, at);
            }
            (Some(Value::Object(a)), None) if at.depth < MAX_DEPTH => {
                for (name, value) in a {
                    let child = self.property(schema, name);
                    self.walk(child, Some(value), None, false, &at.property(name));
                }
            }
            (None, Some(Value::Object(b))) if at.depth < MAX_DEPTH => {
                for (name, value) in b {
                    let child = self.property(schema, name);
                    self.walk(child, None, Some(value), true, &at.property(name));
                }
            }
            (Some(Value::Array(a)), None) if at.depth < MAX_DEPTH => {
                let items = self.items(schema);
                for (i, value) in a.iter().enumerate() {
                    self.walk(items, Some(value), None, false, &at.item(Some(i), None));
                }
            }
            (None, Some(Value::Array(b))) if at.depth < MAX_DEPTH => {
                let items = self.items(schema);
                for (j, value) in b.iter().enumerate() {
                    self.walk(items, None, Some(value), true, &at.item(None, Some(j)));
                }
            }
            (Some(gv), Some(pv)) => {
                let outcome = if self.agree(schema, gv, pv, at) {
                    Outcome::Correct
                } else {
                    Outcome::Wrong
                };
                self.leaf(at, outcome, Some(gv), Some(pv));
            }
            (Some(gv), None) => self.leaf(at, Outcome::Missing, Some(gv), None),
            (None, Some(pv)) => self.leaf(at, Outcome::Extra, None, Some(pv)),
            (None, None) if gold.is_some() => {
                let outcome = if answered {
                    Outcome::Empty
                } else {
                    Outcome::Unanswered
                };
                self.leaf(at, outcome, None, None);
            }
            (None, None) => {}
        }
    }

    /// Pairs the items of two lists (by key, else by the best assignment) and scores each pair.
    fn list(&mut self, schema: Option<&'a Value>, gold: &[Value], predicted: &[Value], at: &At) {
        let items = self.items(schema);
        let keys = items.map(lists::keys_of).unwrap_or_default();
        let pairs = if !keys.is_empty() {
            lists::by_key(gold, predicted, &keys)
        } else {
            let weights: Vec<Vec<u64>> = gold
                .iter()
                .enumerate()
                .map(|(i, g)| {
                    predicted
                        .iter()
                        .enumerate()
                        .map(|(j, p)| self.matched(items, g, p, &at.item(Some(i), Some(j))))
                        .collect()
                })
                .collect();
            let paired = lists::assign(&weights);
            let mut taken = vec![false; predicted.len()];
            let mut pairs = Vec::new();
            for (i, j) in paired.into_iter().enumerate() {
                if let Some(slot) = j.and_then(|j| taken.get_mut(j)) {
                    *slot = true;
                }
                pairs.push((Some(i), j));
            }
            pairs.extend(
                taken
                    .iter()
                    .enumerate()
                    .filter(|(_, taken)| !**taken)
                    .map(|(j, _)| (None, Some(j))),
            );
            pairs
        };
        for (i, j) in pairs {
            let g = i.and_then(|i| gold.get(i));
            let p = j.and_then(|j| predicted.get(j));
            self.walk(items, g, p, p.is_some(), &at.item(i, j));
        }
    }

    /// How many leaves of the pair are right (the weight of pairing them).
    fn matched(&self, items: Option<&'a Value>, gold: &Value, predicted: &Value, at: &At) -> u64 {
        let mut trial = Walk {
            root: self.root,
            case: self.case,
            spans: self.spans,
            options: self.options,
            confidence: self.confidence,
            agreement: self.agreement,
            leaves: Vec::new(),
        };
        trial.walk(items, Some(gold), Some(predicted), true, at);
        trial.leaves.iter().filter(|l| l.outcome.is_right()).count() as u64
    }

    /// Whether two scalar values agree (or a grounded value's spans overlap enough).
    fn agree(&self, schema: Option<&Value>, gold: &Value, predicted: &Value, at: &At) -> bool {
        if let Some(overlap) = self.span_overlap(at) {
            return overlap >= self.options.span_overlap;
        }
        let exact = schema.is_some_and(|s| self.is_enum(s));
        let same = |want: &Value| match (want, predicted) {
            (Value::String(a), Value::String(b)) => {
                if exact {
                    a == b
                } else {
                    normalise(a) == normalise(b)
                }
            }
            (Value::Number(a), Value::Number(b)) => match (a.as_f64(), b.as_f64()) {
                (Some(a), Some(b)) => self.options.numbers_agree(a, b),
                _ => a == b,
            },
            (a, b) => a == b,
        };
        same(gold) || self.case.alternatives(&at.gold).iter().any(same)
    }

    /// Intersection over union of the gold span and the predicted span of this leaf, when both exist.
    fn span_overlap(&self, at: &At) -> Option<f64> {
        let gold = self.case.spans.iter().find(|s| s.path == at.gold)?;
        let predicted = self
            .spans
            .iter()
            .find(|s| s.path == at.predicted && s.kind.is_found())?;
        let (a, b) = (gold.start..gold.end, predicted.chars.clone());
        let inter = a.end.min(b.end).saturating_sub(a.start.max(b.start));
        let union = a.end.max(b.end) - a.start.min(b.start);
        Some(if union == 0 {
            1.0
        } else {
            inter as f64 / union as f64
        })
    }

    fn resolve(&self, schema: Option<&'a Value>) -> Option<&'a Value> {
        match (self.root, schema) {
            (Some(root), Some(schema)) => Some(node::resolve(root, schema)),
            _ => schema,
        }
    }

    /// The branches of a schema: itself, and those of its `anyOf`/`oneOf`/`allOf`, resolved.
    fn branches(&self, schema: &'a Value) -> Vec<&'a Value> {
        let mut out = vec![schema];
        for keyword in ["anyOf", "oneOf", "allOf"] {
            if let Some(Value::Array(branches)) = schema.get(keyword) {
                out.extend(branches.iter().filter_map(|b| self.resolve(Some(b))));
            }
        }
        out
    }

    fn property(&self, schema: Option<&'a Value>, name: &str) -> Option<&'a Value> {
        let schema = schema?;
        self.branches(schema)
            .into_iter()
            .find_map(|branch| branch.get("properties")?.get(name))
    }

    fn items(&self, schema: Option<&'a Value>) -> Option<&'a Value> {
        let schema = schema?;
        let items = self
            .branches(schema)
            .into_iter()
            .find_map(|branch| branch.get("items").filter(|items| items.is_object()))?;
        self.resolve(Some(items))
    }

    fn is_enum(&self, schema: &'a Value) -> bool {
        self.branches(schema)
            .iter()
            .any(|branch| branch.get("enum").is_some() || branch.get("const").is_some())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ground::Source;
    use serde_json::json;

    fn outcomes(
        gold: Value,
        predicted: Option<Value>,
        schema: Option<Value>,
    ) -> Vec<(String, Outcome)> {
        let case = GoldCase::new("a", "", gold);
        score_document(
            &case,
            predicted.as_ref(),
            &[],
            schema.as_ref(),
            &ScoreOptions::default(),
        )
        .into_iter()
        .map(|l| (l.field, l.outcome))
        .collect()
    }

    #[test]
    fn strings_are_folded_collapsed_and_trimmed() {
        assert_eq!(normalise("  Ada \n\t LOVELACE. "), "ada lovelace");
        assert_eq!(normalise("„Grüße“"), "grüsse");
        assert_eq!(normalise("ΟΔΥΣΣΕΥΣ"), normalise("οδυσσευς"));
        assert_eq!(normalise("(617) 555-0199"), "617) 555-0199");
        assert_eq!(normalise("it’s"), "it's");
        assert_eq!(normalise(" -- "), "");
        let got = outcomes(
            json!({"a": "Harbor Logistics Ltd", "b": "x", "c": null}),
            Some(json!({"a": "harbor  logistics ltd.", "b": "y", "c": " "})),
            None,
        );
        assert_eq!(
            got,
            [
                ("a".into(), Outcome::Correct),
                ("b".into(), Outcome::Wrong),
                ("c".into(), Outcome::Empty)
            ]
        );
    }

    #[test]
    fn numbers_agree_within_the_tolerance_and_booleans_exactly() {
        let options = ScoreOptions::default();
        assert!(options.numbers_agree(1.0, 1.0 + 1e-12));
        assert!(!options.numbers_agree(100.0, 100.01));
        let loose = options.tolerance(0.0, 0.05);
        assert!(loose.numbers_agree(100.0, 100.01));
        assert!(!loose.numbers_agree(100.0, 100.1));
        let relative = options.tolerance(0.01, 0.0);
        assert!(relative.numbers_agree(1000.0, 1009.0));
        assert!(!relative.numbers_agree(1.0, 1.02));
        assert_eq!(
            ScoreOptions::default().tolerance(f64::NAN, -1.0).absolute,
            0.0
        );
        assert_eq!(
            outcomes(
                json!({"n": 1, "b": true}),
                Some(json!({"n": 1.0, "b": false})),
                None
            ),
            [("n".into(), Outcome::Correct), ("b".into(), Outcome::Wrong)]
        );
    }

    #[test]
    fn enum_values_are_exact_and_alternatives_count() {
        let schema = json!({"type": "object", "properties": {
            "currency": {"enum": ["EUR", "eur"]},
            "name": {"type": "string"}
        }});
        let got = outcomes(
            json!({"currency": "EUR", "name": "Ada"}),
            Some(json!({"currency": "eur", "name": "ADA"})),
            Some(schema),
        );
        assert_eq!(got[0].1, Outcome::Wrong);
        assert_eq!(got[1].1, Outcome::Correct);
        let mut case = GoldCase::new("a", "", json!({"name": "Helen Park"}));
        case.accept = json!({"name": ["Dr. Helen Park"]}).as_object().cloned();
        let leaves = score_document(
            &case,
            Some(&json!({"name": "dr. helen park"})),
            &[],
            None,
            &ScoreOptions::default(),
        );
        assert_eq!(leaves[0].outcome, Outcome::Correct);
    }

    #[test]
    fn missing_extra_and_unanswered_leaves() {
        let got = outcomes(
            json!({"a": "x", "b": null, "c": {"d": 1}}),
            Some(json!({"b": 2, "e": "new", "f": null})),
            None,
        );
        assert_eq!(
            got,
            [
                ("a".into(), Outcome::Missing),
                ("b".into(), Outcome::Extra),
                ("c.d".into(), Outcome::Missing),
                ("e".into(), Outcome::Extra),
            ]
        );
        // No valid value: every gold leaf counts, the empty ones as unanswered.
        let got = outcomes(json!({"a": "x", "b": null}), None, None);
        assert_eq!(
            got,
            [
                ("a".into(), Outcome::Missing),
                ("b".into(), Outcome::Unanswered)
            ]
        );
    }

    #[test]
    fn keyed_lists_match_by_key_and_the_rest_by_best_assignment() {
        let schema = json!({"type": "object", "properties": {"people": {"type": "array", "items": {"$ref": "#/$defs/P"}}},
            "$defs": {"P": {"type": "object", "properties": {"name": {"type": "string", "x-key": true}, "role": {"type": "string"}}}}});
        let gold =
            json!({"people": [{"name": "Ada", "role": "writer"}, {"name": "Bo", "role": "cook"}]});
        // By key: "Bo" answers Bo, even though its role matches Ada's.
        let predicted =
            json!({"people": [{"name": "bo", "role": "writer"}, {"name": "Cy", "role": "cook"}]});
        let got = outcomes(gold.clone(), Some(predicted.clone()), Some(schema));
        assert_eq!(
            got,
            [
                ("people[].name".into(), Outcome::Correct),
                ("people[].role".into(), Outcome::Wrong),
                ("people[].name".into(), Outcome::Extra),
                ("people[].role".into(), Outcome::Extra),
                ("people[].name".into(), Outcome::Missing),
                ("people[].role".into(), Outcome::Missing),
            ]
        );
        // Without keys: the pairing that matches the most fields (the two roles; "Bo" with "bo"
        // alone would match one).
        let got = outcomes(gold, Some(predicted), None);
        let right = got.iter().filter(|(_, o)| *o == Outcome::Correct).count();
        assert_eq!(right, 2, "{got:?}");
        assert_eq!(got[1], ("people[].role".into(), Outcome::Correct));
    }

    #[test]
    fn grounded_values_score_by_span_overlap_where_the_gold_has_spans() {
        let text = "Ada met Ada Lovelace.";
        let schema = json!({"type": "object", "properties": {"name": {"type": "string", "x-grounded": true}}});
        let mut case = GoldCase::new("a", text, json!({"name": "Ada Lovelace"}));
        case.spans = vec![super::super::GoldSpan::new("/name", 8, 20)];
        let options = ScoreOptions::default();
        let score = |predicted: Value| {
            let spans = Source::new(text).ground(&schema, &predicted);
            score_document(&case, Some(&predicted), &spans, Some(&schema), &options)[0].outcome
        };
        assert_eq!(score(json!({"name": "Ada Lovelace"})), Outcome::Correct);
        // "Lovelace" covers 8 of 12 chars: enough at 0.5; the first "Ada" does not overlap.
        assert_eq!(score(json!({"name": "Lovelace"})), Outcome::Correct);
        assert_eq!(score(json!({"name": "Ada"})), Outcome::Wrong);
        let strict = options.span_overlap(0.9);
        let spans = Source::new(text).ground(&schema, &json!({"name": "Lovelace"}));
        let leaves = score_document(
            &case,
            Some(&json!({"name": "Lovelace"})),
            &spans,
            Some(&schema),
            &strict,
        );
        assert_eq!(leaves[0].outcome, Outcome::Wrong);
    }
}

#[cfg(test)]
mod props {
    use super::super::{DocumentRun, EvalReport};
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;
    use std::time::Duration;

    fn leaf() -> impl Strategy<Value = Value> {
        prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            (-1000i64..1000).prop_map(|n| json!(n)),
            (-1e6f64..1e6).prop_map(|x| json!(x)),
            "[ a-cA-C.,é-]{0,6}".prop_map(Value::String),
        ]
    }

    fn value() -> impl Strategy<Value = Value> {
        leaf().prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::btree_map("[a-c]", inner, 0..4)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    fn report(gold: &Value, predicted: Option<&Value>, schema: Option<&Value>) -> EvalReport {
        let case = GoldCase::new("p", "", gold.clone());
        let leaves = score_document(&case, predicted, &[], schema, &ScoreOptions::default());
        EvalReport::new(vec![DocumentRun::new(
            &case,
            predicted.cloned(),
            None,
            0,
            Duration::ZERO,
            leaves,
        )])
    }

    fn in_unit(x: Option<f64>) -> bool {
        x.is_none_or(|x| (0.0..=1.0).contains(&x))
    }

    /// A list of people keyed by name (distinct names), each with a role.
    fn people() -> impl Strategy<Value = (Vec<(String, Value)>, Vec<Value>)> {
        prop::collection::btree_map("[a-e]{1,3}", leaf(), 0..6).prop_flat_map(|people| {
            let people: Vec<(String, Value)> = people.into_iter().collect();
            let n = people.len();
            (Just(people), prop::collection::vec(leaf(), n..=n))
        })
    }

    proptest! {
        #[test]
        fn scores_are_shares(gold in value(), predicted in proptest::option::of(value())) {
            let report = report(&gold, predicted.as_ref(), None);
            for score in report.fields.iter().chain([&report.overall]) {
                prop_assert!((0.0..=1.0).contains(&score.accuracy));
                prop_assert!(in_unit(score.precision) && in_unit(score.recall) && in_unit(score.f1));
            }
        }

        #[test]
        fn a_prediction_equal_to_the_gold_scores_one(gold in value()) {
            let report = report(&gold, Some(&gold), None);
            prop_assert_eq!(report.overall.accuracy, 1.0);
            prop_assert_eq!(report.overall.false_positives + report.overall.false_negatives, 0);
        }

        #[test]
        fn permuting_a_list_keeps_its_score(
            (people, other_roles) in people(),
            rotate in 0usize..6,
            shuffled in prop::collection::vec(value(), 0..5),
        ) {
            let schema = json!({"type": "object", "properties": {"people": {"type": "array", "items": {
                "type": "object",
                "properties": {"name": {"type": "string", "x-key": true}, "role": {}}
            }}}});
            let item = |(name, role): (&String, &Value)| json!({"name": name, "role": role});
            let gold = json!({"people": people.iter().map(|(n, r)| item((n, r))).collect::<Vec<_>>()});
            let mut predicted: Vec<Value> = people
                .iter()
                .zip(&other_roles)
                .enumerate()
                .map(|(i, ((n, r), other))| item((n, if i % 2 == 0 { r } else { other })))
                .collect();
            let before = report(&gold, Some(&json!({"people": predicted.clone()})), Some(&schema));
            if !predicted.is_empty() {
                let k = rotate % predicted.len();
                predicted.rotate_left(k);
            }
            let after = report(&gold, Some(&json!({"people": predicted.clone()})), Some(&schema));
            prop_assert_eq!(&before.fields, &after.fields);
            // Without keys: a permutation of the gold's own list scores one.
            let mut list = shuffled.clone();
            let gold = json!({"list": list.clone()});
            if !list.is_empty() {
                let k = rotate % list.len();
                list.rotate_left(k);
            }
            let unkeyed = report(&gold, Some(&json!({"list": list})), None);
            prop_assert_eq!(unkeyed.overall.accuracy, 1.0);
        }
    }
}

//! Whether confidence ranks right values above wrong ones: the leaves of a run that have a confidence
//! (see [`Report::confidence`](crate::Report::confidence)) sorted by it, the accuracy of the most and
//! the least confident halves, the area under the ROC curve of confidence against correctness, and the
//! fields sorted by their mean confidence.

use super::score::Leaf;
use super::shown::{field_name, percent};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

/// How well a run's confidences separate right values from wrong ones.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Calibration {
    /// The signal calibrated: `"confidence"` (from log-probabilities) or `"agreement"` (across voted
    /// answers).
    #[serde(default = "confidence_signal")]
    pub signal: String,
    /// Leaves with a confidence.
    pub scored: usize,
    /// Accuracy of the more confident half of them (the first `scored / 2` by confidence, highest
    /// first; equal confidences in their run order).
    pub top_half_accuracy: Option<f64>,
    /// Accuracy of the rest, the less confident half.
    pub bottom_half_accuracy: Option<f64>,
    /// The area under the ROC curve of confidence against correctness: the chance that a right leaf has
    /// a higher confidence than a wrong one, ties counting half. 0.5 is no better than chance; `None`
    /// when the leaves are all right or all wrong.
    pub auc: Option<f64>,
    /// Per field: leaves with a confidence, their mean confidence and their accuracy; the most
    /// confident field first.
    pub fields: Vec<FieldConfidence>,
}

/// The signal of a calibration read without one.
fn confidence_signal() -> String {
    "confidence".to_owned()
}

/// One field's confidence against its accuracy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct FieldConfidence {
    /// The field (`items[].name`).
    pub field: String,
    /// Leaves with a confidence.
    pub scored: usize,
    /// Their mean confidence.
    pub mean_confidence: f64,
    /// The share of them that are right.
    pub accuracy: f64,
}

impl Calibration {
    /// The calibration of the confidence of `leaves` (those without one are left out); `None` when
    /// none has one.
    pub fn of<'a>(leaves: impl IntoIterator<Item = &'a Leaf>) -> Option<Calibration> {
        Self::of_signal("confidence", leaves, |leaf| leaf.confidence)
    }

    /// The calibration of the agreement of `leaves` across voted answers (see
    /// [`Extractor::samples`](crate::extract::Extractor::samples)); `None` when none has one.
    pub fn of_agreement<'a>(leaves: impl IntoIterator<Item = &'a Leaf>) -> Option<Calibration> {
        Self::of_signal("agreement", leaves, |leaf| leaf.agreement)
    }

    /// The checks as a signal of doubt (see [`mark_doubts`](super::mark_doubts)): a leaf without an
    /// issue ranks above one with an issue. The "higher half" is then the leaves without an issue and
    /// the "lower half" those with one, whatever their number; `None` when no leaf was checked.
    pub fn of_doubts<'a>(
        leaves: impl IntoIterator<Item = &'a Leaf> + Clone,
    ) -> Option<Calibration> {
        let signal = |leaf: &Leaf| leaf.doubtful.map(|d| if d { 0.0 } else { 1.0 });
        let mut calibration = Self::of_signal("checks", leaves.clone(), signal)?;
        let accuracy = |doubtful: bool| {
            let group: Vec<bool> = leaves
                .clone()
                .into_iter()
                .filter(|leaf| leaf.doubtful == Some(doubtful))
                .map(|leaf| leaf.outcome.is_right())
                .collect();
            (!group.is_empty())
                .then(|| group.iter().filter(|r| **r).count() as f64 / group.len() as f64)
        };
        calibration.top_half_accuracy = accuracy(false);
        calibration.bottom_half_accuracy = accuracy(true);
        Some(calibration)
    }

    /// The calibration of the signal `signal` reads from each leaf.
    fn of_signal<'a>(
        name: &str,
        leaves: impl IntoIterator<Item = &'a Leaf>,
        signal: impl Fn(&Leaf) -> Option<f32>,
    ) -> Option<Calibration> {
        let scored: Vec<(&str, f64, bool)> = leaves
            .into_iter()
            .filter_map(|leaf| {
                let value = f64::from(signal(leaf)?);
                Some((leaf.field.as_str(), value, leaf.outcome.is_right()))
            })
            .collect();
        if scored.is_empty() {
            return None;
        }
        let mut ranked: Vec<(f64, bool)> = scored.iter().map(|&(_, c, r)| (c, r)).collect();
        ranked.sort_by(|a, b| b.0.total_cmp(&a.0));
        let half = ranked.len() / 2;
        let accuracy = |part: &[(f64, bool)]| {
            (!part.is_empty())
                .then(|| part.iter().filter(|(_, r)| *r).count() as f64 / part.len() as f64)
        };
        let mut by_field: BTreeMap<&str, (usize, f64, usize)> = BTreeMap::new();
        for &(field, confidence, right) in &scored {
            let entry = by_field.entry(field).or_default();
            entry.0 += 1;
            entry.1 += confidence;
            entry.2 += usize::from(right);
        }
        let mut fields: Vec<FieldConfidence> = by_field
            .into_iter()
            .map(|(field, (n, sum, right))| FieldConfidence {
                field: field.to_owned(),
                scored: n,
                mean_confidence: sum / n as f64,
                accuracy: right as f64 / n as f64,
            })
            .collect();
        fields.sort_by(|a, b| b.mean_confidence.total_cmp(&a.mean_confidence));
        Some(Calibration {
            signal: name.to_owned(),
            scored: ranked.len(),
            top_half_accuracy: accuracy(ranked.get(..half).unwrap_or_default()),
            bottom_half_accuracy: accuracy(ranked.get(half..).unwrap_or_default()),
            auc: roc_auc(&ranked),
            fields,
        })
    }
}

/// The area under the ROC curve of `scores` (a confidence, and whether the value is right): the
/// Mann-Whitney statistic, from the ranks of the right values among all, equal confidences sharing
/// their mean rank (so a tie counts half). `None` when every value is right or every one wrong.
/// `O(n log n)`.
pub fn roc_auc(scores: &[(f64, bool)]) -> Option<f64> {
    let mut sorted: Vec<(f64, bool)> = scores.to_vec();
    sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
    let positives = sorted.iter().filter(|(_, right)| *right).count();
    let negatives = sorted.len() - positives;
    if positives == 0 || negatives == 0 {
        return None;
    }
    let mut rank_sum = 0.0;
    let mut start = 0;
    while start < sorted.len() {
        let mut end = start + 1;
        while sorted.get(end).is_some_and(|s| s.0 == sorted[start].0) {
            end += 1;
        }
        // Ranks start + 1 ..= end, shared.
        let mean_rank = (start + 1 + end) as f64 / 2.0;
        let rights = sorted[start..end].iter().filter(|(_, r)| *r).count();
        rank_sum += mean_rank * rights as f64;
        start = end;
    }
    let (p, n) = (positives as f64, negatives as f64);
    Some((rank_sum - p * (p + 1.0) / 2.0) / (p * n))
}

impl fmt::Display for Calibration {
    /// The halves and the AUC on one line, then the fields by mean confidence.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (higher, lower) = match self.signal.as_str() {
            "checks" => ("without an issue", "with one"),
            _ => ("the higher half", "the lower half"),
        };
        writeln!(
            f,
            "{}: {} leaves; {higher} {} right, {lower} {} right; ROC AUC {}",
            self.signal,
            self.scored,
            percent(self.top_half_accuracy),
            percent(self.bottom_half_accuracy),
            self.auc
                .map_or_else(|| "-".to_owned(), |a| format!("{a:.3}"))
        )?;
        let width = self
            .fields
            .iter()
            .map(|s| field_name(&s.field).chars().count())
            .max()
            .unwrap_or(0)
            .max(5);
        writeln!(
            f,
            "{:<width$}  {:>6}  {:>10}  {:>8}",
            "field", "leaves", "mean", "accuracy"
        )?;
        for field in &self.fields {
            writeln!(
                f,
                "{:<width$}  {:>6}  {:>10.3}  {:>8}",
                field_name(&field.field),
                field.scored,
                field.mean_confidence,
                percent(Some(field.accuracy))
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::Outcome;

    fn leaf(field: &str, confidence: Option<f32>, outcome: Outcome) -> Leaf {
        serde_json::from_value(serde_json::json!({
            "field": field, "path": "/x", "outcome": outcome, "confidence": confidence
        }))
        .unwrap()
    }

    #[test]
    fn doubts_of_checks_split_the_leaves_with_an_issue_from_the_others() {
        let at = |path: &str, outcome: Outcome| -> Leaf {
            serde_json::from_value(serde_json::json!({
                "field": path.trim_start_matches('/'), "path": path, "outcome": outcome
            }))
            .unwrap()
        };
        let mut leaves = vec![
            at("/total", Outcome::Wrong),
            at("/currency", Outcome::Wrong),
            at("/customer", Outcome::Correct),
            at("/lines/0/amount", Outcome::Wrong),
            at("/totalled", Outcome::Correct),
        ];
        assert_eq!(Calibration::of_doubts(&leaves), None, "no run with checks");
        let mut issues = crate::check::Issues::new();
        issues.soft("/total", "not an amount in the text");
        issues.soft("/lines", "the lines do not add up");
        crate::eval::mark_doubts(&mut leaves, issues.as_slice());
        let doubtful: Vec<bool> = leaves.iter().map(|l| l.doubtful.unwrap()).collect();
        // "/totalled" is not under "/total".
        assert_eq!(doubtful, [true, false, false, true, false]);
        let calibration = Calibration::of_doubts(&leaves).unwrap();
        assert_eq!(calibration.signal, "checks");
        assert_eq!(calibration.top_half_accuracy, Some(2.0 / 3.0));
        assert_eq!(calibration.bottom_half_accuracy, Some(0.0));
        // Right values: 2 without an issue; wrong: 2 with one, 1 without. 4 pairs won, 2 tied.
        assert_eq!(calibration.auc, Some(5.0 / 6.0));
        assert!(calibration
            .to_string()
            .starts_with("checks: 5 leaves; without an issue 66.7% right, with one 0.0% right"));
    }

    #[test]
    fn agreement_is_calibrated_apart_from_confidence() {
        let with = |agreement: f32, outcome: Outcome| -> Leaf {
            serde_json::from_value(serde_json::json!({
                "field": "name", "path": "/x", "outcome": outcome, "agreement": agreement
            }))
            .unwrap()
        };
        let leaves = vec![
            with(1.0, Outcome::Correct),
            with(1.0, Outcome::Correct),
            with(0.4, Outcome::Wrong),
            with(0.6, Outcome::Correct),
        ];
        assert_eq!(Calibration::of(&leaves), None);
        let agreement = Calibration::of_agreement(&leaves).unwrap();
        assert_eq!(agreement.signal, "agreement");
        assert_eq!(agreement.scored, 4);
        assert_eq!(agreement.auc, Some(1.0));
        assert_eq!(agreement.top_half_accuracy, Some(1.0));
        assert_eq!(agreement.bottom_half_accuracy, Some(0.5));
        assert!(agreement.to_string().starts_with("agreement: 4 leaves"));
    }

    #[test]
    fn auc_is_one_when_every_right_value_is_more_confident() {
        let scores = [(0.9, true), (0.8, true), (0.3, false), (0.1, false)];
        assert_eq!(roc_auc(&scores), Some(1.0));
        let reversed: Vec<(f64, bool)> = scores.iter().map(|&(c, r)| (c, !r)).collect();
        assert_eq!(roc_auc(&reversed), Some(0.0));
    }

    #[test]
    fn ties_count_half_and_one_class_has_no_auc() {
        assert_eq!(roc_auc(&[(0.5, true), (0.5, false)]), Some(0.5));
        // Right: 0.9, 0.5; wrong: 0.5, 0.1. Pairs: (0.9>0.5) 1, (0.9>0.1) 1, (0.5=0.5) 0.5, (0.5>0.1) 1.
        let scores = [(0.9, true), (0.5, true), (0.5, false), (0.1, false)];
        assert_eq!(roc_auc(&scores), Some(3.5 / 4.0));
        assert_eq!(roc_auc(&[(0.2, true), (0.4, true)]), None);
        assert_eq!(roc_auc(&[]), None);
    }

    #[test]
    fn auc_agrees_with_counting_pairs() {
        let scores: Vec<(f64, bool)> = (0..60)
            .map(|i| (f64::from((i * 37) % 11) / 10.0, (i * 7) % 3 != 0))
            .collect();
        let (mut wins, mut pairs) = (0.0, 0.0);
        for a in scores.iter().filter(|s| s.1) {
            for b in scores.iter().filter(|s| !s.1) {
                pairs += 1.0;
                wins += if a.0 > b.0 {
                    1.0
                } else if a.0 == b.0 {
                    0.5
                } else {
                    0.0
                };
            }
        }
        let auc = roc_auc(&scores).unwrap();
        assert!(
            (auc - wins / pairs).abs() < 1e-12,
            "{auc} vs {}",
            wins / pairs
        );
    }

    #[test]
    fn halves_and_fields_are_sorted_by_confidence() {
        let leaves = vec![
            leaf("name", Some(0.9), Outcome::Correct),
            leaf("name", Some(0.8), Outcome::Correct),
            leaf("date", Some(0.4), Outcome::Wrong),
            leaf("date", Some(0.6), Outcome::Correct),
            leaf("date", Some(0.2), Outcome::Missing),
            leaf("date", None, Outcome::Wrong),
        ];
        let calibration = Calibration::of(&leaves).unwrap();
        assert_eq!(calibration.scored, 5);
        // Top two: 0.9, 0.8 (right); the rest: 0.6 right, 0.4 and 0.2 wrong.
        assert_eq!(calibration.top_half_accuracy, Some(1.0));
        assert!((calibration.bottom_half_accuracy.unwrap() - 1.0 / 3.0).abs() < 1e-12);
        assert_eq!(calibration.auc, Some(1.0));
        let names: Vec<&str> = calibration
            .fields
            .iter()
            .map(|f| f.field.as_str())
            .collect();
        assert_eq!(names, vec!["name", "date"]);
        assert!(calibration.to_string().contains("ROC AUC 1.000"));
        assert_eq!(Calibration::of(&leaves[5..]), None);
    }
}

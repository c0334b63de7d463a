//! A run summed up: per field and overall, with validity, tokens and time per document; as JSON
//! (serde), as a plain-text table (`Display`), and two runs side by side ([`compare`]).

use super::calibration::Calibration;
use super::gold::GoldCase;
use super::score::Leaf;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

/// One document of a run: its prediction, cost and scored leaves.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct DocumentRun {
    /// The gold case's id.
    pub id: String,
    /// Whether the model gave a valid value.
    pub valid: bool,
    /// Why not, when it did not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Tokens spent (prompt and completion, every attempt).
    pub tokens: u64,
    /// Time spent, in seconds.
    pub seconds: f64,
    /// Leaves right ([`Outcome::is_right`](super::Outcome::is_right)).
    pub correct: usize,
    /// Leaves scored.
    pub total: usize,
    /// The gold value.
    pub gold: Value,
    /// The valid value, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub predicted: Option<Value>,
    /// Every scored leaf.
    pub leaves: Vec<Leaf>,
    /// With several answers per request ([`Extractor::samples`](crate::Extractor::samples)), the
    /// share of them that agree with each leaf of the prediction, by JSON pointer
    /// ([`Report::agreement`](crate::Report::agreement)).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub agreement: BTreeMap<String, f32>,
}

impl DocumentRun {
    /// The run of `case`: `predicted` its valid value (`None` with `error` when it has none), `tokens`
    /// and `elapsed` what it cost, `leaves` as [`score_document`](super::score_document) scored it.
    pub fn new(
        case: &GoldCase,
        predicted: Option<Value>,
        error: Option<String>,
        tokens: u64,
        elapsed: Duration,
        leaves: Vec<Leaf>,
    ) -> Self {
        DocumentRun {
            id: case.id.clone(),
            valid: predicted.is_some(),
            error,
            tokens,
            seconds: elapsed.as_secs_f64(),
            correct: leaves.iter().filter(|l| l.outcome.is_right()).count(),
            total: leaves.len(),
            gold: case.value.clone(),
            predicted,
            leaves,
            agreement: BTreeMap::new(),
        }
    }

    /// The same run with the agreement of each leaf of its prediction.
    pub fn with_agreement(mut self, agreement: BTreeMap<String, f32>) -> Self {
        self.agreement = agreement;
        self
    }

    /// The share of its leaves that are right (1 when it has none).
    pub fn accuracy(&self) -> f64 {
        share(self.correct, self.total).unwrap_or(1.0)
    }
}

/// The scores of one field (or, as [`EvalReport::overall`], of all).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct FieldScore {
    /// The field (`items[].name`), or `*` for all.
    pub field: String,
    /// Leaves scored.
    pub total: usize,
    /// Leaves right.
    pub correct: usize,
    /// True positives.
    pub true_positives: usize,
    /// False positives (a predicted value where the gold has none or another).
    pub false_positives: usize,
    /// False negatives (a gold value the prediction misses or gets wrong).
    pub false_negatives: usize,
    /// `correct / total`.
    pub accuracy: f64,
    /// `tp / (tp + fp)`, `None` when nothing was predicted.
    pub precision: Option<f64>,
    /// `tp / (tp + fn)`, `None` when the gold has no value.
    pub recall: Option<f64>,
    /// The harmonic mean of precision and recall, `None` when either is.
    pub f1: Option<f64>,
}

impl FieldScore {
    fn new(field: &str, leaves: &[&Leaf]) -> Self {
        let (mut tp, mut fp, mut fn_) = (0, 0, 0);
        for leaf in leaves {
            let (a, b, c) = leaf.outcome.counts();
            tp += a;
            fp += b;
            fn_ += c;
        }
        let correct = leaves.iter().filter(|l| l.outcome.is_right()).count();
        let precision = share(tp, tp + fp);
        let recall = share(tp, tp + fn_);
        let f1 = match (precision, recall) {
            (Some(p), Some(r)) if p + r > 0.0 => Some(2.0 * p * r / (p + r)),
            (Some(_), Some(_)) => Some(0.0),
            _ => None,
        };
        FieldScore {
            field: field.to_owned(),
            total: leaves.len(),
            correct,
            true_positives: tp,
            false_positives: fp,
            false_negatives: fn_,
            accuracy: share(correct, leaves.len()).unwrap_or(1.0),
            precision,
            recall,
            f1,
        }
    }
}

/// The median and the worst of a per-document measure.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Stat {
    /// The median (the lower middle of an even count).
    pub median: f64,
    /// The largest.
    pub worst: f64,
    /// The sum over the documents.
    pub total: f64,
}

impl Stat {
    fn of(mut values: Vec<f64>) -> Stat {
        values.sort_by(f64::total_cmp);
        let median = values
            .get(values.len().saturating_sub(1) / 2)
            .copied()
            .unwrap_or(0.0);
        Stat {
            median,
            worst: values.last().copied().unwrap_or(0.0),
            total: values.iter().sum(),
        }
    }
}

/// A whole run scored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct EvalReport {
    /// Documents run.
    pub documents: usize,
    /// Documents with a valid value.
    pub valid: usize,
    /// `valid / documents`.
    pub valid_share: f64,
    /// Every leaf of every document together (field `*`); its `accuracy` is the run's field accuracy.
    pub overall: FieldScore,
    /// Per field, in the order fields first appear.
    pub fields: Vec<FieldScore>,
    /// Tokens per document.
    pub tokens: Stat,
    /// Seconds per document.
    pub seconds: Stat,
    /// Every document, in the order run.
    pub runs: Vec<DocumentRun>,
    /// How well the run's confidences rank right values above wrong ones, when it had confidences.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calibration: Option<Calibration>,
    /// How well the agreement of voted answers ranks right values above wrong ones, when the run voted
    /// several answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agreement_calibration: Option<Calibration>,
    /// How well the checks' soft issues mark wrong values, when the run had checks
    /// ([`mark_doubts`](super::mark_doubts)).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checks_calibration: Option<Calibration>,
}

impl EvalReport {
    /// The report of `runs`.
    pub fn new(runs: Vec<DocumentRun>) -> Self {
        let mut order: Vec<&str> = Vec::new();
        let mut by_field: BTreeMap<&str, Vec<&Leaf>> = BTreeMap::new();
        for leaf in runs.iter().flat_map(|r| &r.leaves) {
            let entry = by_field.entry(leaf.field.as_str()).or_default();
            if entry.is_empty() {
                order.push(leaf.field.as_str());
            }
            entry.push(leaf);
        }
        let fields = order
            .iter()
            .map(|field| FieldScore::new(field, by_field.get(field).map_or(&[], Vec::as_slice)))
            .collect();
        let all: Vec<&Leaf> = runs.iter().flat_map(|r| &r.leaves).collect();
        let valid = runs.iter().filter(|r| r.valid).count();
        EvalReport {
            documents: runs.len(),
            valid,
            valid_share: share(valid, runs.len()).unwrap_or(0.0),
            overall: FieldScore::new("*", &all),
            fields,
            tokens: Stat::of(runs.iter().map(|r| r.tokens as f64).collect()),
            seconds: Stat::of(runs.iter().map(|r| r.seconds).collect()),
            calibration: Calibration::of(runs.iter().flat_map(|r| &r.leaves)),
            agreement_calibration: Calibration::of_agreement(runs.iter().flat_map(|r| &r.leaves)),
            checks_calibration: Calibration::of_doubts(runs.iter().flat_map(|r| &r.leaves)),
            runs,
        }
    }

    /// Up to `n` documents, the least accurate first (failures before any valid value at equal accuracy).
    pub fn worst(&self, n: usize) -> Vec<&DocumentRun> {
        let mut runs: Vec<&DocumentRun> = self.runs.iter().collect();
        runs.sort_by(|a, b| {
            a.accuracy()
                .total_cmp(&b.accuracy())
                .then(a.valid.cmp(&b.valid))
        });
        runs.into_iter()
            .filter(|r| r.correct < r.total || !r.valid)
            .take(n)
            .collect()
    }
}

fn share(part: usize, whole: usize) -> Option<f64> {
    (whole > 0).then(|| part as f64 / whole as f64)
}

pub(crate) use super::shown::{field_name, percent};

impl fmt::Display for EvalReport {
    /// The per-field table, the overall row, then validity, tokens and time.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let width = self
            .fields
            .iter()
            .map(|s| field_name(&s.field).chars().count())
            .max()
            .unwrap_or(0)
            .max(7);
        writeln!(
            f,
            "{:<width$}  {:>6}  {:>8}  {:>9}  {:>7}  {:>7}",
            "field", "leaves", "accuracy", "precision", "recall", "F1"
        )?;
        let row = |f: &mut fmt::Formatter<'_>, name: &str, s: &FieldScore| {
            writeln!(
                f,
                "{name:<width$}  {:>6}  {:>8}  {:>9}  {:>7}  {:>7}",
                s.total,
                percent(Some(s.accuracy)),
                percent(s.precision),
                percent(s.recall),
                percent(s.f1)
            )
        };
        for score in &self.fields {
            row(f, field_name(&score.field), score)?;
        }
        row(f, "overall", &self.overall)?;
        writeln!(
            f,
            "\n{} documents, {} with a valid value ({}); field accuracy {} ({} of {} leaves)",
            self.documents,
            self.valid,
            percent(Some(self.valid_share)),
            percent(Some(self.overall.accuracy)),
            self.overall.correct,
            self.overall.total
        )?;
        writeln!(
            f,
            "tokens per document: median {:.0}, worst {:.0}, total {:.0}; time per document: median {:.2} s, worst {:.2} s, total {:.1} s",
            self.tokens.median,
            self.tokens.worst,
            self.tokens.total,
            self.seconds.median,
            self.seconds.worst,
            self.seconds.total
        )?;
        for calibration in [
            &self.calibration,
            &self.agreement_calibration,
            &self.checks_calibration,
        ]
        .into_iter()
        .flatten()
        {
            write!(f, "\n{calibration}")?;
        }
        Ok(())
    }
}

/// One field in two runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct FieldDelta {
    /// The field (`*` for all).
    pub field: String,
    /// Its scores in the first run, if it has the field.
    pub a: Option<FieldScore>,
    /// Its scores in the second run, if it has the field.
    pub b: Option<FieldScore>,
    /// Accuracy of the second run minus the first's.
    pub accuracy: Option<f64>,
    /// F1 of the second run minus the first's.
    pub f1: Option<f64>,
}

/// Two runs side by side: `b` against `a` (e.g. with and without examples, two models, two prompts).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Comparison {
    /// Documents of each run.
    pub documents: (usize, usize),
    /// Share of valid values of each run.
    pub valid_share: (f64, f64),
    /// Median tokens per document of each run.
    pub tokens: (f64, f64),
    /// Median seconds per document of each run.
    pub seconds: (f64, f64),
    /// Every field, then overall (`*`).
    pub fields: Vec<FieldDelta>,
}

/// `b` against `a`, field by field (fields of either run, `a`'s order first).
pub fn compare(a: &EvalReport, b: &EvalReport) -> Comparison {
    let mut names: Vec<&str> = a.fields.iter().map(|s| s.field.as_str()).collect();
    for score in &b.fields {
        if !names.contains(&score.field.as_str()) {
            names.push(&score.field);
        }
    }
    let find =
        |report: &EvalReport, name: &str| report.fields.iter().find(|s| s.field == name).cloned();
    let delta = |a: Option<FieldScore>, b: Option<FieldScore>, field: &str| {
        let accuracy = a
            .as_ref()
            .zip(b.as_ref())
            .map(|(a, b)| b.accuracy - a.accuracy);
        let f1 = a
            .as_ref()
            .zip(b.as_ref())
            .and_then(|(a, b)| Some(b.f1? - a.f1?));
        FieldDelta {
            field: field.to_owned(),
            a,
            b,
            accuracy,
            f1,
        }
    };
    let mut fields: Vec<FieldDelta> = names
        .iter()
        .map(|name| delta(find(a, name), find(b, name), name))
        .collect();
    fields.push(delta(Some(a.overall.clone()), Some(b.overall.clone()), "*"));
    Comparison {
        documents: (a.documents, b.documents),
        valid_share: (a.valid_share, b.valid_share),
        tokens: (a.tokens.median, b.tokens.median),
        seconds: (a.seconds.median, b.seconds.median),
        fields,
    }
}

/// A difference of shares in percentage points, signed.
pub(crate) fn points(delta: Option<f64>) -> String {
    delta.map_or_else(|| "-".to_owned(), |d| format!("{:+.1}", 100.0 * d))
}

impl fmt::Display for Comparison {
    /// Accuracy and F1 of both runs per field, with the change in percentage points.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let width = self
            .fields
            .iter()
            .map(|d| field_name(&d.field).chars().count())
            .max()
            .unwrap_or(0)
            .max(7);
        writeln!(
            f,
            "{:<width$}  {:>8}  {:>8}  {:>7}  {:>7}  {:>7}  {:>7}",
            "field", "acc. A", "acc. B", "Δ pts", "F1 A", "F1 B", "Δ pts"
        )?;
        for d in &self.fields {
            let name = if d.field == "*" {
                "overall"
            } else {
                field_name(&d.field)
            };
            let acc = |s: &Option<FieldScore>| percent(s.as_ref().map(|s| s.accuracy));
            let f1 = |s: &Option<FieldScore>| percent(s.as_ref().and_then(|s| s.f1));
            writeln!(
                f,
                "{name:<width$}  {:>8}  {:>8}  {:>7}  {:>7}  {:>7}  {:>7}",
                acc(&d.a),
                acc(&d.b),
                points(d.accuracy),
                f1(&d.a),
                f1(&d.b),
                points(d.f1)
            )?;
        }
        writeln!(
            f,
            "\nA: {} documents, {} valid, median {:.0} tokens, {:.2} s; B: {} documents, {} valid, median {:.0} tokens, {:.2} s",
            self.documents.0,
            percent(Some(self.valid_share.0)),
            self.tokens.0,
            self.seconds.0,
            self.documents.1,
            percent(Some(self.valid_share.1)),
            self.tokens.1,
            self.seconds.1
        )
    }
}

#[cfg(test)]
mod tests {
    use super::super::{score_document, ScoreOptions};
    use super::*;
    use serde_json::json;

    fn run(id: &str, gold: Value, predicted: Option<Value>, tokens: u64) -> DocumentRun {
        let case = GoldCase::new(id, "", gold);
        let leaves = score_document(
            &case,
            predicted.as_ref(),
            &[],
            None,
            &ScoreOptions::default(),
        );
        let error = predicted.is_none().then(|| "invalid".to_owned());
        DocumentRun::new(
            &case,
            predicted,
            error,
            tokens,
            Duration::from_millis(tokens * 10),
            leaves,
        )
    }

    fn report() -> EvalReport {
        EvalReport::new(vec![
            run(
                "a",
                json!({"name": "Ada", "age": 36}),
                Some(json!({"name": "Ada", "age": 37})),
                10,
            ),
            run(
                "b",
                json!({"name": "Bo", "age": null}),
                Some(json!({"name": "Bo", "age": 5})),
                30,
            ),
            run("c", json!({"name": "Cy", "age": 2}), None, 20),
        ])
    }

    #[test]
    fn fields_sum_precision_recall_accuracy_and_costs() {
        let report = report();
        assert_eq!((report.documents, report.valid), (3, 2));
        let name = &report.fields[0];
        assert_eq!(
            (name.field.as_str(), name.correct, name.total),
            ("name", 2, 3)
        );
        assert_eq!(name.precision, Some(1.0));
        assert_eq!(name.recall, Some(2.0 / 3.0));
        let age = &report.fields[1];
        // 37 for 36: fp + fn; 5 for null: fp; missing 2: fn.
        assert_eq!(
            (age.true_positives, age.false_positives, age.false_negatives),
            (0, 2, 2)
        );
        assert_eq!(age.f1, Some(0.0));
        assert_eq!(report.overall.correct, 2);
        assert_eq!(report.overall.total, 6);
        assert_eq!(
            (
                report.tokens.median,
                report.tokens.worst,
                report.tokens.total
            ),
            (20.0, 30.0, 60.0)
        );
        assert_eq!(
            report
                .worst(2)
                .iter()
                .map(|r| r.id.as_str())
                .collect::<Vec<_>>(),
            ["c", "a"]
        );
        let table = report.to_string();
        assert!(table.contains("overall"), "{table}");
        assert!(
            table
                .lines()
                .any(|l| l.starts_with("name ") && l.contains("66.7%")),
            "{table}"
        );
        let back: EvalReport =
            serde_json::from_str(&serde_json::to_string(&report).unwrap()).unwrap();
        assert_eq!(back, report);
    }

    #[test]
    fn compare_puts_two_runs_side_by_side() {
        let a = report();
        let b = EvalReport::new(vec![run(
            "a",
            json!({"name": "Ada", "age": 36}),
            Some(json!({"name": "Ada", "age": 36})),
            5,
        )]);
        let comparison = compare(&a, &b);
        let age = comparison.fields.iter().find(|d| d.field == "age").unwrap();
        assert_eq!(age.accuracy, Some(1.0));
        let overall = comparison.fields.last().unwrap();
        assert_eq!(overall.field, "*");
        assert!((overall.accuracy.unwrap() - (1.0 - 2.0 / 6.0)).abs() < 1e-9);
        let text = comparison.to_string();
        assert!(text.contains("+100.0"), "{text}");
    }
}

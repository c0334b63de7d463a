//! The report as one self-contained HTML page: no script, no external resource, the style inline; a
//! bar per field, and the worst documents with their gold and predicted values. Every text from the
//! gold file or the model is escaped.

use super::report::{field_name, percent, points, Comparison, EvalReport};
use super::score::Outcome;
use std::fmt::Write;

/// How many of the worst documents the page shows.
pub const WORST_SHOWN: usize = 10;

const STYLE: &str = "\
body{font:15px/1.45 system-ui,sans-serif;margin:2em auto;max-width:70em;padding:0 1em;color:#222}
h1{font-size:1.4em}h2{font-size:1.15em;margin-top:2em}
table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:.25em .6em;border-bottom:1px solid #ddd;vertical-align:top}
td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.bar{background:#eee;width:14em;height:.9em;border-radius:2px}.bar div{background:#3a7;height:100%;border-radius:2px}
pre{margin:0;white-space:pre-wrap;word-break:break-word;font-size:13px}
.wrong{color:#b22}.up{color:#272}.down{color:#b22}
#summary{background:#f6f6f6;padding:.6em 1em;border-radius:4px}";

/// The page of `report` titled `title`, with `comparison` (this run as B against an earlier A) when
/// given.
pub fn html(report: &EvalReport, title: &str, comparison: Option<&Comparison>) -> String {
    let mut page = String::new();
    let _ = write!(
        page,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>{}</title><style>{STYLE}</style></head><body>\n<h1>{}</h1>\n",
        escape(title),
        escape(title)
    );
    let _ = writeln!(
        page,
        "<p id=\"summary\">{} documents, {} with a valid value ({}); field accuracy <b>{}</b> ({} of {} leaves); \
         tokens per document: median {:.0}, worst {:.0}; time per document: median {:.2} s, worst {:.2} s</p>",
        report.documents,
        report.valid,
        percent(Some(report.valid_share)),
        percent(Some(report.overall.accuracy)),
        report.overall.correct,
        report.overall.total,
        report.tokens.median,
        report.tokens.worst,
        report.seconds.median,
        report.seconds.worst
    );
    page.push_str(
        "<h2>Fields</h2>\n<table id=\"fields\"><tr><th>field</th><th>accuracy</th><th></th>\
         <th>leaves</th><th>precision</th><th>recall</th><th>F1</th></tr>\n",
    );
    for score in report.fields.iter().chain([&report.overall]) {
        let name = if score.field == "*" {
            "overall"
        } else {
            field_name(&score.field)
        };
        let _ = writeln!(
            page,
            "<tr class=\"field\"><td>{}</td><td class=\"n\">{}</td><td><div class=\"bar\"><div style=\"width:{:.1}%\"></div></div></td>\
             <td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
            escape(name),
            percent(Some(score.accuracy)),
            100.0 * score.accuracy.clamp(0.0, 1.0),
            score.total,
            percent(score.precision),
            percent(score.recall),
            percent(score.f1)
        );
    }
    page.push_str("</table>\n");
    if let Some(comparison) = comparison {
        page.push_str(
            "<h2>Against the earlier run</h2>\n<table id=\"compare\"><tr><th>field</th><th>accuracy before</th>\
             <th>accuracy now</th><th>change (points)</th><th>F1 before</th><th>F1 now</th><th>change (points)</th></tr>\n",
        );
        for d in &comparison.fields {
            let name = if d.field == "*" {
                "overall"
            } else {
                field_name(&d.field)
            };
            let class = |delta: Option<f64>| match delta {
                Some(x) if x > 0.0 => "n up",
                Some(x) if x < 0.0 => "n down",
                _ => "n",
            };
            let _ = writeln!(
                page,
                "<tr><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"{}\">{}</td>\
                 <td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"{}\">{}</td></tr>",
                escape(name),
                percent(d.a.as_ref().map(|s| s.accuracy)),
                percent(d.b.as_ref().map(|s| s.accuracy)),
                class(d.accuracy),
                points(d.accuracy),
                percent(d.a.as_ref().and_then(|s| s.f1)),
                percent(d.b.as_ref().and_then(|s| s.f1)),
                class(d.f1),
                points(d.f1)
            );
        }
        page.push_str("</table>\n");
    }
    let worst = report.worst(WORST_SHOWN);
    if !worst.is_empty() {
        page.push_str(
            "<h2>The worst documents</h2>\n<table id=\"worst\"><tr><th>document</th><th>gold</th>\
             <th>predicted</th><th>wrong leaves</th></tr>\n",
        );
        for run in worst {
            let pretty =
                |v: &serde_json::Value| serde_json::to_string_pretty(v).unwrap_or_default();
            let predicted = match (&run.predicted, &run.error) {
                (Some(value), _) => pretty(value),
                (None, Some(error)) => format!("no valid value: {error}"),
                (None, None) => "no valid value".to_owned(),
            };
            let mut wrong = String::new();
            for leaf in run.leaves.iter().filter(|l| !l.outcome.is_right()) {
                let show = |v: &Option<serde_json::Value>| {
                    v.as_ref().map_or_else(|| "—".to_owned(), |v| v.to_string())
                };
                let _ = write!(
                    wrong,
                    "<li><code>{}</code> {}: {} → {}</li>",
                    escape(&leaf.path),
                    outcome_name(leaf.outcome),
                    escape(&show(&leaf.gold)),
                    escape(&show(&leaf.predicted))
                );
            }
            let _ = writeln!(
                page,
                "<tr class=\"doc\"><td>{}<br>{} of {} right<br>{} tokens, {:.2} s</td><td><pre>{}</pre></td>\
                 <td><pre>{}</pre></td><td><ul class=\"wrong\">{}</ul></td></tr>",
                escape(&run.id),
                run.correct,
                run.total,
                run.tokens,
                run.seconds,
                escape(&pretty(&run.gold)),
                escape(&predicted),
                wrong
            );
        }
        page.push_str("</table>\n");
    }
    page.push_str("</body></html>\n");
    page
}

fn outcome_name(outcome: Outcome) -> &'static str {
    match outcome {
        Outcome::Correct => "correct",
        Outcome::Empty => "empty",
        Outcome::Wrong => "wrong",
        Outcome::Missing => "missing",
        Outcome::Extra => "extra",
        Outcome::Unanswered => "unanswered",
    }
}

/// `text` safe in HTML text and in quoted attributes.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::{score_document, DocumentRun, GoldCase, ScoreOptions};
    use super::*;
    use serde_json::json;
    use std::time::Duration;

    #[test]
    fn the_page_escapes_what_the_gold_and_the_model_wrote() {
        let case = GoldCase::new("<doc & 1>", "", json!({"name": "<b>Ada</b>"}));
        let predicted = json!({"name": "</pre><script>alert(1)</script>"});
        let leaves = score_document(&case, Some(&predicted), &[], None, &ScoreOptions::default());
        let run = DocumentRun::new(&case, Some(predicted), None, 3, Duration::ZERO, leaves);
        let report = EvalReport::new(vec![run]);
        let page = html(
            &report,
            "run <1>",
            Some(&super::super::compare(&report, &report)),
        );
        assert!(!page.contains("<script>"));
        assert!(!page.contains("<b>Ada"));
        assert!(page.contains("&lt;doc &amp; 1&gt;"));
        assert!(page.contains("<title>run &lt;1&gt;</title>"));
        assert!(!page.contains("http"), "no external resource");
        assert_eq!(page.matches("class=\"bar\"").count(), 2);
    }
}

//! What the CLI tells about values to doubt: each field's confidence, the soft issues of checks, and
//! the lines of an answer left out. On standard error for people, as JSON for output records.

use llm_extract::check::Issue;
use llm_extract::parse::Skipped;
use llm_extract::Report;
use serde_json::Value;
use std::collections::BTreeMap;

/// With `--confidence` (`asked`), prints on standard error each field's confidence with its value
/// (`value`: the value, or the items as an array), most doubtful first; or that the backend gave none.
pub fn show_confidence(report: &Report, value: &Value, asked: bool) {
    if !asked {
        return;
    }
    if report.no_logprobs {
        eprintln!(
            "llm-extract: warning: the backend gives no token log-probabilities: no confidence"
        );
        return;
    }
    for line in confidence_lines(&report.confidence, value) {
        eprintln!("llm-extract: confidence {line}");
    }
}

/// `0.42 /name "Ada"` for each scored field, the least confident first.
fn confidence_lines(confidence: &BTreeMap<String, f32>, value: &Value) -> Vec<String> {
    let mut fields: Vec<(&String, &f32)> = confidence.iter().collect();
    fields.sort_by(|a, b| a.1.total_cmp(b.1));
    fields
        .into_iter()
        .map(|(pointer, c)| match value.pointer(pointer) {
            Some(found) => format!("{c:.2} {pointer} {found}"),
            None => format!("{c:.2} {pointer}"),
        })
        .collect()
}

/// The confidence of each field as a JSON object for an output record (`None` when there is none).
pub fn confidence_json(confidence: &BTreeMap<String, f32>) -> Option<Value> {
    (!confidence.is_empty()).then(|| {
        Value::Object(
            confidence
                .iter()
                .map(|(pointer, c)| (pointer.clone(), Value::from(f64::from(*c))))
                .collect(),
        )
    })
}

/// Tells on standard error about the soft issues the checks found (values kept, but doubtful).
pub fn warn_about_issues(issues: &[Issue]) {
    for issue in issues {
        eprintln!(
            "llm-extract: doubtful: {}",
            crate::error::one_line(&issue.to_string())
        );
    }
}

/// The soft issues as a JSON list for an output record (`None` when there are none): each with its
/// `path`, `message` and, for an item of a list, its position as `item`.
pub fn issues_json(issues: &[Issue]) -> Option<serde_json::Value> {
    if issues.is_empty() {
        return None;
    }
    let list = issues
        .iter()
        .map(|issue| {
            let mut one = serde_json::json!({"path": issue.path, "message": issue.message});
            if let Some(item) = issue.item {
                one["item"] = item.into();
            }
            one
        })
        .collect();
    Some(serde_json::Value::Array(list))
}

/// Tells on standard error about lines left out, and about an answer without any item.
pub fn warn_about_items(items: usize, skipped: &[Skipped]) {
    if !skipped.is_empty() {
        let lines: Vec<String> = skipped
            .iter()
            .take(3)
            .map(|s| format!("line {}: {}", s.line, s.reason))
            .collect();
        eprintln!(
            "llm-extract: warning: {} line(s) of the answer never validated and were left out ({})",
            skipped.len(),
            crate::error::one_line(&lines.join("; "))
        );
    }
    if items == 0 {
        eprintln!("llm-extract: warning: the answer held no valid item");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn confidence_is_listed_least_confident_first_with_its_value() {
        let confidence: BTreeMap<String, f32> =
            [("/name".to_owned(), 0.9), ("/age".to_owned(), 0.25)].into();
        let value = json!({"name": "Ada", "age": 36});
        assert_eq!(
            confidence_lines(&confidence, &value),
            vec!["0.25 /age 36", "0.90 /name \"Ada\""]
        );
        assert_eq!(confidence_json(&BTreeMap::new()), None);
        assert_eq!(
            confidence_json(&confidence),
            Some(json!({"/age": 0.25, "/name": 0.8999999761581421}))
        );
    }

    #[test]
    fn soft_issues_become_a_json_list_with_their_item() {
        assert_eq!(issues_json(&[]), None);
        let mut issues = llm_extract::check::Issues::new();
        issues.soft("/total", "looks high");
        let list = issues_json(issues.as_slice()).unwrap();
        assert_eq!(list, json!([{"path": "/total", "message": "looks high"}]));
    }
}

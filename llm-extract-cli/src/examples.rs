//! `--example FILE.jsonl`: worked examples, each line `{"text": ..., "value": ...}` (or, for `--jsonl`,
//! `{"text": ..., "items": [...]}`), checked against the schema before anything is sent.

use crate::error::CliError;
use llm_extract::extract::Example;
use llm_extract::schema::SchemaSet;
use serde_json::Value;
use std::path::PathBuf;

/// Every example in `files`, in order; a usage error naming the file and line of the first bad one.
pub fn load(files: &[PathBuf], set: &SchemaSet, jsonl: bool) -> Result<Vec<Example>, CliError> {
    let mut out = Vec::new();
    for path in files {
        let text = std::fs::read_to_string(path).map_err(|e| {
            CliError::usage(format!(
                "cannot read the examples file {}: {e}",
                path.display()
            ))
        })?;
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let at = || format!("{}:{}", path.display(), i + 1);
            let entry: Value = serde_json::from_str(line)
                .map_err(|e| CliError::usage(format!("{}: not a JSON line: {e}", at())))?;
            out.push(
                parse(&entry, set, jsonl).map_err(|m| CliError::usage(format!("{}: {m}", at())))?,
            );
        }
    }
    Ok(out)
}

fn parse(entry: &Value, set: &SchemaSet, jsonl: bool) -> Result<Example, String> {
    let text = entry
        .get("text")
        .and_then(Value::as_str)
        .ok_or("an example needs a \"text\" string")?;
    let made = match (entry.get("value"), entry.get("items")) {
        (Some(value), None) => Example::value(set, text, value.clone()),
        (None, Some(Value::Array(items))) if jsonl => {
            Example::value_items(set, text, items.clone())
        }
        (None, Some(_)) if jsonl => return Err("\"items\" must be an array".into()),
        (None, Some(_)) => return Err("\"items\" is for --jsonl; give one \"value\"".into()),
        _ => return Err("an example needs exactly one of \"value\" or \"items\"".into()),
    };
    made.map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn set() -> SchemaSet {
        SchemaSet::new(
            "Paid",
            json!({"type": "object", "properties": {"paid": {"type": "boolean"}},
                   "required": ["paid"], "additionalProperties": false}),
        )
    }

    #[test]
    fn lines_become_checked_examples() {
        let ok = parse(
            &json!({"text": "settled", "value": {"paid": true}}),
            &set(),
            false,
        )
        .unwrap();
        assert_eq!(ok.answer_json(), vec![json!({"paid": true})]);
        let bad = parse(
            &json!({"text": "settled", "value": {"paid": "yes"}}),
            &set(),
            false,
        );
        assert!(bad.unwrap_err().contains("does not satisfy its schema"));
        let items = parse(
            &json!({"text": "t", "items": [{"paid": true}]}),
            &set(),
            false,
        );
        assert!(items.unwrap_err().contains("--jsonl"));
        assert!(parse(
            &json!({"text": "t", "items": [{"paid": false}]}),
            &set(),
            true
        )
        .is_ok());
    }
}

//! Gold cases: the texts of an evaluation set with the values a careful reader wrote down.
//!
//! A gold file has one JSON object per line: `{"id", "text", "value"}` (`"expected"` is read as
//! `"value"`), optionally `"accept"` (other answers a reader would also accept, per field: a top-level
//! property name or a JSON pointer to a list of alternatives) and `"spans"` (where grounded values are
//! in the text: `{"path": "/people/0/name", "chars": [start, end]}`, char offsets, end exclusive).
//! Blank lines are skipped; a case without an id is named `line-N`.

use super::EvalError;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::path::Path;

/// One text of an evaluation set and its gold value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct GoldCase {
    /// Names the case in reports.
    #[serde(default)]
    pub id: String,
    /// The text the model reads.
    pub text: String,
    /// The value a careful reader wrote down.
    #[serde(alias = "expected")]
    pub value: Value,
    /// Other answers also accepted, by top-level property name or JSON pointer: a list of values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accept: Option<Map<String, Value>>,
    /// Where grounded values of `value` are in `text`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub spans: Vec<GoldSpan>,
}

impl GoldCase {
    /// A case with no alternatives and no spans.
    pub fn new(id: impl Into<String>, text: impl Into<String>, value: Value) -> Self {
        GoldCase {
            id: id.into(),
            text: text.into(),
            value,
            accept: None,
            spans: Vec::new(),
        }
    }

    /// The alternatives accepted for the leaf at JSON pointer `path`: listed under the pointer, or, for
    /// a top-level property, under its name.
    pub fn alternatives(&self, path: &str) -> &[Value] {
        let Some(accept) = &self.accept else {
            return &[];
        };
        let listed = accept.get(path).or_else(|| {
            let name = path.strip_prefix('/')?;
            if name.contains('/') {
                return None;
            }
            accept.get(&name.replace("~1", "/").replace("~0", "~"))
        });
        match listed {
            Some(Value::Array(values)) => values,
            _ => &[],
        }
    }
}

/// Where one grounded gold value is in the text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "RawSpan", into = "RawSpan")]
#[non_exhaustive]
pub struct GoldSpan {
    /// JSON pointer to the value in the gold value (`/people/0/name`).
    pub path: String,
    /// First char (Unicode scalar value) of the span in the text.
    pub start: usize,
    /// The char after its last.
    pub end: usize,
}

impl GoldSpan {
    /// The span of the value at `path`, chars `start..end`.
    pub fn new(path: impl Into<String>, start: usize, end: usize) -> Self {
        GoldSpan {
            path: path.into(),
            start,
            end,
        }
    }
}

/// A span as written: `"chars"` as `[start, end]` or `{"start", "end"}` (as `llm-extract doc` prints).
#[derive(Serialize, Deserialize)]
struct RawSpan {
    path: String,
    chars: RawRange,
}

#[derive(Serialize, Deserialize)]
#[serde(untagged)]
enum RawRange {
    Pair([usize; 2]),
    Range { start: usize, end: usize },
}

impl TryFrom<RawSpan> for GoldSpan {
    type Error = String;

    fn try_from(raw: RawSpan) -> Result<Self, String> {
        let (start, end) = match raw.chars {
            RawRange::Pair([start, end]) | RawRange::Range { start, end } => (start, end),
        };
        if start > end {
            return Err(format!(
                "the span of {} ends ({end}) before it starts ({start})",
                raw.path
            ));
        }
        Ok(GoldSpan::new(raw.path, start, end))
    }
}

impl From<GoldSpan> for RawSpan {
    fn from(span: GoldSpan) -> Self {
        RawSpan {
            path: span.path,
            chars: RawRange::Pair([span.start, span.end]),
        }
    }
}

/// The gold cases of a file (see the [module documentation](self)).
pub fn read_gold(path: &Path) -> Result<Vec<GoldCase>, EvalError> {
    parse_gold(&read(path)?, &path.display().to_string())
}

/// The gold cases of `text`, the content of a gold file named `name` in errors.
pub fn parse_gold(text: &str, name: &str) -> Result<Vec<GoldCase>, EvalError> {
    let mut cases = Vec::new();
    let mut seen: HashMap<String, usize> = HashMap::new();
    for (line, content) in lines(text) {
        let mut case: GoldCase = serde_json::from_str(content).map_err(|e| EvalError::Line {
            path: name.to_owned(),
            line,
            message: format!("not a gold case {{\"id\", \"text\", \"value\"}}: {e}"),
        })?;
        if case.id.is_empty() {
            case.id = format!("line-{line}");
        }
        if let Some(&first) = seen.get(&case.id) {
            return Err(EvalError::DuplicateId {
                path: name.to_owned(),
                id: case.id,
                first,
                second: line,
            });
        }
        seen.insert(case.id.clone(), line);
        cases.push(case);
    }
    if cases.is_empty() {
        return Err(EvalError::Empty {
            path: name.to_owned(),
        });
    }
    Ok(cases)
}

/// Gold cases from two files: texts (each line a JSON string, an object with `"text"` and maybe
/// `"id"`, or else the line itself) and values (each line an object `{"id", "value"}`, or else the
/// value itself). When every text and every value has an id they are matched by id, otherwise by line.
pub fn read_pair(texts: &Path, values: &Path) -> Result<Vec<GoldCase>, EvalError> {
    let (texts_name, values_name) = (texts.display().to_string(), values.display().to_string());
    let texts = read(texts)?;
    let values = read(values)?;
    let texts: Vec<(usize, Option<String>, String)> = lines(&texts)
        .map(
            |(line, content)| match serde_json::from_str::<Value>(content) {
                Ok(Value::String(text)) => (line, None, text),
                Ok(Value::Object(map)) if map.get("text").is_some_and(Value::is_string) => {
                    let id = map.get("id").and_then(id_of);
                    let text = map.get("text").and_then(Value::as_str).unwrap_or_default();
                    (line, id, text.to_owned())
                }
                _ => (line, None, content.to_owned()),
            },
        )
        .collect();
    let mut by_line = Vec::new();
    for (line, content) in lines(&values) {
        let value: Value = serde_json::from_str(content).map_err(|e| EvalError::Line {
            path: values_name.clone(),
            line,
            message: format!("not a JSON value: {e}"),
        })?;
        let keyed = match &value {
            Value::Object(map) if map.len() == 2 => map.get("id").and_then(id_of).and_then(|id| {
                let value = map.get("value").or_else(|| map.get("expected"))?;
                Some((id, value.clone()))
            }),
            _ => None,
        };
        by_line.push((line, keyed, value));
    }
    let all_ids = texts.iter().all(|(_, id, _)| id.is_some())
        && by_line.iter().all(|(_, keyed, _)| keyed.is_some());
    let mut cases = Vec::new();
    if all_ids {
        let mut values: HashMap<String, Value> = HashMap::new();
        for (line, keyed, _) in by_line {
            if let Some((id, value)) = keyed {
                if values.insert(id.clone(), value).is_some() {
                    return Err(EvalError::Line {
                        path: values_name,
                        line,
                        message: format!("a second value for the id {id:?}"),
                    });
                }
            }
        }
        for (_, id, text) in texts {
            let id = id.unwrap_or_default();
            let Some(value) = values.remove(&id) else {
                return Err(EvalError::Unmatched {
                    id,
                    texts: texts_name,
                    values: values_name,
                });
            };
            cases.push(GoldCase::new(id, text, value));
        }
    } else {
        if texts.len() != by_line.len() {
            return Err(EvalError::Count {
                texts: texts_name,
                text_count: texts.len(),
                values: values_name,
                value_count: by_line.len(),
            });
        }
        for ((line, id, text), (_, keyed, value)) in texts.into_iter().zip(by_line) {
            let value = keyed.map_or(value, |(_, value)| value);
            let id = id.unwrap_or_else(|| format!("line-{line}"));
            cases.push(GoldCase::new(id, text, value));
        }
    }
    if cases.is_empty() {
        return Err(EvalError::Empty { path: texts_name });
    }
    Ok(cases)
}

/// A JSON id as text: a string, or a number written out.
fn id_of(value: &Value) -> Option<String> {
    match value {
        Value::String(id) => Some(id.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

fn read(path: &Path) -> Result<String, EvalError> {
    std::fs::read_to_string(path).map_err(|source| EvalError::Read {
        path: path.to_owned(),
        source,
    })
}

/// The non-blank lines of `text`, numbered from 1.
fn lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines()
        .enumerate()
        .map(|(i, line)| (i + 1, line.trim()))
        .filter(|(_, line)| !line.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn gold_lines_take_value_or_expected_alternatives_and_spans() {
        let text = r#"{"id": "a", "text": "Ada", "value": {"name": "Ada"}, "spans": [{"path": "/name", "chars": [0, 3]}]}

{"text": "Bo", "expected": {"name": "Bo"}, "accept": {"name": ["Bob"], "/x/0": [1]}}
"#;
        let cases = parse_gold(text, "gold.jsonl").unwrap();
        assert_eq!(cases[0].spans, [GoldSpan::new("/name", 0, 3)]);
        assert_eq!(cases[1].id, "line-3");
        assert_eq!(cases[1].value, json!({"name": "Bo"}));
        assert_eq!(cases[1].alternatives("/name"), [json!("Bob")]);
        assert_eq!(cases[1].alternatives("/x/0"), [json!(1)]);
        assert!(cases[0].alternatives("/name").is_empty());
    }

    #[test]
    fn bad_gold_files_name_the_line() {
        let err = parse_gold("{\"id\": \"a\", \"text\": \"x\"}", "g").unwrap_err();
        assert!(matches!(err, EvalError::Line { line: 1, .. }), "{err}");
        let twice = "{\"id\": \"a\", \"text\": \"x\", \"value\": 1}\n{\"id\": \"a\", \"text\": \"y\", \"value\": 2}";
        assert!(matches!(
            parse_gold(twice, "g").unwrap_err(),
            EvalError::DuplicateId {
                first: 1,
                second: 2,
                ..
            }
        ));
        assert!(matches!(
            parse_gold("\n\n", "g").unwrap_err(),
            EvalError::Empty { .. }
        ));
        let backwards = r#"{"text": "x", "value": 1, "spans": [{"path": "", "chars": {"start": 3, "end": 1}}]}"#;
        assert!(parse_gold(backwards, "g").is_err());
    }

    #[test]
    fn texts_and_values_match_by_id_or_by_line() {
        let dir = tempfile::tempdir().unwrap();
        let texts = dir.path().join("texts.jsonl");
        let values = dir.path().join("values.jsonl");
        std::fs::write(
            &texts,
            "{\"id\": \"b\", \"text\": \"two\"}\n{\"id\": \"a\", \"text\": \"one\"}\n",
        )
        .unwrap();
        std::fs::write(
            &values,
            "{\"id\": \"a\", \"value\": 1}\n{\"id\": \"b\", \"value\": 2}\n",
        )
        .unwrap();
        let cases = read_pair(&texts, &values).unwrap();
        assert_eq!((cases[0].id.as_str(), &cases[0].value), ("b", &json!(2)));

        std::fs::write(&texts, "plain text one\n\"two\"\n").unwrap();
        std::fs::write(&values, "{\"n\": 1}\n{\"n\": 2}\n").unwrap();
        let cases = read_pair(&texts, &values).unwrap();
        assert_eq!(cases[0].text, "plain text one");
        assert_eq!(
            (cases[1].id.as_str(), &cases[1].value),
            ("line-2", &json!({"n": 2}))
        );

        std::fs::write(&values, "{\"n\": 1}\n").unwrap();
        assert!(matches!(
            read_pair(&texts, &values).unwrap_err(),
            EvalError::Count { .. }
        ));
        std::fs::write(&texts, "{\"id\": \"z\", \"text\": \"t\"}\n").unwrap();
        std::fs::write(&values, "{\"id\": \"a\", \"value\": 1}\n").unwrap();
        assert!(matches!(
            read_pair(&texts, &values).unwrap_err(),
            EvalError::Unmatched { .. }
        ));
    }
}

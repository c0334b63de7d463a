//! Every text the extraction loop sends but the user's template (`template.rs`): the system prompt
//! with the format instructions, and the short, neutral repair and continuation turns.
//!
//! Kept in one file so the exact wording is easy to review and to test.

use crate::parse::{ParseError, SkipReason, Skipped};
use crate::schema::Shape;
use crate::validate::Violation;
use serde_json::Value;

/// What the extraction does unless told otherwise.
pub const DEFAULT_INSTRUCTIONS: &str =
    "You extract structured data from the text the user gives you. Use only what the text states.";

/// Appended to the system prompt when worked examples precede the input.
pub(crate) const EXAMPLES_NOTE: &str =
    "The earlier exchanges are worked examples of the answer format. \
    Answer the last message from its own text only.";

/// The most problems one repair turn lists.
const MAX_LISTED: usize = 20;

/// The most characters of one broken line quoted in a repair turn.
const MAX_QUOTED_LINE: usize = 300;

/// The system prompt: the instructions, then how to answer and the type definitions.
pub(crate) fn system_prompt(
    instructions: &str,
    shape: Shape,
    type_definitions: &str,
    max_items: Option<usize>,
) -> String {
    let at_most = match max_items {
        Some(n) => format!(" Write at most {n} items."),
        None => String::new(),
    };
    let format = match shape {
        Shape::One => {
            "Answer with exactly one JSON value of this type and nothing else (no prose, no code fences):"
                .to_owned()
        }
        Shape::Line => format!(
            "Answer in JSON Lines: one compact JSON object per line, each of this type, and nothing else \
             (no array, no prose, no code fences). Write each item once.{at_most}"
        ),
        Shape::List => format!(
            "Answer with one JSON object {{\"items\": [...]}} whose items each have this type. Write each \
             item once.{at_most}"
        ),
    };
    let instructions = instructions.trim();
    if instructions.is_empty() {
        format!("{format}\n{type_definitions}")
    } else {
        format!("{instructions}\n\n{format}\n{type_definitions}")
    }
}

/// One problem with an answer, as the repair turn lists it.
struct Problem {
    /// `syntax`, `schema` or `check`.
    kind: &'static str,
    path: String,
    message: String,
}

impl Problem {
    fn syntax(message: impl Into<String>) -> Self {
        Problem {
            kind: "syntax",
            path: String::new(),
            message: message.into(),
        }
    }

    fn schema(violation: &Violation) -> Self {
        Problem {
            kind: "schema",
            path: violation.path.clone(),
            message: violation.message.clone(),
        }
    }

    /// A hard issue a [check](crate::check) found.
    fn check(issue: &Violation) -> Self {
        Problem {
            kind: "check",
            ..Problem::schema(issue)
        }
    }

    fn line(&self) -> String {
        let kind = self.kind;
        let path = if self.path.is_empty() || self.path == "." {
            if kind == "syntax" {
                String::new()
            } else {
                " at the root".to_owned()
            }
        } else {
            format!(" at {}", self.path)
        };
        format!("{kind} problem{path}: {}", self.message)
    }
}

fn problems_of(error: &ParseError) -> Vec<Problem> {
    match error {
        ParseError::NoJson { .. } => vec![Problem::syntax("the answer contains no JSON value")],
        ParseError::Syntax {
            message, offset, ..
        } => vec![Problem::syntax(format!(
            "{message} (at character {offset})"
        ))],
        ParseError::Schema { violations, .. } => violations.iter().map(Problem::schema).collect(),
        ParseError::Check { issues, .. } => issues.iter().map(Problem::check).collect(),
        ParseError::Deserialize { path, message, .. } => vec![Problem {
            kind: "schema",
            path: path.clone(),
            message: message.clone(),
        }],
        ParseError::Truncated { .. } => vec![Problem::syntax("the JSON value is not complete")],
        ParseError::Ambiguous { candidates, .. } => vec![Problem::syntax(format!(
            "the answer contains {} different JSON values; give exactly one",
            candidates.len()
        ))],
        other => vec![Problem::syntax(other.to_string())],
    }
}

fn list_problems(out: &mut String, lines: impl Iterator<Item = String>) {
    let lines: Vec<String> = lines.collect();
    for line in lines.iter().take(MAX_LISTED) {
        out.push_str("\n- ");
        out.push_str(line);
    }
    if lines.len() > MAX_LISTED {
        out.push_str(&format!("\n- and {} more", lines.len() - MAX_LISTED));
    }
}

/// The user turn after an unusable answer to a one-value request.
pub(crate) fn repair_one(error: &ParseError) -> String {
    let mut out = String::from("Your answer could not be used:");
    list_problems(&mut out, problems_of(error).iter().map(Problem::line));
    out.push_str("\nAnswer again with the corrected JSON value only.");
    out
}

/// The user turn after an answer with broken lines (or with no JSON at all): re-asks those lines only.
pub(crate) fn repair_lines(broken: &[Skipped], shape: Shape) -> String {
    if broken.is_empty() {
        return match shape {
            Shape::List => "Your answer contained no JSON. Answer again with one JSON object {\"items\": [...]} only.".to_owned(),
            _ => "Your answer contained no JSON objects. Answer again in JSON Lines only: one JSON object per line.".to_owned(),
        };
    }
    let unit = if shape == Shape::List {
        "items"
    } else {
        "lines"
    };
    let mut out = format!("Some {unit} of your answer could not be used:");
    let described = broken.iter().flat_map(|skipped| {
        let problems = match &skipped.reason {
            SkipReason::Schema(violations) => violations.iter().map(Problem::schema).collect(),
            SkipReason::Check(issues) => issues.iter().map(Problem::check).collect(),
            SkipReason::Syntax(message) => vec![Problem::syntax(message.clone())],
            SkipReason::Truncated => vec![Problem::syntax("the JSON object is not complete")],
            SkipReason::NotJson => vec![Problem::syntax("not JSON")],
            other => vec![Problem::syntax(other.to_string())],
        };
        let quoted = quote(&skipped.raw);
        problems
            .into_iter()
            .map(move |p| format!("line {}, {}: {quoted}", skipped.line, p.line()))
    });
    list_problems(&mut out, described);
    out.push_str(&match shape {
        Shape::List => format!(
            "\nThe other {unit} were fine and are kept. Answer with one JSON object {{\"items\": [...]}} \
             holding corrected versions of these {unit} only."
        ),
        _ => format!(
            "\nThe other {unit} were fine and are kept. Answer with corrected versions of these {unit} \
             only, one JSON object per line."
        ),
    });
    out
}

/// The user turn asking to continue after an answer cut off by the token limit.
pub(crate) fn continue_after(kept: usize) -> String {
    format!(
        "Your answer was cut off by the length limit. The {kept} complete items above are kept. Continue \
         with the items that come after the last one, in the same format, and do not repeat any item above."
    )
}

/// The user turn after an answer stopped because its items were looping: the items kept are done.
pub(crate) fn continue_after_loop(kept: usize) -> String {
    format!(
        "Your answer was stopped because it repeated items. The {kept} items above are done. Continue \
         with the items of the text that are not above, in the same format; if there are none, end the answer."
    )
}

/// The assistant turn standing for the complete items so far (never the cut-off answer itself), at most
/// `max_chars` long: the most recent items are kept, since the model continues after the last one.
pub(crate) fn items_turn(items: &[Value], shape: Shape, max_chars: usize) -> String {
    let mut lines: Vec<String> = Vec::new();
    let mut used = 0;
    for item in items.iter().rev() {
        let line = item.to_string();
        used += line.len() + 1;
        if used > max_chars && !lines.is_empty() {
            break;
        }
        lines.push(line);
    }
    lines.reverse();
    match shape {
        Shape::List => format!("{{\"items\": [{}]}}", lines.join(", ")),
        _ => lines.join("\n"),
    }
}

/// `text` cut to at most `max_chars` characters: its head and tail around a marker.
pub(crate) fn cut(text: &str, max_chars: usize) -> String {
    let count = text.chars().count();
    if count <= max_chars {
        return text.to_owned();
    }
    let keep = max_chars / 2;
    let head: String = text.chars().take(keep).collect();
    let tail: String = text.chars().skip(count - keep).collect();
    format!(
        "{head}\n[... {} characters omitted ...]\n{tail}",
        count - 2 * keep
    )
}

fn quote(raw: &str) -> String {
    let line = raw.trim();
    let mut quoted: String = line.chars().take(MAX_QUOTED_LINE).collect();
    if quoted.len() < line.len() {
        quoted.push_str("...");
    }
    quoted
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn repair_one_lists_each_violation_with_its_path() {
        let error = ParseError::Schema {
            violations: vec![
                Violation {
                    path: "/age".into(),
                    message: "\"x\" is not of type \"integer\"".into(),
                },
                Violation {
                    path: String::new(),
                    message: "\"name\" is a required property".into(),
                },
            ],
            raw: "{}".into(),
        };
        assert_eq!(
            repair_one(&error),
            "Your answer could not be used:\n\
             - schema problem at /age: \"x\" is not of type \"integer\"\n\
             - schema problem at the root: \"name\" is a required property\n\
             Answer again with the corrected JSON value only."
        );
        let syntax = repair_one(&ParseError::NoJson { raw: "hi".into() });
        assert!(syntax.contains("- syntax problem: the answer contains no JSON value"));
    }

    #[test]
    fn a_check_is_named_a_check_problem_with_its_path() {
        let issue = Violation {
            path: "/total".into(),
            message: "the total equals the sum of the lines, 55".into(),
        };
        let error = ParseError::Check {
            issues: vec![issue.clone()],
            raw: "{}".into(),
        };
        assert!(repair_one(&error)
            .contains("- check problem at /total: the total equals the sum of the lines, 55"));
        let broken = [Skipped {
            line: 2,
            raw: "{\"total\": 50}".into(),
            reason: SkipReason::Check(vec![issue]),
        }];
        let text = repair_lines(&broken, Shape::Line);
        assert!(text.contains("line 2, check problem at /total"), "{text}");
    }

    #[test]
    fn repair_lines_quotes_only_the_broken_lines() {
        let broken = [Skipped {
            line: 3,
            raw: "{\"a\": tru}".into(),
            reason: SkipReason::Syntax("unknown literal".into()),
        }];
        let text = repair_lines(&broken, Shape::Line);
        assert_eq!(
            text,
            "Some lines of your answer could not be used:\n\
             - line 3, syntax problem: unknown literal: {\"a\": tru}\n\
             The other lines were fine and are kept. Answer with corrected versions of these lines only, \
             one JSON object per line."
        );
        assert!(!text.to_lowercase().contains("more items"));
    }

    #[test]
    fn items_turn_keeps_the_latest_items_within_bounds() {
        let items: Vec<Value> = (0..100).map(|i| json!({"i": i})).collect();
        let turn = items_turn(&items, Shape::Line, 50);
        assert!(turn.ends_with(r#"{"i":99}"#));
        assert!(turn.len() <= 60);
        let list = items_turn(&items[..2], Shape::List, 1000);
        assert_eq!(list, r#"{"items": [{"i":0}, {"i":1}]}"#);
    }

    #[test]
    fn cut_keeps_head_and_tail() {
        let text = "a".repeat(50) + &"b".repeat(50);
        let cut_text = cut(&text, 20);
        assert!(cut_text.starts_with("aaaaaaaaaa\n[... 80 characters omitted ...]"));
        assert!(cut_text.ends_with("bbbbbbbbbb"));
        assert_eq!(cut("short", 20), "short");
    }
}

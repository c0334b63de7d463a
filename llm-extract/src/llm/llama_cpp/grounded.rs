//! Grounded strings by construction: the llguidance grammar of a schema whose strings marked
//! `"x-grounded": true` can only be verbatim spans of the source text.
//!
//! The grammar is written in llguidance's Lark syntax. A marked string is one lexeme: a quote, any
//! contiguous run of the source's pieces, and a quote. The pieces are the source's words, whitespace runs
//! and other chars one by one, each JSON-escaped the way the answer must write it (`"` as `\"`, a line end
//! as `\r\n`), so a span never starts or ends inside a word or an escape; llguidance's `substring_chunks`
//! turns them into a suffix automaton, linear in the source. The objects, arrays and unions on the way to a
//! marked string are written out as rules with the separators llguidance's JSON uses (`", "` and `": "`),
//! required properties first; every other subschema is inline `%json` with the same options as the plain
//! grammar.
//!
//! A shape this does not write out (`allOf`, `$ref`, a tuple, a marked string under
//! `additionalProperties`, a marked value of another type) gets no grammar here: the caller keeps the
//! plain JSON grammar, and the values are grounded after parsing as on every other backend.

use super::guidance_options::with_guidance_options;
use crate::ground::{boundary, has_grounded, GROUNDED};
use serde_json::{json, Map, Value};
use std::fmt::Write as _;

/// The name of the lexeme of a grounded string.
const SPAN: &str = "SPAN";

/// The Lark grammar of an answer to `schema` (one value, or JSON Lines of it) in which every grounded
/// string is a span of `source`; `None` when the schema marks nothing, or marks it in a shape this does
/// not write out (see the module documentation).
pub(super) fn grounded_lark(schema: &Value, source: &str, json_lines: bool) -> Option<String> {
    if !has_grounded(schema) {
        return None;
    }
    let mut lark = Lark::default();
    let root = lark.value(schema, false)?;
    let mut out = if json_lines {
        format!("start: ({root} \"\\n\")+\n")
    } else {
        format!("start: {root}\n")
    };
    out.push_str(&lark.rules);
    let pieces = json!({ "substring_chunks": pieces(source) });
    let quote = literal("\"");
    // Writing to a String cannot fail. The other conjunct makes a span begin and end on a word (or an
    // opening or closing quote or bracket around one), never on whitespace, punctuation or an escape.
    let edges = boundary::span_regex();
    let _ = writeln!(
        out,
        "{SPAN}: {quote} %regex {pieces} {quote} & /\"{edges}\"/"
    );
    Some(out)
}

/// The pieces a grounded span is made of, JSON-escaped: words (runs of
/// [word chars](boundary::is_word_char)), whitespace runs, and every other char on its own, except
/// that an apostrophe inside a word goes with the rest of the word (`Holmes`, `'s`).
fn pieces(source: &str) -> Vec<String> {
    #[derive(PartialEq, Clone, Copy)]
    enum Class {
        Word,
        Space,
        Other,
    }
    let class = |c: char| {
        if boundary::is_word_char(c) {
            Class::Word
        } else if c.is_whitespace() {
            Class::Space
        } else {
            Class::Other
        }
    };
    let mut out = Vec::new();
    let mut start = 0;
    let mut last: Option<Class> = None;
    // The two chars before `c`.
    let (mut first, mut second): (Option<char>, Option<char>) = (None, None);
    for (at, c) in source.char_indices() {
        let now = class(c);
        // An apostrophe inside a word starts a piece with the rest of the word (`Holmes`, `'s`): a
        // span may end before it, never start after it.
        let glued = now == Class::Word
            && second.is_some_and(boundary::is_apostrophe)
            && first.is_some_and(boundary::is_word_char);
        if let Some(before) = last {
            if !glued && (before != now || now == Class::Other) {
                out.push(escaped(source.get(start..at).unwrap_or_default()));
                start = at;
            }
        }
        last = Some(now);
        (first, second) = (second, Some(c));
    }
    if last.is_some() {
        out.push(escaped(source.get(start..).unwrap_or_default()));
    }
    out
}

/// `text` as it is written inside a JSON string (no quotes around it).
fn escaped(text: &str) -> String {
    let quoted = Value::String(text.to_owned()).to_string();
    quoted
        .strip_prefix('"')
        .and_then(|s| s.strip_suffix('"'))
        .unwrap_or_default()
        .to_owned()
}

/// A Lark string literal matching `text` exactly. Lark literals are JSON strings, except that DEL must
/// be escaped too.
fn literal(text: &str) -> String {
    Value::String(text.to_owned())
        .to_string()
        .replace('\u{7f}', "\\u007f")
}

/// The types a schema allows (`type` as a string or a list); `None` without `type`.
fn types(map: &Map<String, Value>) -> Option<Vec<&str>> {
    match map.get("type")? {
        Value::String(t) => Some(vec![t.as_str()]),
        Value::Array(ts) => Some(ts.iter().filter_map(Value::as_str).collect()),
        _ => None,
    }
}

/// The rules written so far.
#[derive(Default)]
struct Lark {
    rules: String,
    count: usize,
}

impl Lark {
    /// Adds a rule with `body` and returns its name.
    fn rule(&mut self, body: &str) -> String {
        let name = format!("v{}", self.count);
        self.count += 1;
        let _ = writeln!(self.rules, "{name}: {body}");
        name
    }

    /// An expression for a value of `schema`. A subschema with nothing grounded is inline `%json`, except
    /// as a branch of a union (`in_union`): llguidance cannot choose between a nested JSON grammar and a
    /// rule of this grammar that start with the same byte, so there its objects are written out too, and
    /// `const`, `enum` and `null` become literals; any other branch gets no grammar here.
    fn value(&mut self, schema: &Value, in_union: bool) -> Option<String> {
        if !has_grounded(schema) {
            let constant = schema.get("const").is_some() || schema.get("enum").is_some();
            if in_union || constant {
                return self.branch(schema);
            }
            let inline = with_guidance_options(schema);
            return Some(self.rule(&format!("%json {inline}")));
        }
        let Value::Object(map) = schema else {
            return None;
        };
        if [
            "allOf",
            "$ref",
            "not",
            "if",
            "prefixItems",
            "patternProperties",
        ]
        .iter()
        .any(|k| map.contains_key(*k))
        {
            return None;
        }
        if let Some(branches) = map.get("anyOf").or_else(|| map.get("oneOf")) {
            let branches = branches.as_array()?;
            let alternatives = branches
                .iter()
                .map(|branch| self.value(branch, true))
                .collect::<Option<Vec<_>>>()?;
            return Some(self.rule(&alternatives.join(" | ")));
        }
        let types = types(map)?;
        let nullable = types.contains(&"null");
        let main: Vec<&str> = types.into_iter().filter(|t| *t != "null").collect();
        let expression = match main.as_slice() {
            ["string"] if map.get(GROUNDED) == Some(&Value::Bool(true)) => SPAN.to_owned(),
            ["object"] => self.object(map)?,
            ["array"] => self.array(map)?,
            _ => return None,
        };
        Some(if nullable {
            self.rule(&format!("{expression} | {}", literal("null")))
        } else {
            expression
        })
    }

    /// A union's branch with nothing grounded: a constant, one of an enum, `null`, or an object written
    /// out (see [`Lark::value`]).
    fn branch(&mut self, schema: &Value) -> Option<String> {
        let Value::Object(map) = schema else {
            return None;
        };
        if let Some(constant) = map.get("const") {
            return Some(literal(&constant.to_string()));
        }
        if let Some(Value::Array(choices)) = map.get("enum") {
            let choices: Vec<String> = choices.iter().map(|c| literal(&c.to_string())).collect();
            return Some(self.rule(&choices.join(" | ")));
        }
        if map
            .keys()
            .any(|k| ["anyOf", "oneOf", "allOf", "$ref"].contains(&k.as_str()))
        {
            return None;
        }
        match types(map)?.as_slice() {
            ["null"] => Some(literal("null")),
            ["object"] => self.object(map),
            _ => None,
        }
    }

    /// An object whose properties lead to a grounded string: required properties first, in schema
    /// order, then the optional ones, each at most once and in order.
    fn object(&mut self, map: &Map<String, Value>) -> Option<String> {
        let properties = map.get("properties")?.as_object()?;
        if map.get("additionalProperties").is_some_and(has_grounded) {
            return None;
        }
        let required: Vec<&str> = map
            .get("required")
            .and_then(Value::as_array)
            .map(|names| names.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let mut wanted = Vec::new();
        let mut optional = Vec::new();
        for (name, sub) in properties {
            let key = literal(&format!("{}: ", Value::String(name.clone())));
            let member = format!("{key} {}", self.value(sub, false)?);
            if required.contains(&name.as_str()) {
                wanted.push(member);
            } else {
                optional.push(member);
            }
        }
        let comma = literal(", ");
        let (open, close) = (literal("{"), literal("}"));
        // `tail`: the optional members after a given one, each behind a comma.
        let mut tail = String::new();
        let mut starts = Vec::new();
        for member in optional.iter().rev() {
            starts.push(format!("{member} {tail}"));
            tail = self.rule(&format!("({comma} {member})? {tail}"));
        }
        let body = if wanted.is_empty() {
            starts.reverse();
            if starts.is_empty() {
                format!("{open} {close}")
            } else {
                format!("{open} ({})? {close}", starts.join(" | "))
            }
        } else {
            let wanted = wanted.join(&format!(" {comma} "));
            format!("{open} {wanted} {tail} {close}")
        };
        Some(self.rule(&body))
    }

    /// An array of values of `items`, with at least `minItems` of them when that is 1 or more.
    fn array(&mut self, map: &Map<String, Value>) -> Option<String> {
        let items = map.get("items")?;
        if items.is_array() {
            return None;
        }
        let item = self.value(items, false)?;
        let (open, close, comma) = (literal("["), literal("]"), literal(", "));
        let at_least_one = map
            .get("minItems")
            .and_then(Value::as_u64)
            .is_some_and(|n| n >= 1);
        let list = format!("{item} ({comma} {item})*");
        Some(self.rule(&if at_least_one {
            format!("{open} {list} {close}")
        } else {
            format!("{open} ({list})? {close}")
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use llguidance::api::TopLevelGrammar;
    use llguidance::toktrie::ApproximateTokEnv;
    use llguidance::{Matcher, ParserFactory};
    use proptest::prelude::*;
    use std::sync::OnceLock;

    /// A factory over a byte-level vocabulary: every byte a token, so answers are fed byte by byte.
    fn factory() -> &'static ParserFactory {
        static FACTORY: OnceLock<ParserFactory> = OnceLock::new();
        FACTORY.get_or_init(|| {
            let env = ApproximateTokEnv::single_byte_env();
            let mut factory = ParserFactory::new_simple(&env).unwrap();
            factory.quiet();
            factory
        })
    }

    /// Whether the grammar accepts `answer` as a whole answer.
    fn accepts(lark: &str, answer: &str) -> bool {
        let mut matcher =
            Matcher::new(factory().create_parser(TopLevelGrammar::from_lark(lark.to_owned())));
        assert_eq!(matcher.get_error(), None, "{lark}");
        let trie = factory().tok_env().tok_trie();
        for byte in answer.bytes() {
            let Some(token) = trie.token_id(&[byte]) else {
                return false;
            };
            if matcher.consume_token(token).is_err() {
                return false;
            }
        }
        matcher.is_accepting().unwrap_or(false)
    }

    fn person() -> Value {
        json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "x-grounded": true},
                "age": {"type": "integer"},
                "town": {"anyOf": [{"type": "string", "x-grounded": true}, {"type": "null"}]},
                "aliases": {"type": "array", "items": {"type": "string", "x-grounded": true}}
            },
            "required": ["name", "age"],
            "additionalProperties": false
        })
    }

    const TEXT: &str =
        "Mr. Sherlock Holmes, who lived at Baker Street, said \"Quite so.\"\r\nWatson nodded.";

    #[test]
    fn a_grounded_string_is_any_span_from_a_word_to_a_word_and_nothing_else() {
        let lark = grounded_lark(&person(), TEXT, false).unwrap();
        for answer in [
            r#"{"name": "Sherlock Holmes", "age": 40}"#,
            r#"{"name": "Holmes", "age": 40, "town": "Baker Street"}"#,
            r#"{"name": "Holmes", "age": 40, "town": null, "aliases": ["Mr. Sherlock Holmes"]}"#,
            r#"{"name": "Holmes", "age": 40, "aliases": []}"#,
            r#"{"name": "said \"Quite so.\"\r\nWatson", "age": 1}"#,
            r#"{"name": "Mr", "age": 1}"#,
            r#"{"name": "Holmes, who lived", "age": 1}"#,
            r#"{"name": "\"Quite", "age": 1}"#,
        ] {
            assert!(accepts(&lark, answer), "{answer}\n{lark}");
        }
        for answer in [
            r#"{"name": "Sherlock Homes", "age": 40}"#,
            r#"{"name": "sherlock holmes", "age": 40}"#,
            r#"{"name": "Sherl", "age": 40}"#,
            r#"{"name": "Holmes", "age": "40"}"#,
            r#"{"age": 40, "name": "Holmes"}"#,
            r#"{"name": "said "Quite so."", "age": 1}"#,
            r#"{"name": "Watson\nnodded", "age": 1}"#,
            r#"{"name": "Holmes"}"#,
            r#"{"name": "", "age": 1}"#,
            r#"{"name": " Holmes", "age": 1}"#,
            r#"{"name": "Holmes ", "age": 1}"#,
            r#"{"name": "\"Quite so.\"", "age": 1}"#,
            r#"{"name": "\r\nWatson", "age": 1}"#,
            r#"{"name": ",", "age": 1}"#,
            r#"{"name": ". ", "age": 1}"#,
            r#"{"name": ", who lived at Baker Street", "age": 1}"#,
            r#"{"name": "Holmes,", "age": 1}"#,
            r#"{"name": "Watson nodded.", "age": 1}"#,
            r#"{"name": "Quite so.\"\r\n", "age": 1}"#,
            r#"{"name": ".\"\r\nWatson", "age": 1}"#,
        ] {
            assert!(!accepts(&lark, answer), "{answer}");
        }
    }

    #[test]
    fn json_lines_and_tagged_variants_ground_each_line() {
        let schema = json!({"oneOf": [
            {"type": "object", "properties": {
                "type": {"const": "person"}, "name": {"type": "string", "x-grounded": true}},
             "required": ["type", "name"]},
            {"type": "object", "properties": {
                "type": {"const": "place"}, "name": {"type": "string"}},
             "required": ["type", "name"]}
        ]});
        let lark = grounded_lark(&schema, TEXT, true).unwrap();
        let person = "{\"type\": \"person\", \"name\": \"Watson\"}\n";
        let place = "{\"type\": \"place\", \"name\": \"London\"}\n";
        assert!(accepts(&lark, person), "{lark}");
        assert!(accepts(&lark, place), "{lark}");
        assert!(
            accepts(&lark, &format!("{person}{place}{person}")),
            "{lark}"
        );
        let invented = "{\"type\": \"person\", \"name\": \"Lestrade\"}\n";
        assert!(!accepts(&lark, invented));
    }

    #[test]
    fn non_ascii_sources_and_control_chars_are_escaped_as_the_answer_writes_them() {
        let text = "東京の 山田太郎 さん 🎉 café\u{301}\ttab\u{1}";
        let schema = json!({"type": "string", "x-grounded": true});
        let lark = grounded_lark(&schema, text, false).unwrap();
        assert!(accepts(&lark, "\"山田太郎\""));
        assert!(accepts(&lark, "\"🎉 café\u{301}\\ttab\""));
        assert!(!accepts(&lark, "\"tab\\u0001\""), "an escape at the end");
        assert!(
            !accepts(&lark, "\"café\""),
            "a word without its combining mark"
        );
        assert!(accepts(&lark, "\"🎉\""), "a non-ASCII char is enough");
        assert!(!accepts(&lark, "\"山田\""), "half a word");
        assert!(!accepts(&lark, "\"\t\""), "a raw tab");
    }

    #[test]
    fn an_apostrophe_inside_a_word_ends_a_span_but_never_starts_one() {
        let schema = json!({"type": "string", "x-grounded": true});
        let text = "Holmes's friend (the doctor) said 'no'";
        let lark = grounded_lark(&schema, text, false).unwrap();
        for yes in [
            "Holmes",
            "Holmes's friend",
            "(the doctor)",
            "doctor)",
            "no'",
        ] {
            assert!(accepts(&lark, &format!("\"{yes}\"")), "{yes}");
        }
        for no in [
            "s friend",
            "'s friend",
            "Holmes'",
            "'no'",
            ") said",
            "friend (",
        ] {
            assert!(!accepts(&lark, &format!("\"{no}\"")), "{no}");
        }
    }

    #[test]
    fn shapes_it_does_not_write_out_fall_back_to_the_plain_grammar() {
        let source = "anything";
        assert_eq!(
            grounded_lark(&json!({"type": "string"}), source, false),
            None
        );
        let all_of = json!({"allOf": [{"type": "string", "x-grounded": true}]});
        assert_eq!(grounded_lark(&all_of, source, false), None);
        let map = json!({"type": "object",
            "additionalProperties": {"type": "string", "x-grounded": true}});
        assert_eq!(grounded_lark(&map, source, false), None);
    }

    #[test]
    fn objects_with_only_optional_members_take_any_ordered_subset() {
        let schema = json!({"type": "object", "properties": {
            "a": {"type": "string", "x-grounded": true},
            "b": {"type": "integer"},
            "c": {"type": "boolean"}}});
        let lark = grounded_lark(&schema, "alpha beta", false).unwrap();
        for answer in [
            "{}",
            r#"{"a": "beta"}"#,
            r#"{"b": 2, "c": true}"#,
            r#"{"a": "alpha beta", "c": false}"#,
        ] {
            assert!(accepts(&lark, answer), "{answer}");
        }
        assert!(!accepts(&lark, r#"{"c": true, "a": "beta"}"#));
        assert!(!accepts(&lark, r#"{, "b": 2}"#));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Every span between piece boundaries of any text is accepted, JSON-escaped, when it begins
        /// and ends on a word (or an opening or closing quote or bracket around one), and only then.
        #[test]
        fn every_span_of_whole_pieces_from_a_word_to_a_word_is_accepted(
            text in "[a-zA-Z0-9 \"'()\\\\\r\n\t\u{7f}éß東京🎉“”.,]{1,40}",
            a in 0usize..64,
            b in 0usize..64,
        ) {
            let schema = json!({"type": "string", "x-grounded": true});
            let lark = grounded_lark(&schema, &text, false).unwrap();
            let pieces = pieces(&text);
            let (from, to) = (a.min(b) % (pieces.len() + 1), a.max(b) % (pieces.len() + 1));
            let (from, to) = (from.min(to), from.max(to));
            let span: String = pieces.get(from..to).unwrap_or_default().concat();
            let raw: String = serde_json::from_str(&format!("\"{span}\"")).unwrap();
            let chars: Vec<char> = raw.chars().collect();
            let word = |c: &char| boundary::is_word_char(*c);
            let starts = match chars.as_slice() {
                [c, ..] if word(c) => true,
                [o, c, ..] => {
                    boundary::OPENING.contains(o) && !boundary::is_apostrophe(*o) && word(c)
                }
                _ => false,
            };
            let ends = match chars.as_slice() {
                [.., c] if word(c) => true,
                [.., c, k] => boundary::CLOSING.contains(k) && word(c),
                _ => false,
            };
            prop_assert_eq!(
                accepts(&lark, &format!("\"{span}\"")),
                starts && ends,
                "{:?} of {:?}",
                span,
                text
            );
        }
    }
}

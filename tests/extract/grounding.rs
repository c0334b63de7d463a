//! Grounding: `#[extract(grounded)]` in the schema, and spans that are right for any UTF-8 text.

use llm_extract::extract::Extractor;
use llm_extract::ground::{boundary, MatchKind, Source};
use llm_extract::llm::{from_fn, ChatResponse};
use llm_extract::{Extract, Schema};
use proptest::prelude::*;
use serde::Deserialize;
use serde_json::json;

#[derive(Extract, Deserialize, Debug, PartialEq)]
struct Person {
    #[extract(grounded, key)]
    name: String,
    #[extract(grounded)]
    title: Option<String>,
    #[extract(grounded)]
    aliases: Vec<String>,
    age: Option<u32>,
}

#[test]
fn the_schema_marks_grounded_strings_and_keys() {
    let schema = Person::schema().generic();
    let properties = &schema["properties"];
    assert_eq!(properties["name"]["x-grounded"], json!(true));
    assert_eq!(properties["name"]["x-key"], json!(true));
    assert_eq!(properties["title"]["x-grounded"], json!(true));
    assert_eq!(properties["aliases"]["items"]["x-grounded"], json!(true));
    assert_eq!(properties["aliases"].get("x-grounded"), None);
    assert_eq!(properties["age"].get("x-grounded"), None);
}

#[tokio::test]
async fn derived_items_come_with_their_spans() {
    let text = "“Mr. Sherlock Holmes”, said the\r\nvisitor, “known as\r\nthe detective”.";
    let llm = from_fn(|_| async {
        Ok(ChatResponse::new(
            r#"{"items": [{"name": "Sherlock Holmes", "title": "Mr.", "aliases": ["known as the detective"], "age": null}]}"#,
        ))
    });
    let out = Extractor::new(llm)
        .extract_grounded::<Person>(text)
        .await
        .unwrap();
    let item = &out.value[0];
    assert_eq!(item.value.name, "Sherlock Holmes");
    let spans: Vec<(&str, &str, MatchKind)> = item
        .spans
        .iter()
        .map(|s| (s.path.as_str(), &text[s.bytes.clone()], s.kind))
        .collect();
    assert_eq!(
        spans,
        vec![
            ("/name", "Sherlock Holmes", MatchKind::Exact),
            // A span ends on a word: the abbreviation's period is left out.
            ("/title", "Mr", MatchKind::Normalized),
            (
                "/aliases/0",
                "known as\r\nthe detective",
                MatchKind::Normalized
            ),
        ]
    );
    let name = &item.spans[0];
    let by_chars: String = text
        .chars()
        .skip(name.chars.start)
        .take(name.chars.len())
        .collect();
    assert_eq!(by_chars, "Sherlock Holmes");
}

/// Text from a mix of scripts: ASCII, CJK, emoji (with a ZWJ sequence), combining marks, CRLF.
fn mixed_text() -> impl Strategy<Value = String> {
    let pieces = prop::sample::select(vec![
        "Holmes",
        "Watson",
        " ",
        "\r\n",
        "\n\n",
        "東京",
        "語",
        "😀",
        "👩‍🔬",
        "e\u{301}",
        "ß",
        "İ",
        ".",
        "“",
        "”",
        "Ǆ",
        "\t",
        "a",
        "z",
    ]);
    prop::collection::vec(pieces, 1..80).prop_map(|p| p.concat())
}

/// A range of `text` picked by `a` and `b` that begins and ends on a word, or an empty one.
fn word_bounded(text: &str, a: prop::sample::Index, b: prop::sample::Index) -> (usize, usize) {
    let offsets = || text.char_indices().map(|(i, _)| i).chain([text.len()]);
    let starts: Vec<usize> = offsets().filter(|&i| boundary::is_start(text, i)).collect();
    let ends: Vec<usize> = offsets().filter(|&i| boundary::is_end(text, i)).collect();
    if starts.is_empty() || ends.is_empty() {
        return (0, 0);
    }
    let from = starts[a.index(starts.len())];
    let to = ends[b.index(ends.len())];
    if from < to {
        (from, to)
    } else {
        (0, 0)
    }
}

/// `text` as [`Source`] compares it: whitespace runs as one space, quote-like chars straight, lowercase.
fn normalized_from(text: &str) -> String {
    let mut out = String::new();
    let mut in_space = false;
    for c in text.chars() {
        if c.is_whitespace() {
            if !in_space {
                out.push(' ');
            }
            in_space = true;
            continue;
        }
        in_space = false;
        match c {
            '“' | '”' => out.push('"'),
            c => out.extend(c.to_lowercase()),
        }
    }
    out
}

/// A value as [`Source`] looks for it: normalized, without the spaces at its ends.
fn normalized(text: &str) -> String {
    normalized_from(text).trim_matches(' ').to_owned()
}

fn char_slice(text: &str, chars: std::ops::Range<usize>) -> String {
    text.chars().skip(chars.start).take(chars.len()).collect()
}

proptest! {
    /// Any substring that begins and ends on a word is found exactly, and its byte and char ranges
    /// both point at it.
    #[test]
    fn word_bounded_substrings_are_found_exactly_at_consistent_offsets(
        text in mixed_text(),
        a in any::<prop::sample::Index>(),
        b in any::<prop::sample::Index>(),
    ) {
        let (from, to) = word_bounded(&text, a, b);
        let needle = &text[from..to];
        prop_assume!(from < to);
        let source = Source::new(&text);
        let span = source.span("/v".into(), needle);
        prop_assert_eq!(span.kind, MatchKind::Exact);
        prop_assert_eq!(&text[span.bytes.clone()], needle);
        prop_assert_eq!(char_slice(&text, span.chars.clone()), needle);
        prop_assert!(span.bytes.start <= from);
    }

    /// A substring with its whitespace runs changed and its ASCII case changed is found (normalized or
    /// exactly) on char boundaries, with consistent byte and char ranges.
    #[test]
    fn respaced_and_recased_substrings_are_found_on_char_boundaries(
        text in mixed_text(),
        a in any::<prop::sample::Index>(),
        b in any::<prop::sample::Index>(),
    ) {
        let (from, to) = word_bounded(&text, a, b);
        let needle = &text[from..to];
        prop_assume!(from < to);
        let altered = needle.split_whitespace().collect::<Vec<_>>().join(" ").to_ascii_uppercase();
        let source = Source::new(&text);
        let span = source.span("/v".into(), &altered);
        prop_assert!(text.is_char_boundary(span.bytes.start) && text.is_char_boundary(span.bytes.end));
        prop_assert_eq!(char_slice(&text, span.chars.clone()), &text[span.bytes.clone()]);
        prop_assert!(boundary::is_span(&text, &span.bytes), "{:?}", &text[span.bytes.clone()]);
        let first = text
            .match_indices(&altered)
            .map(|(at, _)| at..at + altered.len())
            .find(|range| boundary::is_span(&text, range));
        if let Some(at) = first {
            // Written as the text writes it: the first exact occurrence.
            prop_assert_eq!(span.kind, MatchKind::Exact);
            prop_assert_eq!(span.bytes, at);
        } else {
            // Otherwise a place whose normalized text is the value's, that reads as the value, no
            // later than the needle itself.
            let wanted = normalized(&altered);
            prop_assert_eq!(span.kind, MatchKind::Normalized, "{:?} in {:?}", altered, text);
            prop_assert_eq!(normalized(&text[span.bytes.clone()]), wanted.as_str());
            prop_assert!(span.bytes.start <= from);
        }
    }

    /// Whatever the value, alignment never panics and a found span is a slice of the text that
    /// begins and ends on a word.
    #[test]
    fn any_value_aligns_to_a_slice_or_nothing(text in mixed_text(), value in mixed_text()) {
        let source = Source::new(&text);
        let span = source.span("/v".into(), &value);
        if span.kind.is_found() {
            prop_assert!(text.get(span.bytes.clone()).is_some());
            prop_assert!(boundary::is_span(&text, &span.bytes));
            prop_assert_eq!(char_slice(&text, span.chars.clone()), &text[span.bytes.clone()]);
        } else {
            prop_assert_eq!(span.bytes, 0..0);
        }
    }
}

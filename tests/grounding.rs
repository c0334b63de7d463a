//! Grounding: `#[extract(grounded)]` in the schema, and spans that are right for any UTF-8 text.

use llm_extract::extract::Extractor;
use llm_extract::ground::{MatchKind, Source};
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
        .extract_grounded_all::<Person>(text)
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
            ("/title", "Mr.", MatchKind::Exact),
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
    /// Any substring is found exactly, and its byte and char ranges both point at it.
    #[test]
    fn substrings_are_found_exactly_at_consistent_offsets(
        text in mixed_text(),
        a in any::<prop::sample::Index>(),
        b in any::<prop::sample::Index>(),
    ) {
        let bounds: Vec<usize> = text.char_indices().map(|(i, _)| i).chain([text.len()]).collect();
        let (x, y) = (a.index(bounds.len()), b.index(bounds.len()));
        let (from, to) = (bounds[x.min(y)], bounds[x.max(y)]);
        let needle = &text[from..to];
        prop_assume!(!needle.trim().is_empty());
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
        let bounds: Vec<usize> = text.char_indices().map(|(i, _)| i).chain([text.len()]).collect();
        let (x, y) = (a.index(bounds.len()), b.index(bounds.len()));
        let needle = &text[bounds[x.min(y)]..bounds[x.max(y)]];
        prop_assume!(!needle.trim().is_empty());
        let altered = needle.split_whitespace().collect::<Vec<_>>().join(" ").to_ascii_uppercase();
        let source = Source::new(&text);
        let span = source.span("/v".into(), &altered);
        prop_assert!(text.is_char_boundary(span.bytes.start) && text.is_char_boundary(span.bytes.end));
        prop_assert_eq!(char_slice(&text, span.chars.clone()), &text[span.bytes.clone()]);
        if let Some(at) = text.find(&altered) {
            // Written as the text writes it: the first exact occurrence.
            prop_assert_eq!(span.kind, MatchKind::Exact);
            prop_assert_eq!(span.bytes, at..at + altered.len());
        } else {
            // Otherwise the first place whose normalized text is the value's: it reads as the value,
            // no earlier char starts a place that does, and the needle itself is such a place.
            let wanted = normalized(&altered);
            prop_assert_eq!(span.kind, MatchKind::Normalized, "{:?} in {:?}", altered, text);
            prop_assert_eq!(normalized(&text[span.bytes.clone()]), wanted.as_str());
            let first = text
                .char_indices()
                .map(|(i, _)| i)
                .find(|&i| normalized_from(&text[i..]).starts_with(&wanted));
            prop_assert_eq!(Some(span.bytes.start), first);
            let needle_start = bounds[x.min(y)] + (needle.len() - needle.trim_start().len());
            prop_assert!(span.bytes.start <= needle_start);
        }
    }

    /// Whatever the value, alignment never panics and a found span is a slice of the text.
    #[test]
    fn any_value_aligns_to_a_slice_or_nothing(text in mixed_text(), value in mixed_text()) {
        let source = Source::new(&text);
        let span = source.span("/v".into(), &value);
        if span.kind.is_found() {
            prop_assert!(text.get(span.bytes.clone()).is_some());
            prop_assert_eq!(char_slice(&text, span.chars.clone()), &text[span.bytes.clone()]);
        } else {
            prop_assert_eq!(span.bytes, 0..0);
        }
    }
}

//! Word boundaries: where a grounded span may begin and end.
//!
//! A span reads as a value when it begins and ends on a word, never on the punctuation or whitespace
//! between words: `Baker Street` or `(Baker Street)`, not `), when my way led`. A word is a run of
//! [word chars](is_word_char) (ASCII letters, digits and `_`, and every non-ASCII char but spaces
//! and a list of quotes, brackets, dashes and punctuation: letters and combining marks of any
//! script), with an apostrophe between two word chars inside it (`don't`, `Holmes's`). A span
//!
//! - [starts](is_start) on the first char of a word, or on an opening quote or bracket with a word
//!   char right after it;
//! - [ends](is_end) after the last char of a word, or after a closing quote or bracket with a word
//!   char right before it.
//!
//! A word may end before an apostrophe inside it, so that `Holmes` is a span of `Holmes's`; nothing
//! starts or ends on that apostrophe, nor starts after it.
//!
//! Line ends (`\r\n` or `\n`) are whitespace like any other. Every test looks at the chars around one
//! offset only, so checking a span costs constant time and [`snap`] is linear in the span.
//!
//! [`span_regex`] says the same of a span written as the contents of a JSON string, for grammars
//! that make a model write spans of the text.

use std::ops::Range;

/// Chars that open a quotation or a bracket.
pub const OPENING: &[char] = &[
    '"', '\'', '(', '[', '{', '\u{2018}', '\u{201A}', '\u{201C}', '\u{201E}', '\u{00AB}',
    '\u{2039}', '\u{300C}', '\u{300E}', '\u{FF08}',
];

/// Chars that close a quotation or a bracket.
pub const CLOSING: &[char] = &[
    '"', '\'', ')', ']', '}', '\u{2019}', '\u{201D}', '\u{00BB}', '\u{203A}', '\u{300D}',
    '\u{300F}', '\u{FF09}',
];

/// Non-ASCII chars [`span_regex`] does not count as word chars: the quotes and brackets above, and
/// common non-ASCII spaces, dashes and punctuation.
const NON_WORD: &[char] = &[
    '\u{0085}', '\u{00A0}', '\u{00A1}', '\u{00AB}', '\u{00B7}', '\u{00BB}', '\u{00BF}', '\u{1680}',
    '\u{2000}', '\u{2001}', '\u{2002}', '\u{2003}', '\u{2004}', '\u{2005}', '\u{2006}', '\u{2007}',
    '\u{2008}', '\u{2009}', '\u{200A}', '\u{200B}', '\u{2010}', '\u{2011}', '\u{2012}', '\u{2013}',
    '\u{2014}', '\u{2015}', '\u{2018}', '\u{2019}', '\u{201A}', '\u{201B}', '\u{201C}', '\u{201D}',
    '\u{201E}', '\u{201F}', '\u{2022}', '\u{2026}', '\u{2028}', '\u{2029}', '\u{202F}', '\u{2039}',
    '\u{203A}', '\u{205F}', '\u{3000}', '\u{3001}', '\u{3002}', '\u{300C}', '\u{300D}', '\u{300E}',
    '\u{300F}', '\u{FF08}', '\u{FF09}', '\u{FF0C}', '\u{FF0E}', '\u{FF1A}', '\u{FF1B}', '\u{FF01}',
    '\u{FF1F}',
];

/// Whether `c` is a char of a word: an ASCII letter, digit or `_`, or a non-ASCII char other than a
/// space, a quote, a bracket, a dash or common punctuation (so `e\u{301}`, `東京` and `🎉` are words).
/// The grammar regex of [`span_regex`] counts the same chars.
pub fn is_word_char(c: char) -> bool {
    if c.is_ascii() {
        c.is_ascii_alphanumeric() || c == '_'
    } else {
        !NON_WORD.contains(&c)
    }
}

/// Whether `c` is an apostrophe (`'` or `’`): inside a word, part of it.
pub fn is_apostrophe(c: char) -> bool {
    c == '\'' || c == '\u{2019}'
}

/// The char that starts at byte `at` of `text`, if any.
fn after(text: &str, at: usize) -> Option<char> {
    text.get(at..)?.chars().next()
}

/// The char that ends at byte `at` of `text`, if any.
fn before(text: &str, at: usize) -> Option<char> {
    text.get(..at)?.chars().next_back()
}

fn word(c: Option<char>) -> bool {
    c.is_some_and(is_word_char)
}

/// Whether the char ending at `at` belongs to a word: a word char, or an apostrophe between two.
fn in_word_before(text: &str, at: usize) -> bool {
    match before(text, at) {
        Some(c) if is_word_char(c) => true,
        Some(c) if is_apostrophe(c) => {
            word(before(text, at - c.len_utf8())) && word(after(text, at))
        }
        _ => false,
    }
}

/// Whether a span of `text` may start at byte `at` (see the [module documentation](self)).
pub fn is_start(text: &str, at: usize) -> bool {
    let Some(c) = after(text, at) else {
        return false;
    };
    let next = after(text, at + c.len_utf8());
    if is_word_char(c) {
        return !in_word_before(text, at);
    }
    let in_word = is_apostrophe(c) && word(before(text, at));
    OPENING.contains(&c) && word(next) && !in_word
}

/// Whether a span of `text` may end at byte `at` (see the [module documentation](self)).
pub fn is_end(text: &str, at: usize) -> bool {
    let Some(c) = before(text, at) else {
        return false;
    };
    let next = after(text, at);
    if is_word_char(c) {
        return !word(next);
    }
    let in_word = is_apostrophe(c) && word(next);
    CLOSING.contains(&c) && word(before(text, at - c.len_utf8())) && !in_word
}

/// Whether `range` of `text` is a span that begins and ends on a word.
pub fn is_span(text: &str, range: &Range<usize>) -> bool {
    range.start < range.end && is_start(text, range.start) && is_end(text, range.end)
}

/// The largest span inside `range` that begins and ends on a word: its edges moved inwards past
/// punctuation, whitespace and cut words; `None` when no word is left. Linear in the range.
pub fn snap(text: &str, range: Range<usize>) -> Option<Range<usize>> {
    let inner = text.get(range.clone())?;
    let start = inner
        .char_indices()
        .map(|(at, _)| range.start + at)
        .find(|&at| is_start(text, at))?;
    let end = inner
        .char_indices()
        .rev()
        .map(|(at, c)| range.start + at + c.len_utf8())
        .take_while(|&end| end > start)
        .find(|&end| is_end(text, end))?;
    Some(start..end)
}

/// `value` without the punctuation and whitespace at either end: the largest part of it that begins
/// and ends on a word, with an opening quote or bracket kept only when the closing one is kept too
/// (`"Quite so."` trims to `Quite so`, `(Baker Street)` stays). `None` when `value` has no word.
pub fn trim(value: &str) -> Option<&str> {
    let range = snap(value, 0..value.len())?;
    let mut inner = value.get(range)?;
    let opens = inner.chars().next().is_some_and(|c| !is_word_char(c));
    let closes = inner.chars().next_back().is_some_and(|c| !is_word_char(c));
    if opens != closes {
        let (from, to) = if opens {
            (inner.chars().next().map_or(0, char::len_utf8), inner.len())
        } else {
            (
                0,
                inner.len() - inner.chars().next_back().map_or(0, char::len_utf8),
            )
        };
        inner = inner.get(from..to)?;
    }
    Some(inner)
}

/// A regex (regex-syntax, as llguidance reads it) matching the contents of a JSON string, escapes
/// as JSON writes them, that begin and end on a word: an optional opening quote or bracket (not an
/// apostrophe, which may be inside a word), a [word char](is_word_char), then optionally any chars
/// ending in a word char, then an optional closing quote or bracket. Which edges are inside a word
/// the regex cannot see: it is meant as a conjunct of spans made of whole words, with an apostrophe
/// inside a word kept with the rest of the word (`Holmes`, `'s`).
pub fn span_regex() -> String {
    let word = word_class();
    let one = |c: char| match c {
        '"' => "\\\\\"".to_owned(),
        '(' | ')' | '[' | ']' | '{' | '}' => format!("\\{c}"),
        c if c.is_ascii() => c.to_string(),
        c => format!("\\x{{{:X}}}", u32::from(c)),
    };
    let alternatives = |set: &[char]| set.iter().map(|&c| one(c)).collect::<Vec<_>>().join("|");
    // Any char of the contents: a raw one, or a whole escape.
    let any = r#"([^\\"]|\\["\\bfnrt]|\\u[0-9a-fA-F]{4})"#;
    format!(
        "({opening})?{word}({any}*{word})?({closing})?",
        opening = alternatives(
            &OPENING
                .iter()
                .copied()
                .filter(|&c| !is_apostrophe(c))
                .collect::<Vec<_>>()
        ),
        closing = alternatives(CLOSING),
    )
}

/// The regex class of the word chars of [`span_regex`].
fn word_class() -> String {
    let mut class = String::from("[0-9A-Za-z_");
    let mut from = 0x80u32;
    let mut excluded: Vec<u32> = NON_WORD.iter().map(|&c| u32::from(c)).collect();
    excluded.sort_unstable();
    excluded.dedup();
    for c in excluded {
        if c > from {
            class.push_str(&format!("\\x{{{from:X}}}-\\x{{{:X}}}", c - 1));
        }
        from = c + 1;
    }
    class.push_str(&format!("\\x{{{from:X}}}-\\x{{10FFFF}}]"));
    class
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The spans of `text` that begin and end on a word, as strings.
    fn spans(text: &str) -> Vec<&str> {
        let offsets: Vec<usize> = text
            .char_indices()
            .map(|(at, _)| at)
            .chain([text.len()])
            .collect();
        let mut out = Vec::new();
        for &from in &offsets {
            for &to in &offsets {
                if from < to && is_span(text, &(from..to)) {
                    out.push(&text[from..to]);
                }
            }
        }
        out
    }

    #[test]
    fn spans_begin_and_end_on_words_or_quotes_around_them() {
        let text = "(Holmes's friend) said \"Quite so.\"\r\n— Watson";
        let found = spans(text);
        for span in [
            "(Holmes's friend)",
            "Holmes's friend)",
            "Holmes's",
            "Holmes",
            "friend) said",
            "said \"Quite",
            "\"Quite so",
            "so.\"\r\n— Watson",
            "Watson",
        ] {
            assert!(found.contains(&span), "{span:?} in {found:?}");
        }
        for span in [
            "s friend",
            "'s",
            "Holm",
            ") said",
            "friend) ",
            "so.\"",
            "so.",
            "\"\r\n— Watson",
            "— Watson",
            "(Holmes's friend) said \"Quite so.\"\r\n",
        ] {
            assert!(!found.contains(&span), "{span:?}");
        }
    }

    #[test]
    fn combining_marks_and_non_ascii_words() {
        let text = "café\u{301} «東京» 山田";
        let found = spans(text);
        assert!(found.contains(&"café\u{301}"));
        assert!(!found.contains(&"café"));
        assert!(found.contains(&"«東京»"));
        assert!(found.contains(&"東京» 山田"));
        assert!(!found.contains(&"» 山田"));
    }

    #[test]
    fn snap_moves_edges_inwards_to_words() {
        let text = "Street), when my way led me through Baker Street. As I";
        let at = text.find(')').unwrap();
        let snapped = snap(text, at..text.len()).unwrap();
        assert_eq!(
            &text[snapped],
            "when my way led me through Baker Street. As I"
        );
        assert_eq!(snap(text, 2..5), None, "inside a word");
        assert_eq!(snap(text, at..at + 2), None, "no word");
        assert_eq!(snap(text, 0..text.len() + 1), None, "out of the text");
    }

    #[test]
    fn trim_keeps_quotes_and_brackets_in_pairs() {
        assert_eq!(trim(", and in that vow"), Some("and in that vow"));
        assert_eq!(trim("\"Quite so.\""), Some("Quite so"));
        assert_eq!(trim("(Baker Street)"), Some("(Baker Street)"));
        assert_eq!(trim("Baker Street)."), Some("Baker Street"));
        assert_eq!(trim("“Watson”"), Some("“Watson”"));
        assert_eq!(trim(" \r\n"), None);
        assert_eq!(trim("—"), None);
    }

    /// `text` as it is written inside a JSON string.
    fn escaped(text: &str) -> String {
        let quoted = serde_json::Value::String(text.to_owned()).to_string();
        quoted[1..quoted.len() - 1].to_owned()
    }

    #[test]
    fn span_regex_reads_escapes_whole() {
        let regex = regex::Regex::new(&format!("^(?:{})$", span_regex())).unwrap();
        for yes in [
            "Holmes",
            "\\\"Quite",
            "so\\\"",
            "(a)",
            "a\\\\b",
            "東京",
            "«東京»",
            "a\\nb",
        ] {
            assert!(regex.is_match(yes), "{yes}");
        }
        for no in [
            "",
            ",",
            ", and",
            "Holmes\\n",
            "tab\\u0001",
            "\\u0041",
            "so.\\\"",
            "\\\\b",
            "a ",
            "“",
            "a—",
        ] {
            assert!(!regex.is_match(no), "{no}");
        }
    }

    proptest! {
        /// A span's JSON-escaped text matches [`span_regex`] exactly when its first and last chars
        /// are word chars or quotes and brackets around them (as the regex approximates word chars).
        #[test]
        fn span_regex_matches_spans_from_a_word_to_a_word(
            text in "[a-z0-9 \"'()\\[\\]\\\\\r\n\t\u{1}\u{7f}éß東京🎉“”«».,—]{0,12}",
        ) {
            let regex = regex::Regex::new(&format!("^(?:{})$", span_regex())).unwrap();
            let chars: Vec<char> = text.chars().collect();
            let word = |c: &char| is_word_char(*c);
            let starts = match chars.as_slice() {
                [c, ..] if word(c) => true,
                [o, c, ..] => OPENING.contains(o) && !is_apostrophe(*o) && word(c),
                _ => false,
            };
            let ends = match chars.as_slice() {
                [.., c] if word(c) => true,
                [.., c, k] => CLOSING.contains(k) && word(c),
                _ => false,
            };
            prop_assert_eq!(regex.is_match(&escaped(&text)), starts && ends, "{:?}", text);
        }

        /// Every span [`snap`] returns begins and ends on a word, and lies inside the range given.
        #[test]
        fn snapped_spans_are_spans(
            text in "[a-zA-Z' \"().,\r\néß東京“”—]{0,30}",
            a in 0usize..40,
            b in 0usize..40,
        ) {
            let mut offsets: Vec<usize> = text.char_indices().map(|(at, _)| at).collect();
            offsets.push(text.len());
            let pick = |i: usize| offsets[i % offsets.len()];
            let (from, to) = (pick(a).min(pick(b)), pick(a).max(pick(b)));
            if let Some(span) = snap(&text, from..to) {
                prop_assert!(is_span(&text, &span), "{:?}", &text[span.clone()]);
                prop_assert!(from <= span.start && span.end <= to);
            }
        }
    }
}

//! The one table of how a scalar may be spelled, shared by every reader: the lenient parser, the
//! partial (preview) parser and the typed reader. A preview then shows a literal, a number or an
//! escape exactly as the final parse reads it.
//!
//! - **Words**: `true`, `false` and `null` are JSON's; any other spelling a model writes of them, in
//!   any case (`True`, `tRuE`, `None`, `nil`, `undefined`), reads as the same literal, and so do the
//!   numbers JSON cannot hold (`NaN`, `Infinity`, `-inf`), as `null`. Any other word is text (where
//!   unquoted text ends is the lexer's: `lex::ends_text`).
//! - **Numbers**: a run of [number bytes](is_number_byte); `.5`, `1.`, `+1` and `007` are normalized.
//!   A run followed by a letter or `_` is a word (`10px`, `82_461_110`): the schema decides whether
//!   such a word was a number (see `coerce`).
//! - **Escapes**: JSON's own; `\'` inside a single-quoted string; an invalid escape keeps its
//!   backslash; a lone surrogate is U+FFFD.

use serde_json::{Number, Value};

/// A word's literal, and whether the word is JSON's own spelling of it (`true`, `false`, `null`).
pub(crate) fn word(word: &str) -> Option<(Value, bool)> {
    let exact = match word {
        "true" => Some(Value::Bool(true)),
        "false" => Some(Value::Bool(false)),
        "null" => Some(Value::Null),
        _ => None,
    };
    if let Some(value) = exact {
        return Some((value, true));
    }
    // The longest spelling is `-infinity`: anything longer is text (and costs no lower-casing).
    if word.len() > 9 {
        return None;
    }
    let mut lower = [0u8; 9];
    for (slot, byte) in lower.iter_mut().zip(word.bytes()) {
        *slot = byte.to_ascii_lowercase();
    }
    let value = match lower.get(..word.len()).unwrap_or_default() {
        b"true" => Value::Bool(true),
        b"false" => Value::Bool(false),
        b"null" | b"none" | b"nil" | b"undefined" => Value::Null,
        b"nan" | b"-nan" | b"+nan" | b"infinity" | b"-infinity" | b"+infinity" | b"inf"
        | b"-inf" | b"+inf" => Value::Null,
        _ => return None,
    };
    Some((value, false))
}

/// The bytes a number is written with (its grammar is checked when it is read whole).
#[inline]
pub(crate) fn is_number_byte(byte: u8) -> bool {
    matches!(byte, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E')
}

/// Whether a number run stopped by `byte` is a word after all (`10px`, `82_461_110`).
#[inline]
pub(crate) fn number_goes_on_as_word(byte: u8) -> bool {
    byte.is_ascii_alphabetic() || byte == b'_'
}

/// A number as a model writes it: the JSON number, and whether it had to be normalized; `None`
/// when it is no number (`-`, `1.2.3`, `1e999`).
pub(crate) fn number(raw: &str) -> Option<(Number, bool)> {
    if !raw.bytes().any(|c| c.is_ascii_digit()) {
        return None;
    }
    let (normalized, changed) = normalize_number(raw);
    Some((parse_number(&normalized)?, changed))
}

/// `.5` to `0.5`, `1.` to `1`, `+1` to `1`, `007` to `7`; whether anything changed.
pub(crate) fn normalize_number(raw: &str) -> (String, bool) {
    let (sign, digits) = match raw.as_bytes().first() {
        Some(b'-') => ("-", raw.get(1..).unwrap_or_default()),
        Some(b'+') => ("", raw.get(1..).unwrap_or_default()),
        _ => ("", raw),
    };
    let (mantissa, exponent) = match digits.find(['e', 'E']) {
        Some(i) => digits.split_at(i),
        None => (digits, ""),
    };
    let (int, frac) = match mantissa.find('.') {
        Some(i) => (mantissa.get(..i).unwrap_or_default(), mantissa.get(i + 1..)),
        None => (mantissa, None),
    };
    let int = int.trim_start_matches('0');
    let int = if int.is_empty() { "0" } else { int };
    let mut out = String::with_capacity(raw.len() + 2);
    out.push_str(sign);
    out.push_str(int);
    if let Some(frac) = frac.filter(|f| !f.is_empty()) {
        out.push('.');
        out.push_str(frac);
    }
    out.push_str(exponent);
    let changed = out != raw;
    (out, changed)
}

/// A JSON number's text as a number, as `serde_json` reads it: an integer when it is one that fits
/// (but `-0`, a float), else a finite float.
pub(crate) fn parse_number(text: &str) -> Option<Number> {
    if !text.contains(['.', 'e', 'E']) {
        if let Ok(n) = text.parse::<i64>() {
            if n == 0 && text.starts_with('-') {
                return Number::from_f64(-0.0);
            }
            return Some(n.into());
        }
        if let Ok(n) = text.parse::<u64>() {
            return Some(n.into());
        }
    }
    let f: f64 = text.parse().ok()?;
    Number::from_f64(f)
}

/// Digit groups (`82_461_110`, `-1_000.5`) as the number they write; `None` for anything else
/// (a group must hold digits on both sides of each `_`).
pub(crate) fn grouped_number(text: &str) -> Option<Number> {
    let text = text.trim();
    let digits = text.strip_prefix('-').unwrap_or(text);
    let (int, frac) = match digits.split_once('.') {
        Some((int, frac)) => (int, Some(frac)),
        None => (digits, None),
    };
    let groups_ok = |part: &str| {
        !part.is_empty()
            && part
                .split('_')
                .all(|group| !group.is_empty() && group.bytes().all(|c| c.is_ascii_digit()))
    };
    if !text.contains('_') || !groups_ok(int) || !frac.is_none_or(groups_ok) {
        return None;
    }
    parse_number(&text.replace('_', ""))
}

/// The character of a one-letter escape (`\n`, `\"`); `single`: inside a single-quoted string,
/// where `\'` is a quote as well.
#[inline]
pub(crate) fn escape(byte: u8, single: bool) -> Option<char> {
    Some(match byte {
        b'"' => '"',
        b'\\' => '\\',
        b'/' => '/',
        b'b' => '\u{8}',
        b'f' => '\u{c}',
        b'n' => '\n',
        b'r' => '\r',
        b't' => '\t',
        b'\'' if single => '\'',
        _ => return None,
    })
}

/// The value of four hex digits.
#[inline]
pub(crate) fn hex4(digits: &[u8]) -> Option<u32> {
    if digits.len() != 4 {
        return None;
    }
    digits.iter().try_fold(0u32, |code, &c| {
        Some(code * 16 + char::from(c).to_digit(16)?)
    })
}

/// The character of a surrogate pair.
#[inline]
pub(crate) fn surrogate_pair(high: u32, low: u32) -> Option<char> {
    if !(0xD800..0xDC00).contains(&high) || !(0xDC00..0xE000).contains(&low) {
        return None;
    }
    char::from_u32(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))
}

/// Whether a `\u` code unit is the first half of a surrogate pair.
#[inline]
pub(crate) fn is_high_surrogate(code: u32) -> bool {
    (0xD800..0xDC00).contains(&code)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_spelling_of_a_literal() {
        for (text, value, exact) in [
            ("true", json!(true), true),
            ("null", json!(null), true),
            ("True", json!(true), false),
            ("tRuE", json!(true), false),
            ("FALSE", json!(false), false),
            ("None", json!(null), false),
            ("nil", json!(null), false),
            ("undefined", json!(null), false),
            ("NaN", json!(null), false),
            ("-Infinity", json!(null), false),
            ("+inf", json!(null), false),
        ] {
            assert_eq!(word(text), Some((value, exact)), "{text}");
        }
        for text in ["truth", "yes", "", "nullable", "Infinityyyy", "n/a"] {
            assert_eq!(word(text), None, "{text}");
        }
    }

    #[test]
    fn number_forms() {
        assert_eq!(normalize_number("-.5e3"), ("-0.5e3".into(), true));
        assert_eq!(normalize_number("10"), ("10".into(), false));
        assert_eq!(normalize_number("0"), ("0".into(), false));
        assert_eq!(normalize_number("1.e2"), ("1e2".into(), true));
        assert!(parse_number("1e999").is_none());
        assert_eq!(parse_number("18446744073709551615"), Some(u64::MAX.into()));
        assert_eq!(number("+01"), Some((1.into(), true)));
        // As serde_json reads clean JSON, so the fast path and the lenient one agree.
        for text in [
            "-0",
            "0",
            "-7",
            "12",
            "1e3",
            "-9223372036854775809",
            "18446744073709551616",
        ] {
            let serde: Number = serde_json::from_str(text).unwrap();
            assert_eq!(parse_number(text), Some(serde), "{text}");
        }
        assert_eq!(number("-"), None);
        assert_eq!(number("1.2.3"), None);
    }

    #[test]
    fn digit_groups() {
        assert_eq!(grouped_number("82_461_110"), Some(82_461_110.into()));
        assert_eq!(grouped_number("-1_000"), Some((-1000).into()));
        assert_eq!(grouped_number("1_000.000_5"), Number::from_f64(1000.0005));
        for text in [
            "82461110", "_1", "1_", "1__0", "1_a", "a_1", "1_0.", "--1_0",
        ] {
            assert_eq!(grouped_number(text), None, "{text}");
        }
    }

    #[test]
    fn escapes() {
        assert_eq!(escape(b'n', false), Some('\n'));
        assert_eq!(escape(b'\'', false), None);
        assert_eq!(escape(b'\'', true), Some('\''));
        assert_eq!(escape(b'p', false), None);
        assert_eq!(hex4(b"00e9"), Some(0xe9));
        assert_eq!(hex4(b"00g9"), None);
        assert_eq!(hex4(b"0e9"), None);
        assert_eq!(surrogate_pair(0xD83D, 0xDE00), Some('😀'));
        assert_eq!(surrogate_pair(0xDE00, 0xD83D), None);
    }
}

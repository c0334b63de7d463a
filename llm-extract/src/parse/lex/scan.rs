//! The lexer's byte-level primitives: where a string's text stops (word at a time), where a number,
//! a word, unquoted text or a run of whitespace ends, which bytes begin a number, and the skip over
//! whitespace and comments. The token iterator ([`super::Lexer`]) runs on them, and a reader that
//! holds the whole text (the typed reader, the confidence scan, the lenient parser) or reads in
//! chunks of its own (the partial parser) may call them directly in its own hot loop.

use super::{comment_at, Syntax};
use crate::parse::literal;

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// A mask with the high bit of each byte of `word` that is `quote`, `\` or a control character; the
/// lowest set bit is exact (higher ones may be spurious).
#[inline(always)]
fn specials(word: u64, quotes: u64) -> u64 {
    let zero = |v: u64| v.wrapping_sub(ONES) & !v & HIGHS;
    zero(word ^ quotes)
        | zero(word ^ (ONES * u64::from(b'\\')))
        | (word.wrapping_sub(ONES * 0x20) & !word & HIGHS)
}

/// Where the first `quote`, `\` or control character (below 0x20) at or after `from` is
/// (`bytes.len()` if none): the end of a string's plain text. Eight bytes at a time.
#[inline(always)]
pub fn string_stop(bytes: &[u8], from: usize, quote: u8) -> usize {
    let quotes = ONES * u64::from(quote);
    let mut at = from;
    while let Some(word) = bytes.get(at..at + 8).and_then(|w| w.first_chunk::<8>()) {
        let found = specials(u64::from_le_bytes(*word), quotes);
        if found != 0 {
            return at + (found.trailing_zeros() / 8) as usize;
        }
        at += 8;
    }
    while let Some(&b) = bytes.get(at) {
        if b == quote || b == b'\\' || b < 0x20 {
            return at;
        }
        at += 1;
    }
    bytes.len()
}

/// Just past the closing `quote` of the string whose text starts at `from` (after its opening quote),
/// honouring escapes; `None` when the text ends first. For `"` and `'` strings.
pub fn string_end(bytes: &[u8], from: usize, quote: u8) -> Option<usize> {
    let mut at = from;
    loop {
        at = string_stop(bytes, at, quote);
        match bytes.get(at)? {
            b'\\' => at += 2,
            &b if b == quote => return Some(at + 1),
            _ => at += 1,
        }
    }
}

/// The end of the run of number bytes (digits, `-`, `+`, `.`, `e`, `E`: `literal`'s table) from `from`.
#[inline(always)]
pub fn number_end(bytes: &[u8], from: usize) -> usize {
    let mut at = from;
    while bytes.get(at).is_some_and(|&b| literal::is_number_byte(b)) {
        at += 1;
    }
    at
}

/// The end of the run of JSON whitespace (space, tab, CR, LF) from `from`.
#[inline(always)]
pub fn space_end(bytes: &[u8], from: usize) -> usize {
    let mut at = from;
    while let Some(b' ' | b'\t' | b'\r' | b'\n') = bytes.get(at) {
        at += 1;
    }
    at
}

/// Whether `byte` ends a word in `syntax`: whitespace, `{ } [ ] : ,`, `"`, and `( )` or NUL where
/// the syntax reads them.
#[inline]
pub fn ends_word(byte: u8, syntax: Syntax) -> bool {
    matches!(
        byte,
        b' ' | b'\t' | b'\r' | b'\n' | b'{' | b'}' | b'[' | b']' | b':' | b',' | b'"'
    ) || (syntax.parens && matches!(byte, b'(' | b')'))
        || (syntax.nul_is_space && byte == 0)
}

/// The end of the word (a literal, or unquoted text without spaces) from `from`.
#[inline]
pub fn word_end(bytes: &[u8], from: usize, syntax: Syntax) -> usize {
    end_where(bytes, from, |b| ends_word(b, syntax))
}

/// The first byte at or after `from` that `ends` (`bytes.len()` if none).
#[inline(always)]
fn end_where(bytes: &[u8], from: usize, ends: impl Fn(u8) -> bool) -> usize {
    let rest = bytes.get(from..).unwrap_or_default();
    from + rest.iter().position(|&b| ends(b)).unwrap_or(rest.len())
}

/// The first byte at or after `from` that is neither whitespace nor inside a comment of `syntax`
/// (`bytes.len()` if none); a comment cut by the end runs to it. For a reader holding the whole text.
pub fn skip_insignificant(bytes: &[u8], from: usize, syntax: Syntax) -> usize {
    let mut at = from;
    loop {
        at = space_end(bytes, at);
        match bytes.get(at) {
            Some(0) if syntax.nul_is_space => at += 1,
            Some(b'/' | b'#') => match comment_at(bytes, at, syntax) {
                Some(comment) => at = comment.end,
                None => return at,
            },
            _ => return at,
        }
    }
}

/// Whether `byte` may begin a number (a digit, `-`, `+` or `.`; a run that turns out no number is
/// a word, `-Infinity`).
#[inline]
pub fn starts_number(byte: u8) -> bool {
    matches!(byte, b'-' | b'+' | b'.' | b'0'..=b'9')
}

/// Whether `byte` belongs to a name: an unquoted key as a model writes it (`first_name`, `$ref`,
/// `x-id`): ASCII letters and digits, `_`, `$` and `-`.
#[inline]
pub fn is_name_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || matches!(byte, b'_' | b'$' | b'-')
}

/// Whether `byte` ends unquoted text (a literal, or text a model left unquoted), read as the
/// parsers read it: unlike a [word](ends_word), the text may hold spaces (`{"s": hello world}`),
/// and ends at `, : { } [ ]` or the end of the line; in a tuple (`tuple`), at `)` too. The text is
/// then trimmed at its end.
#[inline]
pub fn ends_text(byte: u8, tuple: bool) -> bool {
    matches!(
        byte,
        b',' | b'}' | b']' | b':' | b'\n' | b'\r' | b'{' | b'['
    ) || (tuple && byte == b')')
}

/// The end of unquoted text from `from` ([`ends_text`]); `bytes.len()` when nothing ends it.
#[inline]
pub fn text_end(bytes: &[u8], from: usize, tuple: bool) -> usize {
    end_where(bytes, from, |b| ends_text(b, tuple))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string_stop_finds_the_first_quote_backslash_or_control_character() {
        let text = b"abcdefghijklmnop\"q";
        assert_eq!(string_stop(text, 0, b'"'), 16);
        assert_eq!(string_stop(text, 17, b'"'), 18);
        assert_eq!(string_stop(b"0123456789\\", 3, b'"'), 10);
        assert_eq!(string_stop(b"0123\n", 0, b'"'), 4);
        // The quote asked for, not the other one.
        assert_eq!(string_stop(b"it\"s 'x'", 0, b'\''), 5);
        // Bytes above 0x7f are text (the high bit must not look like a match).
        assert_eq!(string_stop("éééééééé\"".as_bytes(), 0, b'"'), 16);
        for n in 0..20 {
            let mut text = vec![b'a'; n];
            text.push(b'"');
            assert_eq!(string_stop(&text, 0, b'"'), n);
        }
    }

    #[test]
    fn string_stop_finds_each_special_byte_wherever_it_is() {
        let text = "abcdefghijklmnopqrstuvwxyz0123456789";
        for at in 0..text.len() {
            for special in [b'"', b'\\', b'\n', 0x1f, 0] {
                let mut bytes = text.as_bytes().to_vec();
                bytes[at] = special;
                for from in 0..=at {
                    assert_eq!(string_stop(&bytes, from, b'"'), at, "{at} {special} {from}");
                }
                // A byte above 0x7f is not special (UTF-8 continuation and lead bytes).
                bytes[at] = 0xc3;
                assert_eq!(string_stop(&bytes, 0, b'"'), bytes.len());
            }
        }
    }

    #[test]
    fn string_end_honours_escapes() {
        assert_eq!(string_end(br#"a\"b" x"#, 0, b'"'), Some(5));
        assert_eq!(string_end(br#"a\\"#, 0, b'"'), None);
        assert_eq!(string_end(br#"a\"#, 0, b'"'), None);
        assert_eq!(string_end(b"it's' x", 0, b'\''), Some(3));
    }

    #[test]
    fn runs_end_where_their_bytes_do() {
        assert_eq!(number_end(b"-1.5e+3,", 0), 7);
        assert_eq!(space_end(b" \t\r\nx", 0), 4);
        assert_eq!(word_end(b"None}", 0, Syntax::STRICT), 4);
        assert_eq!(word_end(b"ok)", 0, Syntax::STRICT), 3);
        assert_eq!(word_end(b"ok)", 0, Syntax::LENIENT), 2);
        assert_eq!(word_end(b"don't go", 0, Syntax::LENIENT), 5);
    }

    #[test]
    fn insignificant_bytes_are_skipped() {
        let text = b" // a\n /* b */\t# c\n x";
        assert_eq!(skip_insignificant(text, 0, Syntax::STRICT), 1);
        assert_eq!(skip_insignificant(text, 0, Syntax::LENIENT), 15);
        let hash = Syntax {
            hash_comments: true,
            ..Syntax::LENIENT
        };
        assert_eq!(skip_insignificant(text, 0, hash), 20);
        assert_eq!(skip_insignificant(b"/* open", 0, Syntax::LENIENT), 7);
        assert_eq!(skip_insignificant(b" /x", 0, Syntax::LENIENT), 1);
        assert_eq!(skip_insignificant(b" /", 0, Syntax::LENIENT), 1);
        assert_eq!(skip_insignificant(b"/**//**/ \0 x", 0, Syntax::LENIENT), 11);
    }

    #[test]
    fn name_bytes() {
        let names: Vec<u8> = (0..=255u8).filter(|&b| is_name_byte(b)).collect();
        let mut want: Vec<u8> = b"$-_".to_vec();
        want.extend(b'0'..=b'9');
        want.extend(b'A'..=b'Z');
        want.extend(b'a'..=b'z');
        want.sort_unstable();
        assert_eq!(names, want);
    }

    #[test]
    fn number_starts() {
        let starts: Vec<u8> = (0..=255u8).filter(|&b| starts_number(b)).collect();
        assert_eq!(starts, b"+-.0123456789");
    }

    #[test]
    fn unquoted_text_ends_at_a_delimiter_or_the_end_of_the_line() {
        assert_eq!(text_end(b"hello world, x", 0, false), 11);
        assert_eq!(text_end(b"f(x)}", 0, false), 4);
        assert_eq!(text_end(b"f(x)}", 0, true), 3);
        assert_eq!(text_end(b"a\r\nb", 0, false), 1);
        assert_eq!(text_end(b"tr", 0, false), 2);
        assert_eq!(text_end(b"ab", 5, false), 5);
        let ends: Vec<u8> = (0..=255u8).filter(|&b| ends_text(b, false)).collect();
        assert_eq!(ends, b"\n\r,:[]{}");
        let in_tuple: Vec<u8> = (0..=255u8).filter(|&b| ends_text(b, true)).collect();
        assert_eq!(in_tuple, b"\n\r),:[]{}");
        // Quotes, spaces and slashes are text.
        for b in *b"\"' /#\t" {
            assert!(!ends_text(b, true), "{b}");
        }
    }
}

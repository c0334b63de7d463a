//! Quotes: which quote opens a string at a byte, which byte sequences close it, where its plain text
//! stops, and what is irregular about it. The one account of quotes for the lexer's state machine
//! ([`super::Lexer`]) and for a reader holding the whole text (the lenient parser), which decides on
//! its own whether a quote that may close a string does (`"he said "hi" ok"`). Also where a key and
//! its colon begin ([`key_at`]) and whether an object's members go on after its brace
//! ([`members_follow`]), the look-aheads of every reader that meets a key.

use super::{is_name_byte, space_end, string_stop, Irregular, Syntax};

/// The quote that opened a string.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quote {
    /// `"`.
    Double,
    /// `'`.
    Single,
    /// `“` or `”`.
    Smart,
    /// `‘`.
    SmartSingle,
}

/// The first byte of every smart quote's UTF-8 (`E2 80`, then `98` `‘`, `99` `’`, `9C` `“`, `9D`
/// `”`).
pub(super) const SMART_FIRST: u8 = 0xE2;
/// The second byte of every smart quote's UTF-8.
pub(super) const SMART_SECOND: u8 = 0x80;

impl Quote {
    /// The quote that opens a string at `bytes[at]`, of the kinds `syntax` reads (`'` with
    /// [`Syntax::single_quotes`], `“`, `”` and `‘` with [`Syntax::smart_quotes`]); `’` opens none.
    /// Where a `'` opens a string (not inside a word, `don't`) is the reader's to decide.
    #[inline]
    pub fn at(bytes: &[u8], at: usize, syntax: Syntax) -> Option<Quote> {
        match *bytes.get(at)? {
            b'"' => Some(Quote::Double),
            b'\'' if syntax.single_quotes => Some(Quote::Single),
            SMART_FIRST if syntax.smart_quotes && bytes.get(at + 1) == Some(&SMART_SECOND) => {
                Quote::smart(*bytes.get(at + 2)?)
            }
            _ => None,
        }
    }

    /// The smart quote that opens a string, by the last byte of its UTF-8 (after `E2 80`): `“` and
    /// `”` a [`Quote::Smart`], `‘` a [`Quote::SmartSingle`]; `’` (an apostrophe) opens none.
    #[inline]
    pub fn smart(last: u8) -> Option<Quote> {
        match last {
            0x9C | 0x9D => Some(Quote::Smart),
            0x98 => Some(Quote::SmartSingle),
            _ => None,
        }
    }

    /// The opening quote's width in bytes.
    #[inline]
    pub fn width(self) -> usize {
        match self {
            Quote::Double | Quote::Single => 1,
            Quote::Smart | Quote::SmartSingle => 3,
        }
    }

    /// For `"` and `'`, the one byte that closes the string (whose plain text [`string_stop`] skips
    /// eight bytes at a time); `None` for smart quotes, which several sequences close.
    #[inline]
    pub fn plain(self) -> Option<u8> {
        match self {
            Quote::Double => Some(b'"'),
            Quote::Single => Some(b'\''),
            Quote::Smart | Quote::SmartSingle => None,
        }
    }

    /// The single byte that closes the string (`"`, `'`), or for smart quotes the `"` a smart
    /// double string also closes on (none for `‘`).
    #[inline]
    pub(super) fn plain_closer(self) -> Option<u8> {
        match self {
            Quote::Double | Quote::Smart => Some(b'"'),
            Quote::Single => Some(b'\''),
            Quote::SmartSingle => None,
        }
    }

    /// Whether `E2 80 <last>` closes the string: `”` or `“` a smart double one, `’` or `‘` a smart
    /// single one.
    #[inline]
    pub(super) fn smart_closer(self, last: u8) -> bool {
        match self {
            Quote::Smart => matches!(last, 0x9C | 0x9D),
            Quote::SmartSingle => matches!(last, 0x98 | 0x99),
            Quote::Double | Quote::Single => false,
        }
    }

    /// The width of a quote at `bytes[at]` that may close a string this quote opened (`None` if no
    /// closer is there): `"` closes `"`; `'` closes `'`; `”`, `“` or `"` close `“`; `’` or `‘`
    /// close `‘`.
    #[inline]
    pub fn closer_at(self, bytes: &[u8], at: usize) -> Option<usize> {
        let b = *bytes.get(at)?;
        if self.plain_closer() == Some(b) {
            return Some(1);
        }
        let smart = b == SMART_FIRST
            && bytes.get(at + 1) == Some(&SMART_SECOND)
            && bytes
                .get(at + 2)
                .is_some_and(|&last| self.smart_closer(last));
        smart.then_some(3)
    }

    /// Just past the first quote at or after `from` that may close a string this quote opened
    /// ([`Quote::closer_at`]), escapes not honoured; `None` when none comes. One pass that stops
    /// there.
    pub fn first_closer_end(self, bytes: &[u8], from: usize) -> Option<usize> {
        let rest = bytes.get(from..)?;
        if let Some(quote) = self.plain() {
            return memchr::memchr(quote, rest).map(|i| from + i + 1);
        }
        // A smart string's closers all begin with `"` or a smart quote's lead byte.
        let mut at = from;
        loop {
            at += memchr::memchr2(b'"', SMART_FIRST, bytes.get(at..)?)?;
            if let Some(width) = self.closer_at(bytes, at) {
                return Some(at + width);
            }
            at += 1;
        }
    }

    /// Where the plain text of a string this quote opened stops, at or after `from`: at a byte that
    /// is or may begin a closer, a backslash or a control character (`bytes.len()` if none). Eight
    /// bytes at a time for `"` and `'`.
    #[inline]
    pub fn text_stop(self, bytes: &[u8], from: usize) -> usize {
        if let Some(quote) = self.plain() {
            return string_stop(bytes, from, quote);
        }
        let rest = bytes.get(from..).unwrap_or_default();
        from + rest
            .iter()
            .position(|&b| b == SMART_FIRST || b == b'"' || b == b'\\' || b < 0x20)
            .unwrap_or(rest.len())
    }

    /// What is irregular about a string in this quote, against RFC 8259 (nothing for `"`).
    #[inline]
    pub fn irregular(self) -> Option<Irregular> {
        match self {
            Quote::Double => None,
            Quote::Single => Some(Irregular::SingleQuotes),
            Quote::Smart | Quote::SmartSingle => Some(Irregular::SmartQuotes),
        }
    }

    /// The quote's name, for a message: `double`, `single`, `smart`, `smart single`.
    pub fn name(self) -> &'static str {
        match self {
            Quote::Double => "double",
            Quote::Single => "single",
            Quote::Smart => "smart",
            Quote::SmartSingle => "smart single",
        }
    }
}

/// Whether a key and its colon begin at `at`: a string opened by a quote `syntax` reads (to its
/// first closer, escapes not honoured: [`Quote::first_closer_end`]) or a bare name
/// ([`is_name_byte`]: `first_name`, `$ref`), then whitespace, then `:`. With where the look-ahead
/// stopped, for a caller that bounds what it reads: the key, the whitespace after it and the colon,
/// no further.
pub fn key_at(bytes: &[u8], at: usize, syntax: Syntax) -> (bool, usize) {
    let key_end = match Quote::at(bytes, at, syntax) {
        Some(quote) => match quote.first_closer_end(bytes, at + quote.width()) {
            Some(end) => end,
            None => return (false, bytes.len()),
        },
        None => {
            let mut end = at;
            while bytes.get(end).is_some_and(|&b| is_name_byte(b)) {
                end += 1;
            }
            if end == at {
                return (false, at);
            }
            end
        }
    };
    let colon = space_end(bytes, key_end);
    (
        bytes.get(colon) == Some(&b':'),
        colon.saturating_add(1).min(bytes.len()),
    )
}

/// Whether an object's members seem to go on at `at`, after its closing brace: a comma, then a key
/// and its colon ([`key_at`]: `{"a": 1}, "b": 2}`); whitespace around each. With where the
/// look-ahead stopped, as [`key_at`] tells it.
pub fn members_follow(bytes: &[u8], at: usize, syntax: Syntax) -> (bool, usize) {
    let comma = space_end(bytes, at);
    if bytes.get(comma) != Some(&b',') {
        return (false, comma.saturating_add(1).min(bytes.len()));
    }
    key_at(bytes, space_end(bytes, comma + 1), syntax)
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: [Quote; 4] = [
        Quote::Double,
        Quote::Single,
        Quote::Smart,
        Quote::SmartSingle,
    ];

    #[test]
    fn the_quote_that_opens_at_a_byte() {
        let text = "\"'\u{201c}\u{201d}\u{2018}\u{2019}x".as_bytes();
        let found: Vec<Option<Quote>> = [0, 1, 2, 5, 8, 11, 14]
            .iter()
            .map(|&at| Quote::at(text, at, Syntax::LENIENT))
            .collect();
        use Quote::*;
        assert_eq!(
            found,
            [
                Some(Double),
                Some(Single),
                Some(Smart),
                Some(Smart),
                Some(SmartSingle),
                None,
                None
            ]
        );
        // Strict JSON reads `"` alone.
        assert_eq!(Quote::at(text, 0, Syntax::STRICT), Some(Double));
        for at in [1, 2, 5, 8] {
            assert_eq!(Quote::at(text, at, Syntax::STRICT), None, "{at}");
        }
        // A smart quote cut short, or past the end: none.
        assert_eq!(Quote::at(&[0xE2, 0x80], 0, Syntax::LENIENT), None);
        assert_eq!(Quote::at(b"", 0, Syntax::LENIENT), None);
        assert_eq!(Quote::at(b"\"", 1, Syntax::LENIENT), None);
        for q in ALL {
            let opening = match q {
                Double => "\"",
                Single => "'",
                Smart => "\u{201c}",
                SmartSingle => "\u{2018}",
            };
            assert_eq!(Quote::at(opening.as_bytes(), 0, Syntax::LENIENT), Some(q));
            assert_eq!(q.width(), opening.len());
        }
    }

    #[test]
    fn which_sequences_close_each_quote() {
        let closers = ["\"", "'", "\u{201c}", "\u{201d}", "\u{2018}", "\u{2019}"];
        let table: [(Quote, [bool; 6]); 4] = [
            (Quote::Double, [true, false, false, false, false, false]),
            (Quote::Single, [false, true, false, false, false, false]),
            (Quote::Smart, [true, false, true, true, false, false]),
            (Quote::SmartSingle, [false, false, false, false, true, true]),
        ];
        for (quote, closes) in table {
            for (closer, closes) in closers.iter().zip(closes) {
                let text = format!("x{closer}y");
                let want = closes.then_some(closer.len());
                assert_eq!(
                    quote.closer_at(text.as_bytes(), 1),
                    want,
                    "{quote:?} {closer}"
                );
                // Cut anywhere inside, a smart closer is none.
                for cut in 2..closer.len() + 1 {
                    let short = &text.as_bytes()[..cut];
                    assert_eq!(quote.closer_at(short, 1), None, "{quote:?} {closer} {cut}");
                }
            }
            assert_eq!(quote.closer_at(b"x", 5), None);
        }
    }

    #[test]
    fn the_first_closer_ends_the_search() {
        let smart = Quote::Smart;
        assert_eq!(
            smart.first_closer_end("ab\u{201d}c\"".as_bytes(), 0),
            Some(5)
        );
        assert_eq!(smart.first_closer_end(b"ab'c\"", 0), Some(5));
        assert_eq!(smart.first_closer_end("a\u{2019}b".as_bytes(), 0), None);
        assert_eq!(smart.first_closer_end(b"", 0), None);
        assert_eq!(smart.first_closer_end(b"\"x\"", 1), Some(3));
        assert_eq!(smart.first_closer_end(b"x", 4), None);
        assert_eq!(Quote::Double.first_closer_end(b"a'b\"c\"", 0), Some(4));
        assert_eq!(Quote::Single.first_closer_end(b"a\"b'c", 0), Some(4));
        assert_eq!(
            Quote::SmartSingle.first_closer_end("a\"'\u{201d}\u{2019}".as_bytes(), 0),
            Some(9)
        );
        // The same as trying every closer at every byte.
        let text = "a\"b'c\u{201c}d\u{201d}e\u{2018}f\u{2019}g\u{2014}".as_bytes();
        for quote in ALL {
            for from in 0..=text.len() {
                let slow = (from..text.len()).find_map(|at| Some(at + quote.closer_at(text, at)?));
                assert_eq!(quote.first_closer_end(text, from), slow, "{quote:?} {from}");
            }
        }
    }

    #[test]
    fn plain_text_stops_where_a_closer_escape_or_control_character_may_be() {
        let text = "ab\u{2014}cd'ef\"gh\\ij\nk".as_bytes();
        assert_eq!(Quote::Double.text_stop(text, 0), 10);
        assert_eq!(Quote::Single.text_stop(text, 0), 7);
        // Smart strings stop at each lead byte of a smart quote (an em dash shares it) and at `"`.
        assert_eq!(Quote::Smart.text_stop(text, 0), 2);
        assert_eq!(Quote::Smart.text_stop(text, 3), 10);
        assert_eq!(Quote::SmartSingle.text_stop(text, 11), 13);
        assert_eq!(Quote::Smart.text_stop(text, 16), 16);
        assert_eq!(Quote::Smart.text_stop(b"plain", 0), 5);
        // A closer is never skipped.
        for quote in ALL {
            for from in 0..=text.len() {
                let stop = quote.text_stop(text, from);
                assert!(stop >= from && stop <= text.len());
                assert!((from..stop).all(|at| quote.closer_at(text, at).is_none()));
                assert!((from..stop).all(|at| text[at] != b'\\' && text[at] >= 0x20));
            }
        }
    }

    #[test]
    fn plain_quotes_and_what_is_irregular() {
        assert_eq!(Quote::Double.plain(), Some(b'"'));
        assert_eq!(Quote::Single.plain(), Some(b'\''));
        assert_eq!(Quote::Smart.plain(), None);
        assert_eq!(Quote::SmartSingle.plain(), None);
        assert_eq!(Quote::Double.irregular(), None);
        assert_eq!(Quote::Single.irregular(), Some(Irregular::SingleQuotes));
        assert_eq!(Quote::Smart.irregular(), Some(Irregular::SmartQuotes));
        assert_eq!(Quote::SmartSingle.irregular(), Some(Irregular::SmartQuotes));
        let names: Vec<&str> = ALL.iter().map(|q| q.name()).collect();
        assert_eq!(names, ["double", "single", "smart", "smart single"]);
        assert_eq!(Quote::smart(0x9C), Some(Quote::Smart));
        assert_eq!(Quote::smart(0x9D), Some(Quote::Smart));
        assert_eq!(Quote::smart(0x98), Some(Quote::SmartSingle));
        assert_eq!(Quote::smart(0x99), None);
    }
}

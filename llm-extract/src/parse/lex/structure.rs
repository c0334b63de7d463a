//! Reading for structure alone ([`Lexer::next_structure`]): brackets and strings, nothing else
//! ([`Lexer::next_bracket`]: brackets alone), for a reader that follows a value's extent (the framer).
//!
//! With nothing to record and no comments or smart quotes to read, two tight loops do the work of
//! the token machinery: between tokens, a byte loop that hands a bracket out at once, opens a string
//! at its quote and keeps only the last significant byte; inside a `"` or `'` string, a vector
//! search from one quote, backslash or newline stop to the next (a control character is text here:
//! the structure does not depend on it). No token is built, queued or handed out for whitespace,
//! numbers, words or punctuation, and a string's token is built at its closing quote. Both loops keep the lexer's own state (inside a string, a pending
//! escape, the last significant byte), so a value may still arrive cut anywhere; a lexer read this
//! way is to be read this way alone (its whitespace, numbers and words are not tracked as tokens).

use super::{Bracket, Esc, Lexer, Next, Quote, State, Token, TokenKind};

impl Lexer {
    /// Like [`Lexer::next`], but hands out only brackets and strings (and newline stops): for a
    /// reader that follows a value's extent and nothing else (the framer). Without irregularities to
    /// record and with no comments or smart quotes to read, the bytes between brackets and strings are
    /// passed over in a tight loop (only the last significant byte is kept), so a lexer read this way
    /// is to be read this way alone.
    pub fn next_structure(&mut self, buf: &[u8], base: usize) -> Next {
        self.structure::<true>(buf, base)
    }

    /// Like [`Lexer::next_structure`], but strings too are passed over: only brackets (and newline
    /// stops) are handed out. For a reader inside a value, whose strings cannot end it. The two may be
    /// mixed on one lexer (a string already open when this is called is read to its end and dropped).
    pub fn next_bracket(&mut self, buf: &[u8], base: usize) -> Next {
        self.structure::<false>(buf, base)
    }

    /// [`Lexer::next_structure`] (`STRINGS`) or [`Lexer::next_bracket`].
    #[inline(always)]
    fn structure<const STRINGS: bool>(&mut self, buf: &[u8], base: usize) -> Next {
        let syntax = self.syntax;
        if syntax.report || syntax.comments || syntax.hash_comments || syntax.smart_quotes {
            return self.structure_by_tokens::<STRINGS>(buf, base);
        }
        loop {
            self.steps += 1;
            if self.ready[0].is_some() || self.newline.is_some() {
                // Left by a token-by-token read: hand those out first.
                return self.structure_by_tokens::<STRINGS>(buf, base);
            }
            let Some(i) = self.offset.checked_sub(base) else {
                return Next::More;
            };
            let found = match self.state {
                State::Between => self.between::<STRINGS>(buf, base, i),
                State::Str {
                    quote: quote @ (Quote::Double | Quote::Single),
                    esc: esc @ (Esc::None | Esc::Backslash),
                    escapes,
                    ..
                } => self.plain_string(buf, base, i, quote, esc == Esc::Backslash, escapes),
                _ => return self.structure_by_tokens::<STRINGS>(buf, base),
            };
            match found {
                Next::Token(Token {
                    kind: TokenKind::String { .. },
                    ..
                }) if !STRINGS => {}
                next => return next,
            }
        }
    }

    /// [`Lexer::next_structure`] (`STRINGS`) or [`Lexer::next_bracket`] through [`Lexer::next`],
    /// dropping every other token.
    fn structure_by_tokens<const STRINGS: bool>(&mut self, buf: &[u8], base: usize) -> Next {
        loop {
            match self.next(buf, base) {
                Next::Token(Token {
                    kind:
                        TokenKind::Space
                        | TokenKind::Colon
                        | TokenKind::Comma
                        | TokenKind::Number { .. }
                        | TokenKind::Word { .. }
                        | TokenKind::Comment,
                    ..
                }) => {}
                Next::Token(Token {
                    kind: TokenKind::String { .. },
                    ..
                }) if !STRINGS => {}
                other => return other,
            }
        }
    }

    /// Between tokens from `buf[i]`: a bracket or a newline stop, a string read at once from its
    /// quote (or what stopped it: see [`Lexer::plain_string`]), or [`Next::More`] at the end of `buf`.
    /// Without `STRINGS`, a string that closes in `buf` is passed over here and the loop goes on.
    #[inline(always)]
    fn between<const STRINGS: bool>(&mut self, buf: &[u8], base: usize, mut i: usize) -> Next {
        let syntax = self.syntax;
        let stops = self.newline_stops;
        while let Some(&b) = buf.get(i) {
            let kind = match b {
                b'"' | b'\'' => {
                    let opens = b == b'"'
                        || (syntax.single_quotes
                            && (!self.seen
                                || matches!(self.last, b'{' | b'[' | b',' | b':')
                                || (syntax.parens && self.last == b'(')));
                    if !opens {
                        // A `'` inside a word (`don't`).
                        self.last = b;
                        self.seen = true;
                        i += 1;
                        continue;
                    }
                    let quote = if b == b'"' {
                        Quote::Double
                    } else {
                        Quote::Single
                    };
                    self.open_plain(quote, base + i);
                    match self.plain_string(buf, base, i + 1, quote, false, false) {
                        Next::Token(token) if !STRINGS => {
                            i = token.end - base;
                            continue;
                        }
                        next => return next,
                    }
                }
                b'{' => TokenKind::Open(Bracket::Curly),
                b'[' => TokenKind::Open(Bracket::Square),
                b'}' => TokenKind::Close(Bracket::Curly),
                b']' => TokenKind::Close(Bracket::Square),
                b'(' if syntax.parens => TokenKind::Open(Bracket::Round),
                b')' if syntax.parens => TokenKind::Close(Bracket::Round),
                b'\n' if stops => {
                    self.offset = base + i + 1;
                    return Next::Newline(base + i);
                }
                b' ' | b'\t' | b'\r' | b'\n' => {
                    i += 1;
                    continue;
                }
                0 if syntax.nul_is_space => {
                    i += 1;
                    continue;
                }
                _ => {
                    self.last = b;
                    self.seen = true;
                    i += 1;
                    continue;
                }
            };
            let at = base + i;
            self.offset = at + 1;
            self.start = at;
            self.last = b;
            self.seen = true;
            return Next::Token(Token {
                kind,
                start: at,
                end: at + 1,
                cut: false,
            });
        }
        self.offset = base + i;
        Next::More
    }

    /// Opens a `"` or `'` string whose quote is at `at`.
    #[inline]
    fn open_plain(&mut self, quote: Quote, at: usize) {
        self.start = at;
        self.offset = at + 1;
        self.state = State::Str {
            quote,
            esc: Esc::None,
            closer: 0,
            escapes: false,
        };
    }

    /// Inside a `"` or `'` string from `buf[i]` (`escaped`: just after a backslash): its token at
    /// the closing quote, a newline stop, or [`Next::More`] at the end of `buf`.
    #[inline(always)]
    fn plain_string(
        &mut self,
        buf: &[u8],
        base: usize,
        mut i: usize,
        quote: Quote,
        escaped: bool,
        mut escapes: bool,
    ) -> Next {
        let q = if quote == Quote::Double { b'"' } else { b'\'' };
        let stops = self.newline_stops;
        let mut pending = escaped;
        let next = loop {
            if pending {
                // The escaped byte is text, whatever it is (`\u` digits are text too).
                let Some(&b) = buf.get(i) else {
                    break Next::More;
                };
                pending = false;
                i += 1;
                if b == b'\n' && stops {
                    break Next::Newline(base + i - 1);
                }
            }
            let Some(stop) = text_stop(buf, i, q, stops) else {
                i = buf.len();
                break Next::More;
            };
            match buf.get(stop) {
                None => {
                    i = buf.len();
                    break Next::More;
                }
                Some(b'\\') => {
                    escapes = true;
                    pending = true;
                    i = stop + 1;
                }
                Some(&b) if b == q => {
                    let end = base + stop + 1;
                    self.offset = end;
                    self.state = State::Between;
                    self.last = b'"';
                    self.seen = true;
                    return Next::Token(Token {
                        kind: TokenKind::String { quote, escapes },
                        start: self.start,
                        end,
                        cut: false,
                    });
                }
                Some(_) => {
                    // A newline, with newline stops on.
                    i = stop + 1;
                    break Next::Newline(base + stop);
                }
            }
        };
        self.offset = base + i;
        self.state = State::Str {
            quote,
            esc: if pending { Esc::Backslash } else { Esc::None },
            closer: 0,
            escapes,
        };
        next
    }
}

/// Where the first `quote`, `\\` or (with `newlines`) newline at or after `from` is: the bytes the
/// structure-only reading stops at inside a string (a control character is text to it). The vector
/// search pays off from about 16 bytes; a small chunk of a stream is looked at byte by byte.
#[inline]
fn text_stop(buf: &[u8], from: usize, quote: u8, newlines: bool) -> Option<usize> {
    let rest = buf.get(from..)?;
    let found = if rest.len() < 16 {
        rest.iter()
            .position(|&b| b == quote || b == b'\\' || (newlines && b == b'\n'))
    } else if newlines {
        memchr::memchr3(quote, b'\\', b'\n', rest)
    } else {
        memchr::memchr2(quote, b'\\', rest)
    };
    found.map(|at| from + at)
}

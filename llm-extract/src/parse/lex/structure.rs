//! Reading for structure alone ([`Lexer::next_structure`]): brackets and strings, nothing else
//! ([`Lexer::next_bracket`]: brackets alone), for a reader that follows a value's extent (the framer).
//!
//! With nothing to record and no comments or smart quotes to read, two tight loops do the work of
//! the token machinery: between tokens, a byte loop that hands a bracket out at once and keeps only
//! the last significant byte (in a local, written back when the loop ends); inside a `"` or `'`
//! string, a skip eight bytes at a time from one quote, backslash or control character to the next
//! ([`string_stop`], the token reader's own), where a control character other than a newline stop is
//! text (the structure does not depend on it). A string that closes in the buffer is read from its
//! quote to its end without touching the lexer's state; only one cut by the end of the buffer or a
//! newline stop leaves it inside the string. No token is built, queued or handed out for whitespace,
//! numbers, words or punctuation, and a string's token is built at its closing quote. Both loops
//! keep the lexer's own state (inside a string, a pending escape, the last significant byte), so a
//! value may still arrive cut anywhere; a lexer read this way is to be read this way alone (its
//! whitespace, numbers and words are not tracked as tokens).

use super::{string_stop, Bracket, Esc, Lexer, Next, Quote, State, Token, TokenKind};

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
        if syntax.report
            || syntax.comments
            || syntax.hash_comments
            || syntax.smart_quotes
            || self.ready[0].is_some()
            || self.newline.is_some()
        {
            // What only the token machinery reads, or tokens a token-by-token read left: through it.
            return self.structure_by_tokens::<STRINGS>(buf, base);
        }
        self.steps += 1;
        let Some(i) = self.offset.checked_sub(base) else {
            return Next::More;
        };
        match self.state {
            State::Between => self.between::<STRINGS>(buf, base, i),
            State::Str {
                quote: quote @ (Quote::Double | Quote::Single),
                esc: esc @ (Esc::None | Esc::Backslash),
                escapes,
                ..
            } => {
                // A string the last call left open: read on to its end.
                let q = if quote == Quote::Double { b'"' } else { b'\'' };
                let text = string_rest(
                    buf,
                    i,
                    q,
                    esc == Esc::Backslash,
                    escapes,
                    self.newline_stops,
                );
                match text {
                    Text::Closed { end, escapes } => {
                        self.state = State::Between;
                        self.last = b'"';
                        self.seen = true;
                        if STRINGS {
                            self.offset = base + end;
                            return Next::Token(Token {
                                kind: TokenKind::String { quote, escapes },
                                start: self.start,
                                end: base + end,
                                cut: false,
                            });
                        }
                        self.between::<STRINGS>(buf, base, end)
                    }
                    cut => self.cut_string(quote, base, cut),
                }
            }
            _ => self.structure_by_tokens::<STRINGS>(buf, base),
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
    /// quote (with `STRINGS`; without, a string that closes in `buf` is passed over and the loop goes
    /// on), what stopped a string cut by the end of `buf`, or [`Next::More`] at the end of `buf`. The
    /// last significant byte is kept in a local until the loop ends.
    #[inline(always)]
    fn between<const STRINGS: bool>(&mut self, buf: &[u8], base: usize, mut i: usize) -> Next {
        let syntax = self.syntax;
        let stops = self.newline_stops;
        let mut last = self.last;
        let mut seen = self.seen;
        let next = loop {
            let Some(&b) = buf.get(i) else {
                self.offset = base + i;
                break Next::More;
            };
            let kind = match b {
                b'"' | b'\'' => {
                    let opens = b == b'"'
                        || (syntax.single_quotes
                            && (!seen
                                || matches!(last, b'{' | b'[' | b',' | b':')
                                || (syntax.parens && last == b'(')));
                    if !opens {
                        // A `'` inside a word (`don't`).
                        last = b;
                        seen = true;
                        i += 1;
                        continue;
                    }
                    let quote = if b == b'"' {
                        Quote::Double
                    } else {
                        Quote::Single
                    };
                    match string_rest(buf, i + 1, b, false, false, stops) {
                        Text::Closed { end, escapes } => {
                            last = b'"';
                            seen = true;
                            if STRINGS {
                                self.start = base + i;
                                self.offset = base + end;
                                break Next::Token(Token {
                                    kind: TokenKind::String { quote, escapes },
                                    start: base + i,
                                    end: base + end,
                                    cut: false,
                                });
                            }
                            i = end;
                            continue;
                        }
                        cut => {
                            self.start = base + i;
                            break self.cut_string(quote, base, cut);
                        }
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
                    break Next::Newline(base + i);
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
                    last = b;
                    seen = true;
                    i += 1;
                    continue;
                }
            };
            let at = base + i;
            self.offset = at + 1;
            self.start = at;
            last = b;
            seen = true;
            break Next::Token(Token {
                kind,
                start: at,
                end: at + 1,
                cut: false,
            });
        };
        self.last = last;
        self.seen = seen;
        next
    }

    /// Keeps the state of a `"` or `'` string that `cut` stopped before its end (at a newline stop
    /// or the end of the buffer) and says so.
    #[inline]
    fn cut_string(&mut self, quote: Quote, base: usize, cut: Text) -> Next {
        let (offset, escaped, escapes, next) = match cut {
            Text::Newline { at, escapes } => (at + 1, false, escapes, Next::Newline(base + at)),
            Text::More {
                end,
                escaped,
                escapes,
            } => (end, escaped, escapes, Next::More),
            // Not cut: nothing to keep (the callers hand a closed string out themselves).
            Text::Closed { .. } => return Next::More,
        };
        self.offset = base + offset;
        self.state = State::Str {
            quote,
            esc: if escaped { Esc::Backslash } else { Esc::None },
            closer: 0,
            escapes,
        };
        next
    }
}

/// Where the text of a `"` or `'` string stopped ([`string_rest`]), as indices into the buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Text {
    /// At the closing quote; `end` is just past it.
    Closed { end: usize, escapes: bool },
    /// At a newline (newline stops on) at `at`; the string goes on after it.
    Newline { at: usize, escapes: bool },
    /// At the end of the buffer (`end`), just after a backslash if `escaped`.
    More {
        end: usize,
        escaped: bool,
        escapes: bool,
    },
}

/// Reads the text of a string closed by `quote` (`"` or `'`) from `buf[i]` (`escaped`: just after
/// a backslash; `escapes`: a backslash was seen before) to its closing quote, a newline (with
/// `stops`) or the end of `buf`. The plain text between stops is skipped eight bytes at a time
/// ([`string_stop`]); a control character other than a newline stop is text here (the structure does
/// not depend on it), and an escaped byte is text whatever it is.
#[inline(always)]
fn string_rest(
    buf: &[u8],
    mut i: usize,
    quote: u8,
    mut escaped: bool,
    mut escapes: bool,
    stops: bool,
) -> Text {
    loop {
        if escaped {
            let Some(&b) = buf.get(i) else {
                return Text::More {
                    end: buf.len(),
                    escaped: true,
                    escapes,
                };
            };
            escaped = false;
            i += 1;
            if b == b'\n' && stops {
                return Text::Newline { at: i - 1, escapes };
            }
        }
        i = string_stop(buf, i, quote);
        match buf.get(i) {
            None => {
                return Text::More {
                    end: buf.len(),
                    escaped: false,
                    escapes,
                }
            }
            Some(b'\\') => {
                escapes = true;
                escaped = true;
                i += 1;
            }
            Some(&b) if b == quote => {
                return Text::Closed {
                    end: i + 1,
                    escapes,
                }
            }
            Some(b'\n') if stops => return Text::Newline { at: i, escapes },
            // Another control character: text.
            Some(_) => i += 1,
        }
    }
}

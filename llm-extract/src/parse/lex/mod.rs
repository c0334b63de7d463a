//! The one JSON lexer of `parse/`: bytes in, tokens with their absolute byte spans out, for every
//! reader of JSON text in the crate.
//!
//! - **Resumable at any byte.** A [`Lexer`] keeps its state between chunks (inside a string, with or
//!   without a pending escape and which quote closes it; inside a number, a word, whitespace or a
//!   comment), so a stream may be fed cut anywhere and the same bytes give the same tokens however
//!   they are chunked. A token is handed out when its last byte is known: a string at its closing
//!   quote, a number, a word or whitespace at the first byte after it (or at [`Lexer::finish`], cut).
//! - **Spans tile the input.** Every byte belongs to exactly one token: [`TokenKind::Space`] covers
//!   whitespace, so the spans follow each other without gap or overlap.
//! - **One syntax to a lexer.** [`Syntax::STRICT`] reads RFC 8259 (a `'` or a `/` is a word byte);
//!   [`Syntax::LENIENT`] also reads single and smart quotes, `//` and `/* */` comments, `( )` and NUL
//!   bytes as whitespace, and reports every irregularity it saw as data ([`Irregularity`]: single
//!   quotes, comments, bare words, literals in another spelling via `literal`, number forms, invalid
//!   escapes, raw control characters, cut-off ends), so a reader does not rediscover them.
//! - **Per byte or per token.** [`Lexer::next`] runs over a buffer and returns the next token (or a
//!   newline stop, for a reader that counts lines); [`Lexer::step`] takes one byte and says what it
//!   was ([`Class`]), for a reader that looks at every byte anyway. Both share the one state machine.
//! - **Fast.** The token iterator skips a string's text eight bytes at a time and runs of
//!   whitespace, number and word bytes in tight loops (module `scan`); a reader holding the whole text
//!   may call those primitives directly ([`string_stop`], [`string_end`], [`number_end`],
//!   [`word_end`], [`space_end`], [`skip_insignificant`]).
//! - **Each lexical fact written once.** Quotes (module `quote`): which opens at a byte
//!   ([`Quote::at`]), which sequences close it ([`Quote::closer_at`], [`Quote::first_closer_end`])
//!   and where its plain text stops ([`Quote::text_stop`]). Comments (module `comment`): one state
//!   machine resumable at any byte ([`Comment`]), kept by the lexer as its comment state and by a
//!   reader fed in chunks between them, and run whole by [`comment_at`]. Unquoted text, which may
//!   hold spaces, ends at [`ends_text`]; a number begins at [`starts_number`]; an unquoted key's
//!   name is made of [`is_name_byte`]s. A parser reading the text its own way calls these rather
//!   than knowing the bytes itself.
//!
//! Readers: the framer (`frame`: where each value begins and ends, through [`Lexer::next_structure`]
//! and [`Lexer::next_bracket`], module `structure`), the loop detector (`extract::loops`, per byte) and the confidence scan (`extract::confidence`, spans of strings and scalars) read its
//! tokens; the lenient parser (`lenient`: quotes, comments, unquoted text, runs), the partial parser
//! (`partial`: the comment machine, unquoted text, runs) and the typed reader (`typed::reader`:
//! runs) read with its primitives.
//!
//! Linear: every step of [`Lexer::next`] consumes a byte or hands out a token or a stop, and a byte
//! completes at most two tokens ([`Lexer::steps`] counts them for the tests).

mod comment;
mod quote;
mod scan;
mod structure;
#[cfg(test)]
mod tests;

use super::literal;
pub use comment::{comment_at, Comment, Found, Read, Step};
pub use quote::{key_at, members_follow, Quote};
use quote::{SMART_FIRST, SMART_SECOND};
pub use scan::{
    ends_text, ends_word, is_name_byte, number_end, skip_insignificant, space_end, starts_number,
    string_end, string_stop, text_end, word_end,
};
use serde_json::Value;

/// What a lexer reads beyond RFC 8259.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Syntax {
    /// `'` opens a string at the start of a value, a key or an element (after nothing, `{`, `[`,
    /// `,`, `:`, or `(` with [`Syntax::parens`]); elsewhere it is a word byte (`don't`).
    pub single_quotes: bool,
    /// `“`, `”` (closed by `”`, `“` or `"`) and `‘` (closed by `’` or `‘`) open strings.
    pub smart_quotes: bool,
    /// `//` to the end of the line and `/* */` are comments (a `/` that starts neither is a word byte).
    pub comments: bool,
    /// `#` at the start of a token comments out the rest of the line.
    pub hash_comments: bool,
    /// `(` and `)` are brackets (a Python tuple).
    pub parens: bool,
    /// NUL bytes are whitespace.
    pub nul_is_space: bool,
    /// Record every irregularity seen ([`Lexer::irregularities`]).
    pub report: bool,
}

impl Syntax {
    /// RFC 8259: double quotes only, no comments; what lies outside the RFC (a bare word, a number
    /// form, an invalid escape, a raw control character) is recorded.
    pub const STRICT: Syntax = Syntax {
        single_quotes: false,
        smart_quotes: false,
        comments: false,
        hash_comments: false,
        parens: false,
        nul_is_space: false,
        report: true,
    };

    /// What models write: every quote, `//` and `/* */` comments, tuples, NUL bytes as whitespace,
    /// every irregularity recorded. (`#` comments are off: `#` starts words such as `#1`.)
    pub const LENIENT: Syntax = Syntax {
        single_quotes: true,
        smart_quotes: true,
        comments: true,
        hash_comments: false,
        parens: true,
        nul_is_space: true,
        report: true,
    };
}

/// A bracket's kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bracket {
    /// `{ }`.
    Curly,
    /// `[ ]`.
    Square,
    /// `( )` ([`Syntax::parens`]).
    Round,
}

/// A word that spells a literal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Literal {
    /// `true`, `True`, ...
    True,
    /// `false`, `FALSE`, ...
    False,
    /// `null`, `None`, `nil`, `undefined`, `NaN`, the infinities.
    Null,
}

/// What a token is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenKind {
    /// Whitespace (and NUL bytes, [`Syntax::nul_is_space`]).
    Space,
    /// An opening bracket.
    Open(Bracket),
    /// A closing bracket.
    Close(Bracket),
    /// `:`.
    Colon,
    /// `,`.
    Comma,
    /// A string, quotes included; `escapes`: it holds a backslash.
    String {
        /// The quote that opened it.
        quote: Quote,
        /// Whether it holds a backslash (without one, its text is the bytes between the quotes).
        escapes: bool,
    },
    /// A run of number bytes that no letter or `_` follows; `json`: it is a number by RFC 8259's
    /// grammar (not `.5`, `+1`, `007`, `1.`, `1.2.3`).
    Number {
        /// Whether RFC 8259's grammar holds.
        json: bool,
    },
    /// Any other run of bytes up to whitespace or a delimiter ([`ends_word`]): a literal in some
    /// spelling, or unquoted text.
    Word {
        /// The literal it spells, in any spelling `literal` knows.
        literal: Option<Literal>,
        /// Whether it is JSON's own spelling (`true`, `false`, `null`).
        exact: bool,
    },
    /// A comment ([`Syntax::comments`], [`Syntax::hash_comments`]).
    Comment,
}

/// One token: what it is and where, in absolute byte offsets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Token {
    /// What it is.
    pub kind: TokenKind,
    /// Its first byte.
    pub start: usize,
    /// Just past its last byte.
    pub end: usize,
    /// Whether the end of the input cut it ([`Lexer::finish`]): a string without its closing quote, a
    /// block comment without `*/`, or a number or word that might have gone on.
    pub cut: bool,
}

/// What is irregular about a stretch of the input, against RFC 8259.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Irregular {
    /// A string in single quotes (the span is the opening quote).
    SingleQuotes,
    /// A string in smart quotes (the span is the opening quote).
    SmartQuotes,
    /// A comment.
    Comment,
    /// A word that spells no literal: unquoted text (or an unquoted key).
    BareWord,
    /// A literal in another spelling than JSON's (`True`, `None`, `NaN`).
    Literal,
    /// A number JSON's grammar refuses (`.5`, `+1`, `007`, `1.2.3`).
    NumberForm,
    /// An escape JSON does not know (`\p`, `\u12`), the span from its backslash.
    InvalidEscape,
    /// A raw control character inside a string.
    ControlCharacter,
    /// A NUL byte read as whitespace.
    Nul,
    /// A `(` or `)`.
    Paren,
    /// A token cut by the end of the input.
    Cut,
}

/// An irregularity and where it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Irregularity {
    /// What.
    pub kind: Irregular,
    /// Its first byte.
    pub start: usize,
    /// Just past its last byte.
    pub end: usize,
}

/// What one byte was to the lexer ([`Lexer::step`]). The first bytes of a smart quote, and a `/`
/// that may open a comment, are classed as word bytes until the bytes after them decide.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// Whitespace between tokens.
    Space,
    /// A bracket, `:` or `,`.
    Punct,
    /// The (last byte of the) quote that opens a string.
    StringOpen,
    /// A byte of a string's text, an escaped character included.
    StringText,
    /// The backslash that starts an escape.
    StringEscape,
    /// The (last byte of the) quote that closes a string.
    StringClose,
    /// A byte of a number.
    Number,
    /// A byte of a word.
    Word,
    /// A byte of a comment.
    Comment,
}

impl Class {
    /// Whether the byte is inside a string: its quotes or its text.
    pub fn in_string(self) -> bool {
        matches!(
            self,
            Class::StringOpen | Class::StringText | Class::StringEscape | Class::StringClose
        )
    }
}

/// What [`Lexer::next`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// A token.
    Token(Token),
    /// A newline at this offset, anywhere (inside a string too), with [`Lexer::stop_at_newlines`]:
    /// the lexer has read it and goes on after it.
    Newline(usize),
    /// The buffer is read: feed more, or [`Lexer::finish`].
    More,
}

/// Where a number is in RFC 8259's grammar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Num {
    Start,
    Minus,
    Zero,
    Int,
    Dot,
    Frac,
    E,
    ESign,
    Exp,
    Bad,
}

impl Num {
    fn step(self, b: u8) -> Num {
        use Num::*;
        match (self, b) {
            (Start, b'-') => Minus,
            (Start | Minus, b'0') => Zero,
            (Start | Minus, b'1'..=b'9') | (Int, b'0'..=b'9') => Int,
            (Zero | Int, b'.') => Dot,
            (Dot | Frac, b'0'..=b'9') => Frac,
            (Zero | Int | Frac, b'e' | b'E') => E,
            (E, b'+' | b'-') => ESign,
            (E | ESign | Exp, b'0'..=b'9') => Exp,
            _ => Bad,
        }
    }

    fn json(self) -> bool {
        matches!(self, Num::Zero | Num::Int | Num::Frac | Num::Exp)
    }
}

/// Where an escape is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Esc {
    None,
    /// Just after the backslash.
    Backslash,
    /// Inside `\uXXXX`, this many digits read.
    Hex(u8),
}

/// The token being read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Between,
    Space,
    Str {
        quote: Quote,
        esc: Esc,
        /// Bytes of a smart closing quote matched (`E2`, `E2 80`).
        closer: u8,
        escapes: bool,
    },
    Number(Num),
    Word,
    /// A comment, or a `/` at the start of a token that may open one ([`Comment::Slash`]: a word
    /// if it opens none).
    Comment(Comment),
    /// The first bytes (`E2`, `E2 80`) of what may be a smart opening quote.
    SmartOpen {
        matched: u8,
    },
}

/// The longest spelling of a literal (`-infinity`).
const PROBE: usize = 9;

/// The JSON lexer: feed it bytes ([`Lexer::next`] over a buffer, or [`Lexer::step`] byte by byte),
/// take its tokens.
///
/// ```
/// use llm_extract::parse::lex::{Irregular, Lexer, Next, Syntax, TokenKind};
///
/// let text = b"{'a': True}";
/// let mut lexer = Lexer::new(Syntax::LENIENT);
/// let mut kinds = Vec::new();
/// while let Next::Token(token) = lexer.next(text, 0) {
///     kinds.push(token.kind);
/// }
/// kinds.extend(lexer.finish().map(|token| token.kind));
/// assert_eq!(kinds.len(), 6);
/// let seen: Vec<Irregular> = lexer.irregularities().iter().map(|i| i.kind).collect();
/// assert_eq!(seen, [Irregular::SingleQuotes, Irregular::Literal]);
/// ```
#[derive(Debug, Clone)]
pub struct Lexer {
    syntax: Syntax,
    state: State,
    /// Where the token being read began.
    start: usize,
    /// The absolute offset of the next byte.
    offset: usize,
    /// The last byte outside strings and whitespace (`"` after a string); 0 before any.
    last: u8,
    /// Whether any byte outside strings and whitespace was read (or [`Lexer::after`] given).
    seen: bool,
    /// The first bytes of the word or number being read (a literal's spelling), and its length so
    /// far (capped past [`PROBE`]).
    probe: [u8; PROBE],
    probe_len: usize,
    /// Tokens completed and not handed out yet (a byte completes at most two).
    ready: [Option<Token>; 2],
    /// A newline read and not reported yet.
    newline: Option<usize>,
    newline_stops: bool,
    found: Vec<Irregularity>,
    steps: usize,
}

impl Lexer {
    /// A lexer of `syntax` before the first byte (offset 0).
    pub fn new(syntax: Syntax) -> Self {
        Lexer {
            syntax,
            state: State::Between,
            start: 0,
            offset: 0,
            last: 0,
            seen: false,
            probe: [0; PROBE],
            probe_len: 0,
            ready: [None, None],
            newline: None,
            newline_stops: false,
            found: Vec::new(),
            steps: 0,
        }
    }

    /// Starts at absolute offset `offset` (the first byte fed is there).
    pub fn at(mut self, offset: usize) -> Self {
        self.offset = offset;
        self.start = offset;
        self
    }

    /// Reads on as if `byte` (a bracket, `,` or `:`) had just been read outside strings: it decides
    /// whether a `'` opens a string.
    pub fn after(mut self, byte: u8) -> Self {
        self.last = byte;
        self.seen = true;
        self
    }

    /// Whether [`Lexer::next`] stops at every newline ([`Next::Newline`]).
    pub fn stop_at_newlines(mut self, on: bool) -> Self {
        self.newline_stops = on;
        self
    }

    /// Turns the newline stops on or off from here.
    pub fn set_newline_stops(&mut self, on: bool) {
        self.newline_stops = on;
    }

    /// The syntax read.
    pub fn syntax(&self) -> Syntax {
        self.syntax
    }

    /// The absolute offset of the next byte to read.
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// The quote of the string being read, if inside one.
    pub fn string(&self) -> Option<Quote> {
        match self.state {
            State::Str { quote, .. } => Some(quote),
            _ => None,
        }
    }

    /// Whether the last byte read was a backslash starting an escape.
    pub fn escaped(&self) -> bool {
        matches!(
            self.state,
            State::Str {
                esc: Esc::Backslash,
                ..
            }
        )
    }

    /// Inside an escape: how many of its bytes after the backslash were read (0 just after the
    /// backslash, 1 after `\u`, 2 to 4 with its hex digits); `None` elsewhere.
    pub fn escape_progress(&self) -> Option<u8> {
        match self.state {
            State::Str {
                esc: Esc::Backslash,
                ..
            } => Some(0),
            State::Str {
                esc: Esc::Hex(n), ..
            } => Some(n + 1),
            _ => None,
        }
    }

    /// A lexer of `syntax` inside a string opened by `quote` at `start`, reading on at `offset` (for
    /// a reader that decided a quote was not the string's end, `"he said "hi" ok"`, and reads on).
    pub fn inside_string(syntax: Syntax, quote: Quote, start: usize, offset: usize) -> Self {
        let mut lexer = Lexer::new(syntax).at(offset);
        lexer.start = start;
        lexer.state = State::Str {
            quote,
            esc: Esc::None,
            closer: 0,
            escapes: false,
        };
        lexer
    }

    /// Whether a number is being read.
    pub fn in_number(&self) -> bool {
        matches!(self.state, State::Number(_))
    }

    /// The last byte read outside strings and whitespace (`"` after a string), 0 before any.
    pub fn last_significant(&self) -> u8 {
        self.last
    }

    /// Where the token being read began, if one is.
    pub fn token_start(&self) -> Option<usize> {
        (self.state != State::Between).then_some(self.start)
    }

    /// The steps [`Lexer::next`] took so far (each consumed bytes or handed out a token or a stop).
    pub fn steps(&self) -> usize {
        self.steps
    }

    /// The irregularities seen so far ([`Syntax::report`]), in the order they were recognised.
    pub fn irregularities(&self) -> &[Irregularity] {
        &self.found
    }

    /// Takes the irregularities seen so far.
    pub fn take_irregularities(&mut self) -> Vec<Irregularity> {
        std::mem::take(&mut self.found)
    }

    /// The next token of `buf` (whose first byte is at absolute offset `base`), reading from
    /// [`Lexer::offset`], which must lie in `base..=base + buf.len()`.
    pub fn next(&mut self, buf: &[u8], base: usize) -> Next {
        loop {
            self.steps += 1;
            if let Some(token) = self.pop() {
                return Next::Token(token);
            }
            if let Some(at) = self.newline.take() {
                return Next::Newline(at);
            }
            let Some(i) = self.offset.checked_sub(base) else {
                return Next::More;
            };
            let Some(&b) = buf.get(i) else {
                return Next::More;
            };
            let run = self.run(buf, i);
            if run > i {
                self.offset = base + run;
                continue;
            }
            if self.closes_plain_string(b) {
                // The closing quote of a plain string, past its text: the token ends here.
                self.offset += 1;
                self.last = b'"';
                self.seen = true;
                self.end_token(self.offset, false);
                continue;
            }
            self.byte(b);
        }
    }

    /// Reads one byte and says what it was. Tokens it completes are not kept (use [`Lexer::next`]
    /// for tokens), nor are newline stops.
    pub fn step(&mut self, b: u8) -> Class {
        let class = self.byte(b);
        if self.ready[0].is_some() {
            self.ready = [None, None];
        }
        self.newline = None;
        class
    }

    /// The end of the input: the token being read, cut ([`Token::cut`]) unless it is whitespace or a
    /// line comment. Call when [`Lexer::next`] returned [`Next::More`].
    pub fn finish(&mut self) -> Option<Token> {
        if let Some(token) = self.pop() {
            return Some(token);
        }
        let cut = !matches!(
            self.state,
            State::Between | State::Space | State::Comment(Comment::Line)
        );
        if self.state == State::Between {
            return None;
        }
        self.end_token(self.offset, cut);
        self.pop()
    }

    fn pop(&mut self) -> Option<Token> {
        let first = self.ready[0].take()?;
        self.ready[0] = self.ready[1].take();
        Some(first)
    }

    /// The end of the run of bytes from `buf[i]` that change nothing but the offset (`i` when the
    /// byte at `i` must be read by [`Lexer::byte`]).
    #[inline]
    fn run(&mut self, buf: &[u8], i: usize) -> usize {
        match self.state {
            State::Str {
                quote,
                esc: Esc::None,
                closer: 0,
                ..
            } => quote.text_stop(buf, i),
            State::Space => {
                let rest = buf.get(i..).unwrap_or_default();
                let stops = self.newline_stops;
                i + rest
                    .iter()
                    .position(|&b| !matches!(b, b' ' | b'\t' | b'\r') && (stops || b != b'\n'))
                    .unwrap_or(rest.len())
            }
            State::Word => {
                let end = word_end(buf, i, self.syntax);
                if end > i {
                    self.probe_extend(buf.get(i..end).unwrap_or_default());
                }
                end
            }
            State::Number(mut num) => {
                let end = number_end(buf, i);
                let run = buf.get(i..end).unwrap_or_default();
                for &b in run {
                    num = num.step(b);
                }
                if end > i {
                    self.state = State::Number(num);
                    self.probe_extend(run);
                }
                end
            }
            State::Comment(comment) => comment.skip(buf, i, self.newline_stops),
            _ => i,
        }
    }

    /// Whether `b` closes the `"` or `'` string being read (no escape pending).
    #[inline]
    fn closes_plain_string(&self, b: u8) -> bool {
        match self.state {
            State::Str {
                quote,
                esc: Esc::None,
                ..
            } => quote.plain() == Some(b),
            _ => false,
        }
    }

    /// Adds the bytes of a run to the word or number being read.
    #[inline]
    fn probe_extend(&mut self, run: &[u8]) {
        if let Some(last) = run.last() {
            self.last = *last;
            self.seen = true;
        }
        if self.probe_len < PROBE {
            let room = PROBE - self.probe_len;
            let take = run.len().min(room);
            if let (Some(slot), Some(bytes)) = (
                self.probe.get_mut(self.probe_len..self.probe_len + take),
                run.get(..take),
            ) {
                slot.copy_from_slice(bytes);
            }
        }
        self.probe_len = self.probe_len.saturating_add(run.len()).min(PROBE + 1);
    }

    /// Reads one byte through the state machine.
    fn byte(&mut self, b: u8) -> Class {
        let at = self.offset;
        self.offset += 1;
        let class = self.transition(b, at);
        match class {
            Class::Punct | Class::Number | Class::Word => self.last = b,
            Class::StringClose => self.last = b'"',
            _ => return self.newline_stop(b, at, class),
        }
        self.seen = true;
        self.newline_stop(b, at, class)
    }

    /// Notes a newline stop at `at` when `b` is a newline and stops are on; `class` passes through.
    #[inline]
    fn newline_stop(&mut self, b: u8, at: usize, class: Class) -> Class {
        if b == b'\n' && self.newline_stops {
            self.newline = Some(at);
        }
        class
    }

    fn transition(&mut self, b: u8, at: usize) -> Class {
        loop {
            match self.state {
                State::Between => return self.begin(b, at),
                State::Space => {
                    if is_space(b, self.syntax) {
                        self.nul(b, at);
                        return Class::Space;
                    }
                    self.end_token(at, false);
                }
                State::Str { .. } => {
                    if let Some(class) = self.string_byte(b, at) {
                        return class;
                    }
                }
                State::Number(num) => {
                    if literal::is_number_byte(b) {
                        self.state = State::Number(num.step(b));
                        self.probe_extend(&[b]);
                        return Class::Number;
                    }
                    if literal::number_goes_on_as_word(b) {
                        // `10px`, `-Infinity`: a word after all.
                        self.state = State::Word;
                    } else {
                        self.end_token(at, false);
                    }
                }
                State::Word => {
                    if !ends_word(b, self.syntax) {
                        self.probe_extend(&[b]);
                        return Class::Word;
                    }
                    self.end_token(at, false);
                }
                State::Comment(mut comment) => match comment.step(b) {
                    Step::Inside => {
                        self.state = State::Comment(comment);
                        return Class::Comment;
                    }
                    Step::Ended => {
                        self.end_token(at + 1, false);
                        return Class::Comment;
                    }
                    // The newline after a line comment.
                    Step::Before => self.end_token(at, false),
                    // A word that begins with `/` (`/path`).
                    Step::NoComment => self.state = State::Word,
                },
                State::SmartOpen { matched } => {
                    let quote = match (matched, b) {
                        (1, SMART_SECOND) => {
                            self.state = State::SmartOpen { matched: 2 };
                            self.probe_extend(&[b]);
                            return Class::Word;
                        }
                        (2, last) => Quote::smart(last),
                        _ => None,
                    };
                    match quote {
                        Some(quote) => {
                            self.open_string(quote, at + 1);
                            return Class::StringOpen;
                        }
                        // Not a quote: the bytes so far begin a word.
                        None => self.state = State::Word,
                    }
                }
            }
        }
    }

    /// The first byte of a token.
    fn begin(&mut self, b: u8, at: usize) -> Class {
        self.start = at;
        let syntax = self.syntax;
        let punct = |lexer: &mut Self, kind: TokenKind| {
            lexer.emit(kind, at, at + 1, false);
            Class::Punct
        };
        match b {
            b'{' => punct(self, TokenKind::Open(Bracket::Curly)),
            b'[' => punct(self, TokenKind::Open(Bracket::Square)),
            b'}' => punct(self, TokenKind::Close(Bracket::Curly)),
            b']' => punct(self, TokenKind::Close(Bracket::Square)),
            b'(' if syntax.parens => punct(self, TokenKind::Open(Bracket::Round)),
            b')' if syntax.parens => punct(self, TokenKind::Close(Bracket::Round)),
            b':' => punct(self, TokenKind::Colon),
            b',' => punct(self, TokenKind::Comma),
            b'"' => {
                self.open_string(Quote::Double, at + 1);
                Class::StringOpen
            }
            b'\''
                if syntax.single_quotes
                    && (!self.seen
                        || matches!(self.last, b'{' | b'[' | b',' | b':')
                        || (syntax.parens && self.last == b'(')) =>
            {
                self.open_string(Quote::Single, at + 1);
                Class::StringOpen
            }
            _ if is_space(b, syntax) => {
                self.nul(b, at);
                self.state = State::Space;
                Class::Space
            }
            _ if starts_number(b) => {
                self.probe_len = 0;
                self.probe_extend(&[b]);
                self.state = State::Number(Num::Start.step(b));
                Class::Number
            }
            _ => match Comment::opened_by(b, syntax) {
                Some(Comment::Line) => {
                    self.state = State::Comment(Comment::Line);
                    Class::Comment
                }
                slash => {
                    self.probe_len = 0;
                    self.probe_extend(&[b]);
                    self.state = match (slash, b) {
                        (Some(comment), _) => State::Comment(comment),
                        (None, SMART_FIRST) if syntax.smart_quotes => {
                            State::SmartOpen { matched: 1 }
                        }
                        (None, _) => State::Word,
                    };
                    Class::Word
                }
            },
        }
    }

    fn open_string(&mut self, quote: Quote, text_start: usize) {
        self.state = State::Str {
            quote,
            esc: Esc::None,
            closer: 0,
            escapes: false,
        };
        if let Some(kind) = quote.irregular() {
            self.irregular(kind, self.start, text_start);
        }
    }

    /// A byte inside a string; `None` when the byte is to be read again in the new state.
    fn string_byte(&mut self, b: u8, at: usize) -> Option<Class> {
        let State::Str {
            quote,
            mut esc,
            mut closer,
            mut escapes,
        } = self.state
        else {
            return None;
        };
        let class = 'class: {
            match esc {
                Esc::Backslash => {
                    esc = match b {
                        b'u' => Esc::Hex(0),
                        _ => {
                            if literal::escape(b, quote == Quote::Single).is_none() {
                                self.irregular(Irregular::InvalidEscape, at - 1, at + 1);
                            }
                            Esc::None
                        }
                    };
                    break 'class Class::StringText;
                }
                Esc::Hex(n) => {
                    esc = Esc::None;
                    if b.is_ascii_hexdigit() {
                        if n < 3 {
                            esc = Esc::Hex(n + 1);
                        }
                        break 'class Class::StringText;
                    }
                    // `\u12"`: the escape is invalid and the byte is read as any other.
                    self.irregular(Irregular::InvalidEscape, at - 2 - usize::from(n), at);
                }
                Esc::None => {}
            }
            match (closer, b) {
                (1, SMART_SECOND) => {
                    closer = 2;
                    break 'class Class::StringText;
                }
                (2, _) if quote.smart_closer(b) => {
                    self.end_token(at + 1, false);
                    return Some(Class::StringClose);
                }
                _ => closer = 0,
            }
            match b {
                b'\\' => {
                    esc = Esc::Backslash;
                    escapes = true;
                    Class::StringEscape
                }
                _ if quote.plain_closer() == Some(b) => {
                    self.state = State::Str {
                        quote,
                        esc,
                        closer,
                        escapes,
                    };
                    self.end_token(at + 1, false);
                    return Some(Class::StringClose);
                }
                SMART_FIRST if quote.plain().is_none() => {
                    closer = 1;
                    Class::StringText
                }
                0..=0x1f => {
                    self.irregular(Irregular::ControlCharacter, at, at + 1);
                    Class::StringText
                }
                _ => Class::StringText,
            }
        };
        self.state = State::Str {
            quote,
            esc,
            closer,
            escapes,
        };
        Some(class)
    }

    /// Records a NUL byte read as whitespace.
    #[inline]
    fn nul(&mut self, b: u8, at: usize) {
        if b == 0 {
            self.irregular(Irregular::Nul, at, at + 1);
        }
    }

    /// Ends the token being read at `end` (exclusive) and hands it out.
    fn end_token(&mut self, end: usize, cut: bool) {
        let kind = match self.state {
            State::Between => return,
            State::Space => TokenKind::Space,
            State::Str { quote, escapes, .. } => TokenKind::String { quote, escapes },
            State::Number(num) => TokenKind::Number { json: num.json() },
            State::Word | State::Comment(Comment::Slash) | State::SmartOpen { .. } => {
                let (literal, exact) = self.literal();
                TokenKind::Word { literal, exact }
            }
            State::Comment(_) => TokenKind::Comment,
        };
        self.state = State::Between;
        self.emit(kind, self.start, end, cut);
    }

    /// The literal the word read spells, and whether in JSON's own spelling.
    fn literal(&self) -> (Option<Literal>, bool) {
        let spelled = self
            .probe
            .get(..self.probe_len)
            .and_then(|bytes| std::str::from_utf8(bytes).ok())
            .and_then(literal::word);
        match spelled {
            Some((Value::Bool(true), exact)) => (Some(Literal::True), exact),
            Some((Value::Bool(false), exact)) => (Some(Literal::False), exact),
            Some((_, exact)) => (Some(Literal::Null), exact),
            None => (None, false),
        }
    }

    fn emit(&mut self, kind: TokenKind, start: usize, end: usize, cut: bool) {
        let irregular = match kind {
            TokenKind::Comment => Some(Irregular::Comment),
            TokenKind::Word { literal: None, .. } => Some(Irregular::BareWord),
            TokenKind::Word { exact: false, .. } => Some(Irregular::Literal),
            TokenKind::Number { json: false } if !cut => Some(Irregular::NumberForm),
            TokenKind::Open(Bracket::Round) | TokenKind::Close(Bracket::Round) => {
                Some(Irregular::Paren)
            }
            _ => None,
        };
        if let Some(kind) = irregular {
            self.irregular(kind, start, end);
        }
        if cut {
            self.irregular(Irregular::Cut, start, end);
        }
        let token = Token {
            kind,
            start,
            end,
            cut,
        };
        let slot = if self.ready[0].is_none() { 0 } else { 1 };
        if let Some(free) = self.ready.get_mut(slot) {
            *free = Some(token);
        }
    }

    #[inline]
    fn irregular(&mut self, kind: Irregular, start: usize, end: usize) {
        if self.syntax.report {
            self.found.push(Irregularity { kind, start, end });
        }
    }
}

/// Whether `b` is whitespace in `syntax`.
#[inline]
fn is_space(b: u8, syntax: Syntax) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n') || (syntax.nul_is_space && b == 0)
}

//! The lenient JSON parser: what models write, read as the JSON they meant, every fix recorded.
//!
//! It is iterative (an explicit stack of open containers, so no input can overflow the call stack),
//! limits nesting, reads each byte a bounded number of times (each look-ahead, deciding whether a
//! quote inside a string ends it or whether a quoted string is a key, stops at the next quote), and
//! stops after one value. Literals, numbers and escapes are read by the table in `literal`, which
//! the partial and typed readers share. What is lexical it takes from the lexer (`lex`): which quote
//! opens at a byte and which bytes may close it ([`lex::Quote`]), where a comment ends
//! ([`lex::comment_at`]), where unquoted text ends and which bytes begin a number, and the skips
//! over number runs, whitespace and a string's plain text; whether a quote that may close a string
//! does, and what a word is in its place, it decides itself.
//!
//! It knows no schema: every fix it makes is one the text itself makes plain. Where only the schema
//! can tell which reading was meant, it reports what it saw and the pipeline decides: a string cut
//! off at the end ([`Fixed::cut`]), members that go on after the object was closed
//! ([`Settings::reopen`]), digit groups (read as text here, as a number by `coerce` where the schema
//! wants one).

use super::lex::{self, Quote, Syntax};
use super::{literal, work, Fix, FixKind};
use serde_json::{Map, Value};

/// How a parse may end.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Settings {
    /// Close what is open at the end of the input instead of failing.
    pub(crate) salvage: bool,
    /// The deepest nesting accepted.
    pub(crate) max_depth: usize,
    /// Read members that follow the root object's closing brace (`{"a": 1}, "b": 2}`) as its own,
    /// recorded as [`FixKind::Reopened`].
    pub(crate) reopen: bool,
}

/// A step of the path to a value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Step {
    Key(String),
    Index(usize),
}

/// With salvage, a string value cut off at the end of the input: left out of the value, for the
/// pipeline to keep where the schema wants free text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Cut {
    /// Where it goes in the value.
    pub(crate) path: Vec<Step>,
    /// Its text as far as it was read whole (no half escape, no half character).
    pub(crate) text: String,
    /// The byte offset in the input where the string began.
    pub(crate) offset: usize,
}

/// A fixed value.
#[derive(Debug)]
pub(crate) struct Fixed {
    pub(crate) value: Value,
    pub(crate) fixes: Vec<Fix>,
    /// With salvage, a string value cut off at the end, left out of `value`.
    pub(crate) cut: Option<Cut>,
    /// Where the value ended in the text parsed (relative to it).
    pub(crate) end: usize,
}

/// Why no value came out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Failure {
    /// Broken beyond fixing.
    Syntax { message: String, offset: usize },
    /// The input ended inside the value (and salvage was off, or nothing could be kept).
    Truncated { offset: usize },
    /// Nothing but whitespace and comments.
    Empty,
}

/// Parses one value from the start of `text`; `base` is the offset of `text` in the whole input.
pub(crate) fn parse(text: &str, base: usize, settings: Settings) -> Result<Fixed, Failure> {
    Parser {
        text,
        bytes: text.as_bytes(),
        pos: 0,
        base,
        settings,
        fixes: Vec::new(),
        bare_key: false,
        cut: None,
    }
    .run()
}

enum Open {
    Object {
        map: Map<String, Value>,
        key: Option<String>,
    },
    /// An array; `tuple`: opened by `(` (a Python tuple), closed by `)`.
    Array(Vec<Value>, bool),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Want {
    /// A value (at the root, or after a colon).
    Value,
    /// An array element or `]`.
    Element {
        after_comma: bool,
    },
    /// An object key or `}`.
    Key {
        after_comma: bool,
    },
    Colon,
    /// `,` or the closing bracket after a value.
    Next,
}

/// Where a string is, which decides how a quote inside it is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Key,
    ObjectValue,
    OtherValue,
}

/// What one token did: set what the parser wants next, finish a value, or meet the end of the
/// input inside a scalar (with what the parser wanted there).
enum Turn {
    Want(Want),
    Value(Value),
    Cut(Want),
}

/// A scalar, or the end of the input inside it.
enum Scalar {
    Done(Value),
    Cut,
}

struct Parser<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
    base: usize,
    settings: Settings,
    fixes: Vec<Fix>,
    /// Whether the last key read was unquoted (then a quoted key right after it shows it was a
    /// stray word).
    bare_key: bool,
    /// The text of a string value the input ended in, and where it began.
    cut: Option<(String, usize)>,
}

/// What the lenient parser reads beyond RFC 8259 (every quote, comments, tuples, NUL bytes).
const SYNTAX: Syntax = Syntax::LENIENT;
const BOM: &[u8] = "\u{feff}".as_bytes();

impl Parser<'_> {
    fn fix(&mut self, kind: FixKind, at: usize, description: impl Into<String>) {
        self.fixes.push(Fix::new(kind, self.base + at, description));
    }

    fn syntax(&self, at: usize, message: impl Into<String>) -> Failure {
        Failure::Syntax {
            message: message.into(),
            offset: self.base + at,
        }
    }

    fn slice(&self, from: usize, to: usize) -> &str {
        self.text.get(from..to).unwrap_or_default()
    }

    /// The parse: one token class a turn, by what the parser wants next, until the root value is
    /// complete or the input ends.
    fn run(mut self) -> Result<Fixed, Failure> {
        let mut stack: Vec<Open> = Vec::new();
        let mut want = Want::Value;
        loop {
            self.skip_insignificant();
            let Some(&b) = self.bytes.get(self.pos) else {
                return self.at_end(stack, want, false);
            };
            let turn = match want {
                Want::Colon => self.after_key(&mut stack, b)?,
                Want::Key { after_comma } => self.in_object(&mut stack, b, after_comma)?,
                Want::Next => self.after_value(&mut stack, b)?,
                Want::Value | Want::Element { .. } => self.value(&mut stack, want, b)?,
            };
            let value = match turn {
                Turn::Want(next) => {
                    want = next;
                    continue;
                }
                Turn::Cut(want) => return self.at_end(stack, want, true),
                Turn::Value(value) => value,
            };
            match self.attach(&mut stack, value) {
                Some(Value::Object(map))
                    if self.settings.reopen && self.members_follow(self.pos) =>
                {
                    // `{"a": 1}, "b": 2}`: the brace closed the object too early.
                    self.fix(
                        FixKind::Reopened,
                        self.pos - 1,
                        "read the members after a closing brace as the object's own",
                    );
                    stack.push(Open::Object { map, key: None });
                    want = Want::Next;
                }
                Some(value) => return Ok(self.done(value)),
                None => want = Want::Next,
            }
        }
    }

    /// After a key, at `b`: its colon; or the key was a stray word before the real one; or a comma
    /// stands where the colon belongs.
    fn after_key(&mut self, stack: &mut [Open], b: u8) -> Result<Turn, Failure> {
        if b == b':' {
            self.pos += 1;
            return Ok(Turn::Want(Want::Value));
        }
        if self.bare_key && self.is_key_at(self.pos) {
            // `{"a": true, COMMENT "b": 1}`: the word was not a key.
            let word = match stack.last_mut() {
                Some(Open::Object { key, .. }) => key.take().unwrap_or_default(),
                _ => String::new(),
            };
            self.fix(
                FixKind::StrayText,
                self.pos,
                format!("removed the stray text {word:?} before a key"),
            );
            return Ok(Turn::Want(Want::Key { after_comma: false }));
        }
        if b == b',' && self.value_follows_comma(self.pos) {
            // `{"key", 105}`: a comma where the colon belongs.
            self.fix(
                FixKind::MissingColon,
                self.pos,
                "read a comma after a key as the missing colon",
            );
            self.pos += 1;
            return Ok(Turn::Want(Want::Value));
        }
        Err(self.syntax(self.pos, "expected ':' after the key"))
    }

    /// In an object where a key goes, at `b`: the object's end, an extra comma, or the key.
    fn in_object(
        &mut self,
        stack: &mut Vec<Open>,
        b: u8,
        after_comma: bool,
    ) -> Result<Turn, Failure> {
        match b {
            b'}' => {
                if after_comma {
                    self.fix(FixKind::ExtraComma, self.pos, "removed a trailing comma");
                }
                self.pos += 1;
                Ok(Turn::Value(self.close(stack)))
            }
            b',' => {
                self.fix(FixKind::ExtraComma, self.pos, "removed an extra comma");
                self.pos += 1;
                Ok(Turn::Want(Want::Key { after_comma }))
            }
            _ => {
                let Some(key) = self.key()? else {
                    return Ok(Turn::Cut(Want::Colon));
                };
                if let Some(Open::Object { key: slot, .. }) = stack.last_mut() {
                    *slot = Some(key);
                }
                Ok(Turn::Want(Want::Colon))
            }
        }
    }

    /// After a value in a container, at `b`: a comma, the container's end, a stray quote, or the
    /// next value with its comma missing.
    fn after_value(&mut self, stack: &mut Vec<Open>, b: u8) -> Result<Turn, Failure> {
        let in_object = matches!(stack.last(), Some(Open::Object { .. }));
        match b {
            b',' => {
                self.pos += 1;
                Ok(Turn::Want(match in_object {
                    true => Want::Key { after_comma: true },
                    false => Want::Element { after_comma: true },
                }))
            }
            b'}' | b']' | b')' => Ok(Turn::Value(self.close_matching(stack, b)?)),
            _ if self.stray_quote_at(self.pos) => {
                // `{"a": 1"}`: a quote after a value, before the comma or bracket.
                self.fix(
                    FixKind::StrayText,
                    self.pos,
                    "removed a stray quote after a value",
                );
                self.pos += self.quote_at(self.pos).map_or(1, Quote::width);
                Ok(Turn::Want(Want::Next))
            }
            _ if starts_value(b) || (in_object && starts_key(b)) => {
                self.fix(FixKind::MissingComma, self.pos, "inserted a missing comma");
                Ok(Turn::Want(match in_object {
                    true => Want::Key { after_comma: false },
                    false => Want::Element { after_comma: false },
                }))
            }
            _ => Err(self.syntax(
                self.pos,
                format!("expected ',' or a closing bracket, found {}", shown(b)),
            )),
        }
    }

    /// Where a value goes (`want` is [`Want::Value`] or [`Want::Element`]), at `b`: an array's end
    /// or an extra comma in an array, a container opening, or a scalar.
    fn value(&mut self, stack: &mut Vec<Open>, want: Want, b: u8) -> Result<Turn, Failure> {
        if let Want::Element { after_comma } = want {
            let tuple = matches!(stack.last(), Some(Open::Array(_, true)));
            if b == if tuple { b')' } else { b']' } {
                if after_comma {
                    self.fix(FixKind::ExtraComma, self.pos, "removed a trailing comma");
                }
                self.pos += 1;
                return Ok(Turn::Value(self.close(stack)));
            }
            if b == b',' {
                self.fix(FixKind::ExtraComma, self.pos, "removed an extra comma");
                self.pos += 1;
                return Ok(Turn::Want(want));
            }
        }
        match b {
            b'{' | b'[' | b'(' => self.open(stack, b),
            b'}' | b']' | b')' | b':' => {
                Err(self.syntax(self.pos, format!("expected a value, found {}", shown(b))))
            }
            _ => {
                let role = match stack.last() {
                    Some(Open::Object { .. }) => Role::ObjectValue,
                    _ => Role::OtherValue,
                };
                let inside = !stack.is_empty();
                let tuple = matches!(stack.last(), Some(Open::Array(_, true)));
                Ok(match self.scalar(role, inside, tuple)? {
                    Scalar::Done(value) => Turn::Value(value),
                    Scalar::Cut => Turn::Cut(want),
                })
            }
        }
    }

    /// The container `opener` opens (`(`: a Python tuple, read as an array), within the depth limit.
    fn open(&mut self, stack: &mut Vec<Open>, opener: u8) -> Result<Turn, Failure> {
        if stack.len() >= self.settings.max_depth {
            return Err(self.syntax(
                self.pos,
                format!(
                    "the JSON nests deeper than {} levels",
                    self.settings.max_depth
                ),
            ));
        }
        if opener == b'(' {
            self.fix(
                FixKind::Tuple,
                self.pos,
                "read a parenthesized tuple as an array",
            );
        }
        self.pos += 1;
        Ok(Turn::Want(match opener {
            b'{' => {
                stack.push(Open::Object {
                    map: Map::new(),
                    key: None,
                });
                Want::Key { after_comma: false }
            }
            _ => {
                stack.push(Open::Array(Vec::new(), opener == b'('));
                Want::Element { after_comma: false }
            }
        }))
    }

    fn done(self, value: Value) -> Fixed {
        Fixed {
            value,
            end: self.pos,
            fixes: self.fixes,
            cut: None,
        }
    }

    /// Puts a finished value into its parent; returns it when it is the root.
    fn attach(&mut self, stack: &mut [Open], value: Value) -> Option<Value> {
        match stack.last_mut() {
            None => Some(value),
            Some(Open::Array(items, _)) => {
                items.push(value);
                None
            }
            Some(Open::Object { map, key }) => {
                if let Some(key) = key.take() {
                    map.insert(key, value);
                }
                None
            }
        }
    }

    fn close(&mut self, stack: &mut Vec<Open>) -> Value {
        match stack.pop() {
            Some(Open::Object { map, .. }) => Value::Object(map),
            Some(Open::Array(items, _)) => Value::Array(items),
            None => Value::Null,
        }
    }

    /// Closes the innermost container `closer` matches, closing (and recording) any inner ones a
    /// model forgot.
    fn close_matching(&mut self, stack: &mut Vec<Open>, closer: u8) -> Result<Value, Failure> {
        let matches = |open: &Open| match open {
            Open::Object { .. } => closer == b'}',
            Open::Array(_, tuple) => closer == if *tuple { b')' } else { b']' },
        };
        let Some(depth) = stack.iter().rposition(matches) else {
            return Err(self.syntax(self.pos, format!("unexpected {}", shown(closer))));
        };
        while stack.len() > depth + 1 {
            self.fix(
                FixKind::Bracket,
                self.pos,
                format!("closed a bracket left open before {}", shown(closer)),
            );
            let inner = self.close(stack);
            let _ = self.attach(stack, inner);
        }
        self.pos += 1;
        Ok(self.close(stack))
    }

    /// The input ended. `cut` says a scalar was cut off.
    fn at_end(mut self, mut stack: Vec<Open>, want: Want, cut: bool) -> Result<Fixed, Failure> {
        let end = self.bytes.len();
        if stack.is_empty() && !cut {
            return Err(Failure::Empty);
        }
        if !self.settings.salvage || stack.is_empty() {
            return Err(Failure::Truncated {
                offset: self.base + end,
            });
        }
        // A string value cut off is left for the pipeline to keep or drop, with its path.
        let cut_string = match self.cut.take() {
            Some((text, offset)) if cut => {
                let mut path: Vec<Step> = Vec::with_capacity(stack.len());
                for open in &stack {
                    match open {
                        Open::Object { key, .. } => {
                            path.push(Step::Key(key.clone().unwrap_or_default()))
                        }
                        Open::Array(items, _) => path.push(Step::Index(items.len())),
                    }
                }
                Some(Cut {
                    path,
                    text,
                    offset: self.base + offset,
                })
            }
            _ => None,
        };
        if cut && cut_string.is_none() {
            self.fix(
                FixKind::DroppedIncomplete,
                end,
                "dropped a value cut off at the end of the input",
            );
        }
        if let Some(Open::Object { key, .. }) = stack.last_mut() {
            if let (Some(key), Want::Colon | Want::Value) = (key.take(), want) {
                if cut_string.is_none() {
                    self.fix(
                        FixKind::DroppedIncomplete,
                        end,
                        format!("dropped the key {key:?}, whose value was cut off"),
                    );
                }
            }
        }
        self.fix(
            FixKind::ClosedTruncated,
            end,
            format!(
                "closed {} bracket(s) left open at the end of the input",
                stack.len()
            ),
        );
        loop {
            let value = self.close(&mut stack);
            match stack.last_mut() {
                None => {
                    let mut fixed = self.done(value);
                    fixed.cut = cut_string;
                    return Ok(fixed);
                }
                Some(Open::Array(..)) => self.fix(
                    FixKind::DroppedIncomplete,
                    end,
                    "dropped an array element cut off at the end of the input",
                ),
                Some(Open::Object { map, key }) => {
                    if let Some(key) = key.take() {
                        map.insert(key, value);
                    }
                }
            }
        }
    }

    /// Skips whitespace, comments, NUL bytes and byte-order marks.
    fn skip_insignificant(&mut self) {
        let mut nul_seen = false;
        loop {
            match self.bytes.get(self.pos) {
                Some(b' ' | b'\t' | b'\n' | b'\r') => {
                    self.pos = lex::space_end(self.bytes, self.pos)
                }
                Some(0) => {
                    if !nul_seen {
                        self.fix(FixKind::ControlCharacter, self.pos, "removed a NUL byte");
                        nul_seen = true;
                    }
                    self.pos += 1;
                }
                Some(b'/') => match lex::comment_at(self.bytes, self.pos, SYNTAX) {
                    Some(comment) => {
                        let removed = match comment.block {
                            true => "removed a /* */ comment",
                            false => "removed a // comment",
                        };
                        self.fix(FixKind::Comment, self.pos, removed);
                        self.pos = comment.end;
                    }
                    None => return,
                },
                Some(0xEF) if self.bytes[self.pos..].starts_with(BOM) => {
                    self.fix(FixKind::Envelope, self.pos, "removed a byte-order mark");
                    self.pos += BOM.len();
                }
                _ => return,
            }
        }
    }

    /// A key: quoted in any style, or bare. `None` when the input ends inside it.
    fn key(&mut self) -> Result<Option<String>, Failure> {
        let b = self.bytes[self.pos];
        self.bare_key = false;
        if self.quote_at(self.pos).is_some() {
            return self.string(Role::Key);
        }
        if !starts_key(b) {
            return Err(self.syntax(self.pos, format!("expected a key, found {}", shown(b))));
        }
        let start = self.pos;
        // Unquoted text, which also ends at a quote (`{a"b": 1}` is no key).
        let len = self.bytes[start..]
            .iter()
            .position(|&c| lex::ends_text(c, false) || matches!(c, b'"' | b'\''))
            .unwrap_or(self.bytes.len() - start);
        self.pos = start + len;
        if self.pos == self.bytes.len() {
            return Ok(None);
        }
        let key = self.slice(start, start + len).trim_end().to_owned();
        self.bare_key = true;
        self.fix(
            FixKind::UnquotedKey,
            start,
            format!("quoted the key {key:?}"),
        );
        Ok(Some(key))
    }

    /// A scalar; `tuple`: in a tuple, whose `)` ends an unquoted word.
    fn scalar(&mut self, role: Role, inside: bool, tuple: bool) -> Result<Scalar, Failure> {
        let b = self.bytes[self.pos];
        if self.quote_at(self.pos).is_some() {
            return Ok(match self.string(role)? {
                Some(s) => Scalar::Done(Value::String(s)),
                None => Scalar::Cut,
            });
        }
        if lex::starts_number(b) {
            if let Some(scalar) = self.number(inside)? {
                return Ok(scalar);
            }
        }
        self.bare_word(inside, tuple)
    }

    /// Which quote opens at `at` (any, anywhere: where a quote stands decides what it is).
    #[inline]
    fn quote_at(&self, at: usize) -> Option<Quote> {
        Quote::at(self.bytes, at, SYNTAX)
    }

    /// A backslash at `at` that starts no escape, kept literally in `out`; the first of a string
    /// noted as a fix (`noted`), `what` saying which. Returns where reading goes on.
    fn kept_backslash(
        &mut self,
        out: &mut String,
        at: usize,
        noted: &mut bool,
        what: &str,
    ) -> usize {
        out.push('\\');
        if !*noted {
            self.fix(FixKind::InvalidEscape, at, what);
            *noted = true;
        }
        at + 1
    }

    /// A quoted string; `None` when the input ends inside it.
    fn string(&mut self, role: Role) -> Result<Option<String>, Failure> {
        let start = self.pos;
        let Some(quote) = self.quote_at(start) else {
            return Err(self.syntax(start, "expected a quote"));
        };
        if quote != Quote::Double {
            self.fix(
                FixKind::Quotes,
                start,
                format!("replaced {} quotes with double quotes", quote.name()),
            );
        }
        let single = quote == Quote::Single;
        let mut out = String::new();
        let mut i = start + quote.width();
        let mut run = i;
        let (mut control_noted, mut inner_noted, mut escape_noted) = (false, false, false);
        loop {
            // The string's plain text, skipped by the lexer (eight bytes at a time for `"` and `'`).
            i = quote.text_stop(self.bytes, i);
            let Some(&b) = self.bytes.get(i) else {
                out.push_str(self.slice(run, i));
                return Ok(self.cut_off(role, out, start, i));
            };
            if let Some(width) = quote.closer_at(self.bytes, i) {
                let after = i + width;
                if self.closes_string(role, after) {
                    out.push_str(self.slice(run, i));
                    self.pos = after;
                    return Ok(Some(out));
                }
                if !inner_noted {
                    self.fix(FixKind::InnerQuote, i, "escaped a quote inside a string");
                    inner_noted = true;
                }
                i = after;
                continue;
            }
            match b {
                b'\\' => {
                    out.push_str(self.slice(run, i));
                    let Some(&e) = self.bytes.get(i + 1) else {
                        return Ok(self.cut_off(role, out, start, i + 1));
                    };
                    if let Some(c) = literal::escape(e, single) {
                        out.push(c);
                        i += 2;
                    } else if e == b'u' {
                        match self.unicode_escape(i) {
                            Some((c, next)) => {
                                out.push(c);
                                i = next;
                            }
                            None if i + 6 > self.bytes.len() && self.is_hex_prefix(i + 2) => {
                                let end = self.bytes.len();
                                return Ok(self.cut_off(role, out, start, end));
                            }
                            None => {
                                i = self.kept_backslash(
                                    &mut out,
                                    i,
                                    &mut escape_noted,
                                    "kept an invalid \\u escape literally",
                                );
                            }
                        }
                    } else {
                        // `\p` in `C:\path`: the backslash was meant literally.
                        i = self.kept_backslash(
                            &mut out,
                            i,
                            &mut escape_noted,
                            "kept an invalid escape's backslash literally",
                        );
                    }
                    run = i;
                }
                0..=0x1f => {
                    out.push_str(self.slice(run, i));
                    if b != 0 {
                        out.push(char::from(b));
                    }
                    if !control_noted {
                        self.fix(
                            FixKind::ControlCharacter,
                            i,
                            "escaped a raw control character inside a string",
                        );
                        control_noted = true;
                    }
                    i += 1;
                    run = i;
                }
                _ => i += 1,
            }
        }
    }

    fn is_hex_prefix(&self, from: usize) -> bool {
        self.bytes
            .get(from..)
            .is_some_and(|rest| rest.iter().all(u8::is_ascii_hexdigit))
    }

    /// `\uXXXX` at `at` (with a surrogate pair if there is one): the char and the index after it.
    fn unicode_escape(&self, at: usize) -> Option<(char, usize)> {
        let hex = |from: usize| literal::hex4(self.bytes.get(from..from + 4)?);
        let first = hex(at + 2)?;
        if literal::is_high_surrogate(first) {
            if self.bytes.get(at + 6..at + 8) == Some(b"\\u") {
                if let Some(c) =
                    hex(at + 8).and_then(|second| literal::surrogate_pair(first, second))
                {
                    return Some((c, at + 12));
                }
            }
            return Some(('\u{fffd}', at + 6));
        }
        Some((char::from_u32(first).unwrap_or('\u{fffd}'), at + 6))
    }

    /// The input ended inside a string that began at `start`: with `text` read of it (a value's,
    /// kept for the pipeline), `None` for the caller to handle the cut.
    fn cut_off(
        &mut self,
        role: Role,
        mut text: String,
        start: usize,
        end: usize,
    ) -> Option<String> {
        self.pos = end;
        if role != Role::Key {
            // A character cut by the end arrives as U+FFFD: not what the model wrote.
            while text.ends_with('\u{fffd}') {
                text.pop();
            }
            self.cut = Some((text, start));
        }
        None
    }

    /// Whether a quote at `at` stands alone after a value: only whitespace, then a comma, a closing
    /// bracket or the end, follow it (`{"a": 1"}`).
    fn stray_quote_at(&self, at: usize) -> bool {
        let Some(quote) = self.quote_at(at) else {
            return false;
        };
        let rest = self.bytes.get(at + quote.width()..).unwrap_or_default();
        let space = rest
            .iter()
            .position(|c| !c.is_ascii_whitespace())
            .unwrap_or(rest.len());
        work::count(space + 1);
        matches!(rest.get(space), None | Some(b',' | b'}' | b']' | b')'))
    }

    /// Whether after the comma at `at` comes a value and not a key of its own (`{"key", 105}`, not
    /// `{"a", "b": 1}`).
    fn value_follows_comma(&self, at: usize) -> bool {
        let rest = self.bytes.get(at + 1..).unwrap_or_default();
        let space = rest
            .iter()
            .position(|c| !c.is_ascii_whitespace())
            .unwrap_or(rest.len());
        work::count(space + 1);
        let next = at + 1 + space;
        match self.bytes.get(next) {
            None => false,
            Some(_) if self.quote_at(next).is_some() => !self.is_key_at(next),
            Some(&b) => starts_value(b) && !self.bare_key_at(next),
        }
    }

    /// Whether an unquoted key followed by a colon starts at `at`.
    fn bare_key_at(&self, at: usize) -> bool {
        self.quote_at(at).is_none() && self.key_at(at)
    }

    /// Whether a key (quoted or bare) and its colon begin at `at` ([`lex::key_at`]).
    fn key_at(&self, at: usize) -> bool {
        let (key, end) = lex::key_at(self.bytes, at, SYNTAX);
        work::count(end.saturating_sub(at));
        key
    }

    /// Whether members follow at `at`: a comma, then a key and its colon (`, "b": 2}`).
    fn members_follow(&self, at: usize) -> bool {
        let (follow, end) = lex::members_follow(self.bytes, at, SYNTAX);
        work::count(end.saturating_sub(at));
        follow
    }

    /// Whether a quote whose next byte is at `after` closes the string, or is a quote the model
    /// forgot to escape (`"he said "hi" ok"`).
    fn closes_string(&self, role: Role, after: usize) -> bool {
        if role == Role::Key {
            return true;
        }
        let rest = self.bytes.get(after..).unwrap_or_default();
        let space = rest
            .iter()
            .position(|c| !matches!(c, b' ' | b'\t' | b'\r' | b'\n'));
        work::count(space.map_or(rest.len(), |i| i + 1));
        let Some(next) = space.map(|i| after + i) else {
            return true;
        };
        match self.bytes[next] {
            // In an object, a comma closes the value unless what follows is text up to a quote that
            // opens no key (`"lorem "ipsum", sic." }`): then the quote was the model's, inside the value.
            b',' if role == Role::ObjectValue => !self.text_then_quote_follow(next + 1),
            b',' | b'}' | b']' | b')' | b':' | b'/' => true,
            // Another string right after: a missing comma before the next key or element,
            // unless, inside an object, what follows is not a key.
            _ if self.quote_at(next).is_some() => role == Role::OtherValue || self.is_key_at(next),
            _ => false,
        }
    }

    /// Whether, after a comma at `at - 1` inside an object, what follows is words that are no key, then
    /// a quote that opens no key either: the rest of a value whose inner quotes were not escaped. A key
    /// (quoted or bare), a bracket or the end of the input after the comma say the value ended there;
    /// words before a key are stray text (`, COMMENT "b": 1`), which does not make the quote inner.
    ///
    /// The scan stops at the first quote or bracket, so each stretch between quotes is read by a
    /// bounded number of calls and the parse stays linear.
    fn text_then_quote_follow(&self, at: usize) -> bool {
        let rest = self.bytes.get(at..).unwrap_or_default();
        let space = rest
            .iter()
            .position(|c| !c.is_ascii_whitespace())
            .unwrap_or(rest.len());
        let start = at + space;
        if self.quote_at(start).is_some() || self.bare_key_at(start) {
            return false;
        }
        let mut i = start;
        while let Some(&b) = self.bytes.get(i) {
            if self.quote_at(i).is_some() {
                work::count(i - start + 1);
                return i > start && !self.is_key_at(i);
            }
            if matches!(b, b'{' | b'}' | b'[' | b']' | b':' | b',') {
                break;
            }
            i += 1;
        }
        work::count(i - start + 1);
        false
    }

    /// Whether a quoted string at `at` is followed by a colon.
    ///
    /// The look-ahead stops at the string's first possible closer: the quote at `at` is one of
    /// those that open a string, each of which is a closer of its own kind, so what one call reads
    /// is read by at most one other call per kind of quote, and the parse stays linear.
    fn is_key_at(&self, at: usize) -> bool {
        self.quote_at(at).is_some() && self.key_at(at)
    }

    /// A number in any form a model writes; `None` when it is a word after all (`-Infinity`, `10px`).
    fn number(&mut self, inside: bool) -> Result<Option<Scalar>, Failure> {
        let start = self.pos;
        let end = lex::number_end(self.bytes, start);
        match self.bytes.get(end) {
            None if inside => {
                // The input ends in the number: `12` may have been `123`.
                self.pos = end;
                return Ok(Some(Scalar::Cut));
            }
            Some(&c) if literal::number_goes_on_as_word(c) => return Ok(None),
            _ => {}
        }
        let raw = self.slice(start, end);
        let (number, changed) = literal::number(raw)
            .ok_or_else(|| self.syntax(start, format!("{raw:?} is not a number")))?;
        if changed {
            self.fix(
                FixKind::NumberForm,
                start,
                format!("read the number {raw:?} as {number}"),
            );
        }
        self.pos = end;
        Ok(Some(Scalar::Done(Value::Number(number))))
    }

    /// A literal (`true`, `None`, `NaN`, ...) or an unquoted string, up to the next delimiter.
    fn bare_word(&mut self, inside: bool, tuple: bool) -> Result<Scalar, Failure> {
        let start = self.pos;
        let len = lex::text_end(self.bytes, start, tuple) - start;
        self.pos = start + len;
        let word = self.slice(start, start + len).trim_end();
        let literal = literal::word(word);
        // At the end of the input a word may be cut (`tr`), unless it is a whole literal.
        if self.pos == self.bytes.len() && inside && literal.is_none() {
            return Ok(Scalar::Cut);
        }
        if word.is_empty() {
            return Err(self.syntax(start, "expected a value"));
        }
        if let Some((value, exact)) = literal {
            if !exact {
                self.fix(FixKind::Literal, start, format!("read {word} as {value}"));
            }
            return Ok(Scalar::Done(value));
        }
        let word = word.to_owned();
        self.fix(
            FixKind::UnquotedString,
            start,
            format!("read the unquoted text {word:?} as a string"),
        );
        Ok(Scalar::Done(Value::String(word)))
    }
}

fn starts_value(b: u8) -> bool {
    !matches!(b, b',' | b':' | b'}' | b']')
}

fn starts_key(b: u8) -> bool {
    !matches!(b, b',' | b':' | b'}' | b']' | b'{' | b'[')
}

fn shown(b: u8) -> String {
    if b.is_ascii_graphic() {
        format!("'{}'", char::from(b))
    } else {
        format!("byte 0x{b:02x}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const LENIENT: Settings = Settings {
        salvage: false,
        max_depth: 128,
        reopen: false,
    };
    const SALVAGE: Settings = Settings {
        salvage: true,
        max_depth: 128,
        reopen: false,
    };

    fn fix(text: &str) -> (Value, Vec<FixKind>) {
        let r = parse(text, 0, LENIENT).unwrap_or_else(|e| panic!("{text}: {e:?}"));
        (r.value, r.fixes.iter().map(|r| r.kind).collect())
    }

    #[test]
    fn clean_json_needs_no_fix() {
        let (v, kinds) = fix(r#"{"a": [1, -2.5e3, "x\n\u00e9\ud83d\ude00", true, null, {}]}"#);
        assert_eq!(v, json!({"a": [1, -2500.0, "x\né😀", true, null, {}]}));
        assert!(kinds.is_empty());
    }

    #[test]
    fn syntax_fixes_are_recorded() {
        let cases: &[(&str, &str, FixKind)] = &[
            ("{\"a\":1,}", r#"{"a":1}"#, FixKind::ExtraComma),
            ("[1,2,]", r#"[1, 2]"#, FixKind::ExtraComma),
            (
                "{\"a\":1 \"b\":2}",
                r#"{"a":1,"b":2}"#,
                FixKind::MissingComma,
            ),
            ("{a: 1}", r#"{"a":1}"#, FixKind::UnquotedKey),
            ("{'a': 'x'}", r#"{"a":"x"}"#, FixKind::Quotes),
            (
                "{\"a\":\"he said \"hi\" ok\"}",
                r#"{"a":"he said \"hi\" ok"}"#,
                FixKind::InnerQuote,
            ),
            (
                "{\"a\":\"x\ny\"}",
                r#"{"a":"x\ny"}"#,
                FixKind::ControlCharacter,
            ),
            ("{\"a\":1 // note\n}", r#"{"a":1}"#, FixKind::Comment),
            ("{/*c*/\"a\":1}", r#"{"a":1}"#, FixKind::Comment),
            ("{“a”: “x”}", r#"{"a":"x"}"#, FixKind::Quotes),
            (
                "{\"a\":True,\"b\":None}",
                r#"{"a":true,"b":null}"#,
                FixKind::Literal,
            ),
            (
                "{\"p\":\"C:\\path\"}",
                r#"{"p":"C:\\path"}"#,
                FixKind::InvalidEscape,
            ),
            ("{\"n\":.5}", r#"{"n":0.5}"#, FixKind::NumberForm),
            ("{\"n\":1.}", r#"{"n":1}"#, FixKind::NumberForm),
            ("{\"n\":+01}", r#"{"n":1}"#, FixKind::NumberForm),
            ("{\"s\": ok}", r#"{"s":"ok"}"#, FixKind::UnquotedString),
            ("{\"a\":[1}", r#"{"a":[1]}"#, FixKind::Bracket),
            (
                "{\"a\":\"x\" \"b\":1}",
                r#"{"a":"x","b":1}"#,
                FixKind::MissingComma,
            ),
            ("[\"a\" \"b\"]", r#"["a", "b"]"#, FixKind::MissingComma),
            (
                "{\"a\":\"x\u{0}y\"}",
                r#"{"a":"xy"}"#,
                FixKind::ControlCharacter,
            ),
            ("{'a': 'it's'}", r#"{"a":"it's"}"#, FixKind::InnerQuote),
        ];
        for (text, want, kind) in cases {
            let (v, kinds) = fix(text);
            let want: Value = serde_json::from_str(want).unwrap();
            assert_eq!(v, want, "{text}");
            assert!(kinds.contains(kind), "{text}: {kinds:?}");
        }
    }

    #[test]
    fn shapes_another_repair_library_handles() {
        let cases: &[(&str, &str, FixKind)] = &[
            (
                r#"{"a": "lorem "ipsum" dolor"}"#,
                r#"{"a": "lorem \"ipsum\" dolor"}"#,
                FixKind::InnerQuote,
            ),
            (r#"{"a": 1"}"#, r#"{"a": 1}"#, FixKind::StrayText),
            (
                r#"{"a": 1", "b": 2}"#,
                r#"{"a": 1, "b": 2}"#,
                FixKind::StrayText,
            ),
            (r#"["x", 2"]"#, r#"["x", 2]"#, FixKind::StrayText),
            (
                r#"{"a": true, COMMENT "b": 1}"#,
                r#"{"a": true, "b": 1}"#,
                FixKind::StrayText,
            ),
            (
                r#"{"a": 1 COMMENT "b": 1}"#,
                r#"{"a": 1, "b": 1}"#,
                FixKind::StrayText,
            ),
            (r#"{"key", 105}"#, r#"{"key": 105}"#, FixKind::MissingColon),
            (
                r#"{"key", "v", "k2": 1}"#,
                r#"{"key": "v", "k2": 1}"#,
                FixKind::MissingColon,
            ),
            (r#"{"a": (1, 2)}"#, r#"{"a": [1, 2]}"#, FixKind::Tuple),
            (r#"{"a": ('x', y)}"#, r#"{"a": ["x", "y"]}"#, FixKind::Tuple),
            (
                r#"{"a": ((1,), ())}"#,
                r#"{"a": [[1], []]}"#,
                FixKind::Tuple,
            ),
            ("(1, 2)", "[1, 2]", FixKind::Tuple),
            (
                r#"{"a": tRuE, "b": nil}"#,
                r#"{"a": true, "b": null}"#,
                FixKind::Literal,
            ),
            (r#"{"a": undefined}"#, r#"{"a": null}"#, FixKind::Literal),
            (
                r#"{"n": 82_461_110}"#,
                r#"{"n": "82_461_110"}"#,
                FixKind::UnquotedString,
            ),
        ];
        for (text, want, kind) in cases {
            let (v, kinds) = fix(text);
            let want: Value = serde_json::from_str(want).unwrap();
            assert_eq!(v, want, "{text}");
            assert!(kinds.contains(kind), "{text}: {kinds:?}");
        }
        // A key after the comma is a key, not the missing value; a word before a colon is a key.
        for text in [r#"{"a", "b": 1}"#, r#"{"a", b: 1}"#, "{\"a\" 1}"] {
            assert!(
                matches!(parse(text, 0, LENIENT), Err(Failure::Syntax { .. })),
                "{text}"
            );
        }
        // A tuple closes only with `)`, an array only with `]`.
        assert!(parse("[1, 2)", 0, LENIENT).is_err());
        assert!(parse("(1, 2]", 0, LENIENT).is_err());
        // Inside a tuple a word ends at `)`; outside one, `(` and `)` are text.
        assert_eq!(fix(r#"{"a": f(x)}"#).0, json!({"a": "f(x)"}));
    }

    #[test]
    fn members_after_an_early_brace_join_only_when_asked() {
        let text = r#"{"a": 1}, "b": 2}"#;
        let early = parse(text, 0, LENIENT).unwrap();
        assert_eq!(early.value, json!({"a": 1}));
        assert_eq!(early.end, 8);
        let reopen = Settings {
            reopen: true,
            ..LENIENT
        };
        let joined = parse(text, 0, reopen).unwrap();
        assert_eq!(joined.value, json!({"a": 1, "b": 2}));
        assert_eq!(joined.end, text.len());
        assert!(joined.fixes.iter().any(|f| f.kind == FixKind::Reopened));
        let twice = parse(r#"{"a": 1}, b: 2}, 'c': [3]} tail"#, 0, reopen).unwrap();
        assert_eq!(twice.value, json!({"a": 1, "b": 2, "c": [3]}));
        // Not members: a comma and a value, or prose.
        for text in [
            r#"{"a": 1}, 2"#,
            r#"{"a": 1} and "b": 2"#,
            r#"{"a": 1}, "b""#,
        ] {
            assert_eq!(
                parse(text, 0, reopen).unwrap().value,
                json!({"a": 1}),
                "{text}"
            );
        }
        // Arrays are not reopened.
        assert_eq!(
            parse(r#"[1], "b": 2}"#, 0, reopen).unwrap().value,
            json!([1])
        );
    }

    #[test]
    fn a_cut_string_value_is_reported_with_its_path() {
        let r = parse(r#"{"a": {"x": [1, {"bio": "Born in 19"#, 0, SALVAGE).unwrap();
        let cut = r.cut.expect("a cut string");
        assert_eq!(
            cut.path,
            [
                Step::Key("a".into()),
                Step::Key("x".into()),
                Step::Index(1),
                Step::Key("bio".into())
            ]
        );
        assert_eq!(cut.text, "Born in 19");
        // Escapes read whole are kept; a half escape or a half character is not.
        for (text, kept) in [
            ("{\"s\": \"a\\nb\\u00", "a\nb"),
            ("{\"s\": \"a\\", "a"),
            ("{\"s\": \"x\u{fffd}", "x"),
            ("{\"s\": \"", ""),
        ] {
            let r = parse(text, 0, SALVAGE).unwrap();
            assert_eq!(r.cut.map(|c| c.text).as_deref(), Some(kept), "{text}");
            assert_eq!(r.value, json!({}), "{text}");
        }
        // A cut key or number is no cut string.
        for text in ["{\"a\": 1, \"bi", "{\"n\": 12"] {
            assert!(parse(text, 0, SALVAGE).unwrap().cut.is_none(), "{text}");
        }
    }

    #[test]
    fn many_quotes_stay_linear() {
        // Stray quotes, quotes inside strings, unclosed strings: each case doubled, the work read
        // ahead must stay a small multiple of the input.
        let makers: [fn(usize) -> String; 8] = [
            |n| format!("{{\"a\": \"{}\"}}", "x \" ".repeat(n)),
            |n| format!("{{\"a\": \"{}\"}}", "x\", y ".repeat(n)),
            |n| format!("{{\"a\": \"x\", {}\"b\": 1}}", "word ".repeat(n)),
            |n| format!("{{\"a\": 1{}}}", "\" ".repeat(n)),
            |n| format!("{{{}}}", "\"k\", ".repeat(n)),
            |n| format!("{{\"a\": 1{}", "}, \"b\": \"".repeat(n)),
            |n| format!("{{{}\"a\": 1}}", "W \"".repeat(n)),
            |n| format!("[{}]", "(\"".repeat(n)),
        ];
        for make in makers {
            for n in [2_000, 8_000] {
                let text = make(n);
                let reopen = Settings {
                    reopen: true,
                    ..SALVAGE
                };
                let read = work::of(|| drop(parse(&text, 0, reopen)));
                assert_reads_at_most(6, read, &text);
            }
        }
    }

    #[test]
    fn duplicate_keys_keep_the_last_value() {
        assert_eq!(fix("{'a':1,'a':2}").0, json!({"a": 2}));
    }

    #[test]
    fn stops_after_one_value() {
        let r = parse("{\"a\":1} tail {", 0, LENIENT).unwrap();
        assert_eq!(r.value, json!({"a":1}));
    }

    #[test]
    fn truncation_fails_without_salvage() {
        for text in [
            "{\"a\":\"hel",
            "{\"a\":1,\"b",
            "{\"a\":",
            "{\"n\":12",
            "[1,2",
            "\"x",
        ] {
            assert!(
                matches!(parse(text, 5, LENIENT), Err(Failure::Truncated { offset }) if offset == 5 + text.len()),
                "{text}"
            );
        }
        assert_eq!(parse("  // c", 0, LENIENT).unwrap_err(), Failure::Empty);
    }

    #[test]
    fn salvage_keeps_only_what_is_complete() {
        let cases = [
            ("{\"a\":\"hel", json!({})),
            ("{\"a\":1,\"b", json!({"a":1})),
            ("{\"a\":", json!({})),
            ("{\"n\":12", json!({})),
            ("{\"ok\":tr", json!({})),
            ("{\"ok\":true", json!({"ok": true})),
            ("{\"a\":\"x\\", json!({})),
            ("{\"a\":\"x\\u00", json!({})),
            ("{\"a\":[{\"b\":1},{\"b\":", json!({"a":[{"b":1}]})),
            ("[1, 2", json!([1])),
            ("{\"x\":{\"y\":1,\"z\":", json!({"x":{"y":1}})),
        ];
        for (text, want) in cases {
            let r = parse(text, 0, SALVAGE).unwrap_or_else(|e| panic!("{text}: {e:?}"));
            assert_eq!(r.value, want, "{text}");
            assert!(r.fixes.iter().any(|r| r.kind == FixKind::ClosedTruncated));
        }
        assert!(matches!(
            parse("12", 0, SALVAGE),
            Ok(Fixed { value, .. }) if value == json!(12)
        ));
        assert!(matches!(
            parse("\"ab", 0, SALVAGE),
            Err(Failure::Truncated { .. })
        ));
    }

    /// The bytes the parser reads ahead while parsing `text`.
    fn look_ahead_of(text: &str) -> usize {
        work::of(|| drop(parse(text, 0, SALVAGE)))
    }

    /// That `read` bytes of look-ahead are at most `times` the length of `text`.
    fn assert_reads_at_most(times: usize, read: usize, text: &str) {
        assert!(
            read <= times * text.len(),
            "{read} bytes read ahead for {} bytes: {:?}...",
            text.len(),
            text.get(..20).unwrap_or(text)
        );
    }

    #[test]
    fn look_ahead_is_linear_on_quotes_that_never_close() {
        // Each `"` is a candidate closer followed by a smart-quoted string: finding that string's
        // end read to the end of the input for each (quadratic) when `”` never comes.
        let hostile = |n: usize| format!("{{\"a\":\"x\"{}", " \u{201c}y\"".repeat(n));
        let single = |n: usize| format!("{{\"a\":\"x\"{}", " 'y\"".repeat(n));
        let mixed = |n: usize| format!("['x'{}", " \"y' \u{2018}z'".repeat(n));
        for make in [hostile, single, mixed] {
            for n in [1_000, 4_000] {
                let text = make(n);
                assert_reads_at_most(4, look_ahead_of(&text), &text);
            }
        }
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let deep = "[".repeat(100_000);
        match parse(&deep, 0, LENIENT) {
            Err(Failure::Syntax { message, .. }) => assert!(message.contains("128")),
            other => panic!("{other:?}"),
        }
        let ok = format!("{}{}", "[".repeat(100), "]".repeat(100));
        assert!(parse(&ok, 0, LENIENT).is_ok());
    }

    #[test]
    fn broken_input_is_a_syntax_error() {
        for text in ["{x}", "{\"a\" 1}", "{\"a\":}", "]", "{\"a\":1]"] {
            assert!(
                matches!(parse(text, 0, LENIENT), Err(Failure::Syntax { .. })),
                "{text}"
            );
        }
    }
}

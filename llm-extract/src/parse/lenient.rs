//! The lenient JSON parser: what models write, read as the JSON they meant, every fix recorded.
//!
//! It is iterative (an explicit stack of open containers, so no input can overflow the call stack),
//! limits nesting, reads each byte a bounded number of times (the only look-ahead, deciding whether a
//! quote inside a string ends it, stops at the next quote), and stops after one value.

use super::{work, Fix, FixKind};
use serde_json::{Map, Number, Value};

/// How a parse may end.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Settings {
    /// Close what is open at the end of the input instead of failing.
    pub(crate) salvage: bool,
    /// The deepest nesting accepted.
    pub(crate) max_depth: usize,
}

/// A fixed value.
#[derive(Debug)]
pub(crate) struct Fixed {
    pub(crate) value: Value,
    pub(crate) fixes: Vec<Fix>,
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
    }
    .run()
}

enum Open {
    Object {
        map: Map<String, Value>,
        key: Option<String>,
    },
    Array(Vec<Value>),
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
}

const LEFT_DOUBLE: &[u8] = "\u{201c}".as_bytes();
const RIGHT_DOUBLE: &[u8] = "\u{201d}".as_bytes();
const LEFT_SINGLE: &[u8] = "\u{2018}".as_bytes();
const RIGHT_SINGLE: &[u8] = "\u{2019}".as_bytes();
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

    fn run(mut self) -> Result<Fixed, Failure> {
        let mut stack: Vec<Open> = Vec::new();
        let mut want = Want::Value;
        loop {
            self.skip_insignificant();
            let Some(&b) = self.bytes.get(self.pos) else {
                return self.at_end(stack, want, false);
            };
            let in_object = matches!(stack.last(), Some(Open::Object { .. }));
            let value = match want {
                Want::Colon => {
                    if b == b':' {
                        self.pos += 1;
                        want = Want::Value;
                        continue;
                    }
                    return Err(self.syntax(self.pos, "expected ':' after the key"));
                }
                Want::Key { after_comma } => match b {
                    b'}' => {
                        if after_comma {
                            self.fix(FixKind::ExtraComma, self.pos, "removed a trailing comma");
                        }
                        self.pos += 1;
                        self.close(&mut stack)
                    }
                    b',' => {
                        self.fix(FixKind::ExtraComma, self.pos, "removed an extra comma");
                        self.pos += 1;
                        continue;
                    }
                    _ => {
                        let Some(key) = self.key()? else {
                            return self.at_end(stack, Want::Colon, true);
                        };
                        if let Some(Open::Object { key: slot, .. }) = stack.last_mut() {
                            *slot = Some(key);
                        }
                        want = Want::Colon;
                        continue;
                    }
                },
                Want::Next => match b {
                    b',' => {
                        self.pos += 1;
                        want = if in_object {
                            Want::Key { after_comma: true }
                        } else {
                            Want::Element { after_comma: true }
                        };
                        continue;
                    }
                    b'}' | b']' => self.close_matching(&mut stack, b)?,
                    _ if starts_value(b) || (in_object && starts_key(b)) => {
                        self.fix(FixKind::MissingComma, self.pos, "inserted a missing comma");
                        want = if in_object {
                            Want::Key { after_comma: false }
                        } else {
                            Want::Element { after_comma: false }
                        };
                        continue;
                    }
                    _ => {
                        return Err(self.syntax(
                            self.pos,
                            format!("expected ',' or a closing bracket, found {}", shown(b)),
                        ))
                    }
                },
                Want::Value | Want::Element { .. } => {
                    if let Want::Element { after_comma } = want {
                        if b == b']' {
                            if after_comma {
                                self.fix(FixKind::ExtraComma, self.pos, "removed a trailing comma");
                            }
                            self.pos += 1;
                            let value = self.close(&mut stack);
                            match self.attach(&mut stack, value) {
                                Some(value) => return Ok(self.done(value)),
                                None => {
                                    want = Want::Next;
                                    continue;
                                }
                            }
                        }
                        if b == b',' {
                            self.fix(FixKind::ExtraComma, self.pos, "removed an extra comma");
                            self.pos += 1;
                            continue;
                        }
                    }
                    match b {
                        b'{' | b'[' => {
                            if stack.len() >= self.settings.max_depth {
                                return Err(self.syntax(
                                    self.pos,
                                    format!(
                                        "the JSON nests deeper than {} levels",
                                        self.settings.max_depth
                                    ),
                                ));
                            }
                            self.pos += 1;
                            if b == b'{' {
                                stack.push(Open::Object {
                                    map: Map::new(),
                                    key: None,
                                });
                                want = Want::Key { after_comma: false };
                            } else {
                                stack.push(Open::Array(Vec::new()));
                                want = Want::Element { after_comma: false };
                            }
                            continue;
                        }
                        b'}' | b']' | b':' => {
                            return Err(self
                                .syntax(self.pos, format!("expected a value, found {}", shown(b))))
                        }
                        _ => {
                            let role = if in_object {
                                Role::ObjectValue
                            } else {
                                Role::OtherValue
                            };
                            let inside = !stack.is_empty();
                            match self.scalar(role, inside)? {
                                Scalar::Done(value) => value,
                                Scalar::Cut => return self.at_end(stack, want, true),
                            }
                        }
                    }
                }
            };
            match self.attach(&mut stack, value) {
                Some(value) => return Ok(self.done(value)),
                None => want = Want::Next,
            }
        }
    }

    fn done(self, value: Value) -> Fixed {
        Fixed {
            value,
            fixes: self.fixes,
        }
    }

    /// Puts a finished value into its parent; returns it when it is the root.
    fn attach(&mut self, stack: &mut [Open], value: Value) -> Option<Value> {
        match stack.last_mut() {
            None => Some(value),
            Some(Open::Array(items)) => {
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
            Some(Open::Array(items)) => Value::Array(items),
            None => Value::Null,
        }
    }

    /// Closes the innermost container `closer` matches, closing (and recording) any inner ones a
    /// model forgot.
    fn close_matching(&mut self, stack: &mut Vec<Open>, closer: u8) -> Result<Value, Failure> {
        let matches = |open: &Open| match open {
            Open::Object { .. } => closer == b'}',
            Open::Array(_) => closer == b']',
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
        if cut {
            self.fix(
                FixKind::DroppedIncomplete,
                end,
                "dropped a value cut off at the end of the input",
            );
        }
        if let Some(Open::Object { key, .. }) = stack.last_mut() {
            if let (Some(key), Want::Colon | Want::Value) = (key.take(), want) {
                self.fix(
                    FixKind::DroppedIncomplete,
                    end,
                    format!("dropped the key {key:?}, whose value was cut off"),
                );
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
                None => return Ok(self.done(value)),
                Some(Open::Array(_)) => self.fix(
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
                Some(b' ' | b'\t' | b'\n' | b'\r') => self.pos += 1,
                Some(0) => {
                    if !nul_seen {
                        self.fix(FixKind::ControlCharacter, self.pos, "removed a NUL byte");
                        nul_seen = true;
                    }
                    self.pos += 1;
                }
                Some(b'/') => match self.bytes.get(self.pos + 1) {
                    Some(b'/') => {
                        self.fix(FixKind::Comment, self.pos, "removed a // comment");
                        self.pos = memchr::memchr(b'\n', &self.bytes[self.pos..])
                            .map_or(self.bytes.len(), |i| self.pos + i);
                    }
                    Some(b'*') => {
                        self.fix(FixKind::Comment, self.pos, "removed a /* */ comment");
                        self.pos = memchr::memmem::find(&self.bytes[self.pos + 2..], b"*/")
                            .map_or(self.bytes.len(), |i| self.pos + 2 + i + 2);
                    }
                    _ => return,
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
        if self.quote_at(self.pos).is_some() {
            return self.string(Role::Key);
        }
        if !starts_key(b) {
            return Err(self.syntax(self.pos, format!("expected a key, found {}", shown(b))));
        }
        let start = self.pos;
        let len = self.bytes[start..]
            .iter()
            .position(|c| {
                matches!(
                    c,
                    b':' | b',' | b'{' | b'}' | b'[' | b']' | b'"' | b'\'' | b'\n' | b'\r'
                )
            })
            .unwrap_or(self.bytes.len() - start);
        self.pos = start + len;
        if self.pos == self.bytes.len() {
            return Ok(None);
        }
        let key = self.slice(start, start + len).trim_end().to_owned();
        self.fix(
            FixKind::UnquotedKey,
            start,
            format!("quoted the key {key:?}"),
        );
        Ok(Some(key))
    }

    fn scalar(&mut self, role: Role, inside: bool) -> Result<Scalar, Failure> {
        let b = self.bytes[self.pos];
        if self.quote_at(self.pos).is_some() {
            return Ok(match self.string(role)? {
                Some(s) => Scalar::Done(Value::String(s)),
                None => Scalar::Cut,
            });
        }
        if b.is_ascii_digit() || matches!(b, b'-' | b'+' | b'.') {
            if let Some(scalar) = self.number(inside)? {
                return Ok(scalar);
            }
        }
        self.bare_word(inside)
    }

    /// Which quote opens at `at`, and the bytes that may close it.
    fn quote_at(&self, at: usize) -> Option<(&'static [&'static [u8]], usize, &'static str)> {
        let rest = self.bytes.get(at..)?;
        const DOUBLE: &[&[u8]] = &[b"\""];
        const SINGLE: &[&[u8]] = &[b"'"];
        const SMART_DOUBLE: &[&[u8]] = &[RIGHT_DOUBLE, LEFT_DOUBLE, b"\""];
        const SMART_SINGLE: &[&[u8]] = &[RIGHT_SINGLE, LEFT_SINGLE];
        match rest.first()? {
            b'"' => Some((DOUBLE, 1, "")),
            b'\'' => Some((SINGLE, 1, "single")),
            _ if rest.starts_with(LEFT_DOUBLE) || rest.starts_with(RIGHT_DOUBLE) => {
                Some((SMART_DOUBLE, 3, "smart"))
            }
            _ if rest.starts_with(LEFT_SINGLE) => Some((SMART_SINGLE, 3, "smart single")),
            _ => None,
        }
    }

    /// A quoted string; `None` when the input ends inside it.
    fn string(&mut self, role: Role) -> Result<Option<String>, Failure> {
        let start = self.pos;
        let Some((closers, open_len, style)) = self.quote_at(start) else {
            return Err(self.syntax(start, "expected a quote"));
        };
        if !style.is_empty() {
            self.fix(
                FixKind::Quotes,
                start,
                format!("replaced {style} quotes with double quotes"),
            );
        }
        let single = style == "single";
        let mut out = String::new();
        let mut i = start + open_len;
        let mut run = i;
        let (mut control_noted, mut inner_noted, mut escape_noted) = (false, false, false);
        loop {
            let Some(&b) = self.bytes.get(i) else {
                self.pos = i;
                return Ok(None);
            };
            if let Some(closer) = closers.iter().find(|c| self.bytes[i..].starts_with(c)) {
                let after = i + closer.len();
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
                        self.pos = i + 1;
                        return Ok(None);
                    };
                    let simple = match e {
                        b'"' => Some('"'),
                        b'\\' => Some('\\'),
                        b'/' => Some('/'),
                        b'b' => Some('\u{8}'),
                        b'f' => Some('\u{c}'),
                        b'n' => Some('\n'),
                        b'r' => Some('\r'),
                        b't' => Some('\t'),
                        b'\'' if single => Some('\''),
                        _ => None,
                    };
                    if let Some(c) = simple {
                        out.push(c);
                        i += 2;
                    } else if e == b'u' {
                        match self.unicode_escape(i) {
                            Some((c, next)) => {
                                out.push(c);
                                i = next;
                            }
                            None if i + 6 > self.bytes.len() && self.is_hex_prefix(i + 2) => {
                                self.pos = self.bytes.len();
                                return Ok(None);
                            }
                            None => {
                                out.push('\\');
                                i += 1;
                                if !escape_noted {
                                    self.fix(
                                        FixKind::InvalidEscape,
                                        i - 1,
                                        "kept an invalid \\u escape literally",
                                    );
                                    escape_noted = true;
                                }
                            }
                        }
                    } else {
                        // `\p` in `C:\path`: the backslash was meant literally.
                        out.push('\\');
                        i += 1;
                        if !escape_noted {
                            self.fix(
                                FixKind::InvalidEscape,
                                i - 1,
                                "kept an invalid escape's backslash literally",
                            );
                            escape_noted = true;
                        }
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
        let hex = |from: usize| -> Option<u32> {
            let digits = self.text.get(from..from + 4)?;
            if !digits.bytes().all(|c| c.is_ascii_hexdigit()) {
                return None;
            }
            u32::from_str_radix(digits, 16).ok()
        };
        let first = hex(at + 2)?;
        if (0xD800..0xDC00).contains(&first) {
            if self.bytes.get(at + 6..at + 8) == Some(b"\\u") {
                if let Some(second) = hex(at + 8).filter(|s| (0xDC00..0xE000).contains(s)) {
                    let c = 0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00);
                    return Some((char::from_u32(c)?, at + 12));
                }
            }
            return Some(('\u{fffd}', at + 6));
        }
        Some((char::from_u32(first).unwrap_or('\u{fffd}'), at + 6))
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
            b',' | b'}' | b']' | b':' | b'/' => true,
            // Another string right after: a missing comma before the next key or element,
            // unless, inside an object, what follows is not a key.
            _ if self.quote_at(next).is_some() => role == Role::OtherValue || self.is_key_at(next),
            _ => false,
        }
    }

    /// Whether a quoted string at `at` is followed by a colon.
    ///
    /// The look-ahead stops at the string's first possible closer: the quote at `at` is one of
    /// those that open a string, each of which is a closer of its own kind, so what one call reads
    /// is read by at most one other call per kind of quote, and the parse stays linear.
    fn is_key_at(&self, at: usize) -> bool {
        let Some((closers, open_len, _)) = self.quote_at(at) else {
            return false;
        };
        let rest = self.bytes.get(at + open_len..).unwrap_or_default();
        let Some(end) = end_of_first(rest, closers) else {
            work::count(rest.len());
            return false;
        };
        let after = rest.get(end..).unwrap_or_default();
        let space = after
            .iter()
            .position(|c| !c.is_ascii_whitespace())
            .unwrap_or(after.len());
        work::count(end + space);
        after.get(space) == Some(&b':')
    }

    /// A number in any form a model writes; `None` when it is a word after all (`-Infinity`, `10px`).
    fn number(&mut self, inside: bool) -> Result<Option<Scalar>, Failure> {
        let start = self.pos;
        let len = self.bytes[start..]
            .iter()
            .position(|c| !(c.is_ascii_digit() || matches!(c, b'-' | b'+' | b'.' | b'e' | b'E')))
            .unwrap_or(self.bytes.len() - start);
        let end = start + len;
        match self.bytes.get(end) {
            None if inside => {
                // The input ends in the number: `12` may have been `123`.
                self.pos = end;
                return Ok(Some(Scalar::Cut));
            }
            Some(c) if c.is_ascii_alphabetic() || *c == b'_' => return Ok(None),
            _ => {}
        }
        let raw = self.slice(start, end);
        if !raw.bytes().any(|c| c.is_ascii_digit()) {
            return Err(self.syntax(start, format!("{raw:?} is not a number")));
        }
        let (normalized, changed) = normalize_number(raw);
        let number = parse_number(&normalized)
            .ok_or_else(|| self.syntax(start, format!("{raw:?} is not a number")))?;
        if changed {
            self.fix(
                FixKind::NumberForm,
                start,
                format!("read the number {raw:?} as {normalized}"),
            );
        }
        self.pos = end;
        Ok(Some(Scalar::Done(Value::Number(number))))
    }

    /// A literal (`true`, `None`, `NaN`, ...) or an unquoted string, up to the next delimiter.
    fn bare_word(&mut self, inside: bool) -> Result<Scalar, Failure> {
        let start = self.pos;
        let len = self.bytes[start..]
            .iter()
            .position(|c| matches!(c, b',' | b'}' | b']' | b':' | b'\n' | b'\r' | b'{' | b'['))
            .unwrap_or(self.bytes.len() - start);
        self.pos = start + len;
        let word = self.slice(start, start + len).trim_end();
        // At the end of the input a word may be cut (`tr`), unless it is a whole literal and
        // nothing (not even a space) followed it that could have been part of a longer word.
        let whole_literal = matches!(word, "true" | "false" | "null" | "True" | "False" | "None");
        if self.pos == self.bytes.len() && inside && !whole_literal {
            return Ok(Scalar::Cut);
        }
        if word.is_empty() {
            return Err(self.syntax(start, "expected a value"));
        }
        let literal = match word {
            "true" => return Ok(Scalar::Done(Value::Bool(true))),
            "false" => return Ok(Scalar::Done(Value::Bool(false))),
            "null" => return Ok(Scalar::Done(Value::Null)),
            "True" | "TRUE" => Some(Value::Bool(true)),
            "False" | "FALSE" => Some(Value::Bool(false)),
            "None" | "NULL" | "Null" | "nil" | "undefined" => Some(Value::Null),
            "NaN" | "nan" | "Infinity" | "-Infinity" | "+Infinity" | "inf" | "-inf" => {
                Some(Value::Null)
            }
            _ => None,
        };
        if let Some(value) = literal {
            self.fix(FixKind::Literal, start, format!("read {word} as {value}"));
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

/// Just past the first of `closers` in `bytes`: one pass that stops there (searching for each
/// closer in turn would read to the end of the input for each one that is absent).
fn end_of_first(bytes: &[u8], closers: &[&[u8]]) -> Option<usize> {
    // Every closer starts with `"`, `'` or the lead byte of a smart quote.
    let mut from = 0;
    loop {
        let at = from + memchr::memchr3(b'"', b'\'', 0xE2, bytes.get(from..)?)?;
        let rest = bytes.get(at..).unwrap_or_default();
        if let Some(closer) = closers.iter().find(|c| rest.starts_with(c)) {
            return Some(at + closer.len());
        }
        from = at + 1;
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

/// `.5` to `0.5`, `1.` to `1`, `+1` to `1`, `007` to `7`; whether anything changed.
fn normalize_number(raw: &str) -> (String, bool) {
    let (sign, digits) = match raw.as_bytes().first() {
        Some(b'-') => ("-", &raw[1..]),
        Some(b'+') => ("", &raw[1..]),
        _ => ("", raw),
    };
    let (mantissa, exponent) = match digits.find(['e', 'E']) {
        Some(i) => digits.split_at(i),
        None => (digits, ""),
    };
    let (int, frac) = match mantissa.find('.') {
        Some(i) => (&mantissa[..i], Some(&mantissa[i + 1..])),
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

fn parse_number(text: &str) -> Option<Number> {
    if !text.contains(['.', 'e', 'E']) {
        if let Ok(n) = text.parse::<i64>() {
            return Some(n.into());
        }
        if let Ok(n) = text.parse::<u64>() {
            return Some(n.into());
        }
    }
    let f: f64 = text.parse().ok()?;
    Number::from_f64(f)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const LENIENT: Settings = Settings {
        salvage: false,
        max_depth: 128,
    };
    const SALVAGE: Settings = Settings {
        salvage: true,
        max_depth: 128,
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
                let read = look_ahead_of(&text);
                assert!(
                    read <= 4 * text.len(),
                    "{read} bytes read ahead for {} bytes: {:?}...",
                    text.len(),
                    &text[..20]
                );
            }
        }
    }

    #[test]
    fn the_first_closer_ends_the_search() {
        let closers: &[&[u8]] = &[RIGHT_DOUBLE, LEFT_DOUBLE, b"\""];
        assert_eq!(end_of_first("ab\u{201d}c\"".as_bytes(), closers), Some(5));
        assert_eq!(end_of_first(b"ab'c\"", closers), Some(5));
        assert_eq!(end_of_first("a\u{2019}b".as_bytes(), closers), None);
        assert_eq!(end_of_first(b"", closers), None);
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

    #[test]
    fn number_normalization() {
        assert_eq!(normalize_number("-.5e3"), ("-0.5e3".into(), true));
        assert_eq!(normalize_number("10"), ("10".into(), false));
        assert_eq!(normalize_number("0"), ("0".into(), false));
        assert_eq!(normalize_number("1.e2"), ("1e2".into(), true));
        assert!(parse_number("1e999").is_none());
        assert_eq!(parse_number("18446744073709551615"), Some(u64::MAX.into()));
    }
}

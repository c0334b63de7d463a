//! Framing: where each value begins and ends in a byte stream, in one pass.
//!
//! [`ValueScanner`] follows one value's brackets over the tokens of the lexer (`lex`), which keeps
//! the string, escape and quote state (a `}` inside a string does not count) between calls, so a
//! value can arrive in any number of pieces.
//! [`Framer`] is the state machine of a whole answer of many values: JSON Lines, pretty-printed
//! objects spanning lines, a top-level array or an `{"items": [...]}` wrapper (whose elements are
//! framed one by one as they complete), fences, thinking blocks and prose lines. Neither ever looks at
//! a byte twice, which is what keeps the incremental decoder linear.

use super::lex::{Lexer, Next, Syntax, TokenKind};
use memchr::memchr;

/// Where a scan stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scan {
    /// The value closed; the index is just past its last byte.
    Closed(usize),
    /// A newline at this index (only when asked to stop at newlines); the caller resumes after it.
    Newline(usize),
    /// The bytes ran out with the value still open.
    NeedMore,
}

/// The extent of one JSON(-ish) value: bracket depth over the lexer's tokens, nothing else.
#[derive(Debug, Clone)]
pub(crate) struct ValueScanner {
    /// Strings (double quotes, and single quotes where a value starts), escapes and the last
    /// significant byte are the lexer's; comments and other quotes are not read here.
    lexer: Lexer,
    depth: u32,
}

/// What the scanner reads: double quotes, and single quotes where a value starts.
const SYNTAX: Syntax = Syntax {
    single_quotes: true,
    report: false,
    ..Syntax::STRICT
};

impl ValueScanner {
    /// A scanner positioned before a value's first byte.
    pub(crate) fn new() -> Self {
        ValueScanner {
            lexer: Lexer::new(SYNTAX),
            depth: 0,
        }
    }

    /// A scanner positioned inside an object whose opening brace was already seen.
    pub(crate) fn inside_object() -> Self {
        ValueScanner {
            lexer: Lexer::new(SYNTAX).after(b','),
            depth: 1,
        }
    }

    /// Whether the scan is inside a string.
    pub(crate) fn in_string(&self) -> bool {
        self.lexer.string().is_some()
    }

    /// The last significant byte seen outside strings.
    pub(crate) fn last_significant(&self) -> u8 {
        self.lexer.last_significant()
    }

    /// Whether the scan is inside an object or an array (so it can only close at `}` or `]`).
    #[inline]
    pub(crate) fn nested(&self) -> bool {
        self.depth > 0
    }

    /// Continues the scan over `bytes` (the bytes after those of the previous call).
    pub(crate) fn scan(&mut self, bytes: &[u8], stop_at_newline: bool) -> Scan {
        let base = self.lexer.offset();
        self.lexer.set_newline_stops(stop_at_newline);
        loop {
            // Inside a value its strings cannot end it: only brackets are handed out there.
            let next = match self.depth {
                0 => self.lexer.next_structure(bytes, base),
                _ => self.lexer.next_bracket(bytes, base),
            };
            let token = match next {
                Next::Token(token) => token,
                Next::Newline(at) => return Scan::Newline(at - base),
                Next::More => return Scan::NeedMore,
            };
            match token.kind {
                TokenKind::Open(_) => self.depth += 1,
                TokenKind::Close(_) => {
                    self.depth = self.depth.saturating_sub(1);
                    if self.depth == 0 {
                        return Scan::Closed(token.end - base);
                    }
                }
                TokenKind::String { .. } if self.depth == 0 => {
                    return Scan::Closed(token.end - base)
                }
                _ => {}
            }
        }
    }
}

/// What the framer needs to know about the answer's items.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FramerConfig {
    /// A `[` at the start of a line opens an array whose elements are the items
    /// (false when an item is itself an array).
    pub(crate) top_array_is_wrapper: bool,
    /// `{"items": [` opens a wrapper whose array elements are the items
    /// (false when an item has an `items` property of its own).
    pub(crate) items_wrapper: bool,
    /// The largest frame kept in memory.
    pub(crate) max_frame: usize,
}

/// What a frame holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FrameKind {
    /// A value that starts a line (or follows another value on it).
    Value,
    /// An element of a wrapper array.
    Element,
    /// A line of text that does not start with a value (prose, or prose around a value).
    Line,
}

/// One framed piece of the stream, in absolute byte offsets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Frame {
    pub(crate) kind: FrameKind,
    pub(crate) start: usize,
    pub(crate) end: usize,
    /// 1-based line of `start`.
    pub(crate) line: usize,
    /// Whether the value closed (always true for lines).
    pub(crate) closed: bool,
    /// Whether the frame was cut by the end of the input (rather than by a new value).
    pub(crate) at_end: bool,
}

/// What the framer reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Event {
    /// A frame to parse.
    Frame(Frame),
    /// A frame grew past the limit; its bytes are being discarded until it ends.
    TooLarge { start: usize, line: usize },
}

/// Progress through `{ "items" : [`.
#[derive(Debug, Clone, Copy)]
struct ItemsProbe {
    stage: u8,
}

enum Probe {
    Pending,
    Matched,
    Failed,
}

impl ItemsProbe {
    const KEY: &'static [u8] = b"items";

    fn step(&mut self, b: u8) -> Probe {
        let ws = matches!(b, b' ' | b'\t' | b'\r' | b'\n');
        let ok = match self.stage {
            0 => b == b'{',
            1 if ws => return Probe::Pending,
            1 => b == b'"',
            2..=6 => Self::KEY.get(usize::from(self.stage - 2)) == Some(&b),
            7 => b == b'"',
            8 | 9 if ws => return Probe::Pending,
            8 => b == b':',
            9 => {
                return if b == b'[' {
                    Probe::Matched
                } else {
                    Probe::Failed
                }
            }
            _ => false,
        };
        if ok {
            self.stage += 1;
            Probe::Pending
        } else {
            Probe::Failed
        }
    }
}

#[derive(Debug, Clone)]
enum State {
    /// Before the first byte: is there a byte-order mark?
    Bom { matched: usize },
    /// Between frames at the top level.
    Between { line_start: bool },
    /// Collecting a line of text up to its newline.
    Line {
        start: usize,
        line: usize,
        oversized: bool,
    },
    /// Inside a value at the top level.
    Value {
        start: usize,
        line: usize,
        scanner: ValueScanner,
        probe: Option<ItemsProbe>,
        line_start: bool,
        oversized: bool,
    },
    /// Inside a `<think>` block.
    Think { matched: usize },
    /// Inside a wrapper array, between elements.
    Elements { items: bool },
    /// A `//` comment between elements.
    ElementComment { items: bool },
    /// Inside an element that is an object, an array or a string.
    Element {
        start: usize,
        line: usize,
        scanner: ValueScanner,
        items: bool,
        oversized: bool,
    },
    /// Inside an element that is a bare scalar (a number, a literal).
    BareElement {
        start: usize,
        line: usize,
        items: bool,
        oversized: bool,
    },
    /// The rest of an `{"items": [...]}` object after its array.
    Tail { scanner: ValueScanner },
}

/// The framing state machine of a whole answer.
#[derive(Debug, Clone)]
pub(crate) struct Framer {
    config: FramerConfig,
    state: State,
    /// The line of the next byte to scan.
    line: usize,
}

const BOM: [u8; 3] = [0xEF, 0xBB, 0xBF];

/// The byte the framer is at, in the buffer it scans.
struct At<'a> {
    /// The buffer, whose first byte is at absolute offset `base`.
    buf: &'a [u8],
    base: usize,
    /// The byte's index in `buf`, and the byte.
    i: usize,
    b: u8,
}
const THINK_CLOSE: &[u8] = b"</think";

impl Framer {
    pub(crate) fn new(config: FramerConfig) -> Self {
        Framer {
            config,
            state: State::Bom { matched: 0 },
            line: 1,
        }
    }

    /// The absolute offset of the earliest byte the framer may still hand out (the start of the frame
    /// being collected), or `None` when no byte before the scan position is needed any more.
    pub(crate) fn keep_from(&self) -> Option<usize> {
        match &self.state {
            State::Bom { .. } => Some(0),
            State::Line {
                start, oversized, ..
            }
            | State::Value {
                start, oversized, ..
            }
            | State::Element {
                start, oversized, ..
            }
            | State::BareElement {
                start, oversized, ..
            } => (!oversized).then_some(*start),
            _ => None,
        }
    }

    /// Whether the frame being collected can only complete at a `}` or `]` (a value that opened
    /// with a bracket), and nothing but a newline can change what the framer does before that: then
    /// bytes without `}`, `]` or a newline may wait to be scanned until one comes.
    #[inline]
    pub(crate) fn awaits_bracket(&self) -> bool {
        match &self.state {
            State::Value {
                probe: None,
                scanner,
                ..
            }
            | State::Element { scanner, .. } => scanner.nested(),
            _ => false,
        }
    }

    /// Scans `buf` (whose first byte is at absolute offset `base`) from `*pos` until a frame
    /// completes or the bytes run out.
    pub(crate) fn next(&mut self, buf: &[u8], base: usize, pos: &mut usize) -> Option<Event> {
        loop {
            let i = pos.checked_sub(base)?;
            let &b = buf.get(i)?;
            let at = At { buf, base, i, b };
            let event = match self.state {
                State::Bom { .. } => self.bom(b, pos),
                State::Between { .. } => self.between(b, pos),
                State::Line { .. } => self.line(&at, pos),
                State::Value { .. } => self.value(&at, pos),
                State::Think { .. } => self.think(b, pos),
                State::Elements { .. } => self.elements(b, pos),
                State::ElementComment { .. } => self.element_comment(&at, pos),
                State::Element { .. } => self.element(&at, pos),
                State::BareElement { .. } => self.bare_element(&at, pos),
                State::Tail { .. } => self.tail(&at, pos),
            };
            if event.is_some() {
                return event;
            }
        }
    }

    /// Before the first byte: a byte-order mark is skipped.
    fn bom(&mut self, b: u8, pos: &mut usize) -> Option<Event> {
        let State::Bom { matched } = &mut self.state else {
            return None;
        };
        if BOM.get(*matched) == Some(&b) {
            *matched += 1;
            *pos += 1;
            if *matched == BOM.len() {
                self.state = State::Between { line_start: true };
            }
        } else {
            // Not a BOM after all: scan those bytes again as text.
            *pos -= *matched;
            self.state = State::Between { line_start: true };
        }
        None
    }

    /// Between frames: what the next byte begins.
    fn between(&mut self, b: u8, pos: &mut usize) -> Option<Event> {
        let State::Between { line_start } = &mut self.state else {
            return None;
        };
        let line = self.line;
        match b {
            b'\n' => {
                self.line += 1;
                *line_start = true;
                *pos += 1;
            }
            b' ' | b'\t' | b'\r' | 0 => *pos += 1,
            b',' if !*line_start => *pos += 1,
            b'[' if self.config.top_array_is_wrapper => {
                self.state = State::Elements { items: false };
                *pos += 1;
            }
            b'{' | b'[' => {
                let probe =
                    (b == b'{' && self.config.items_wrapper).then_some(ItemsProbe { stage: 0 });
                self.state = State::Value {
                    start: *pos,
                    line,
                    scanner: ValueScanner::new(),
                    probe,
                    line_start: false,
                    oversized: false,
                };
            }
            _ => {
                self.state = State::Line {
                    start: *pos,
                    line,
                    oversized: false,
                }
            }
        }
        None
    }

    /// A line of text, up to its newline.
    fn line(&mut self, at: &At, pos: &mut usize) -> Option<Event> {
        let State::Line {
            start,
            line: first,
            oversized,
        } = self.state
        else {
            return None;
        };
        let Some(offset) = memchr(b'\n', &at.buf[at.i..]) else {
            *pos = at.base + at.buf.len();
            return self.check_size(*pos);
        };
        let end = *pos + offset;
        *pos = end + 1;
        self.line += 1;
        self.state = State::Between { line_start: true };
        match oversized {
            true => None,
            false => self.end_line(at.buf, at.base, start, end, first, false),
        }
    }

    /// A value at the top level: first the start of a line that may break it, then the items
    /// probe, then the scan.
    fn value(&mut self, at: &At, pos: &mut usize) -> Option<Event> {
        if let Some(event) = self.value_breaks(at.b, pos) {
            return event;
        }
        let State::Value {
            start,
            scanner,
            probe,
            ..
        } = &mut self.state
        else {
            return None;
        };
        if let Some(p) = probe {
            // Byte by byte until the probe decides; the scanner reads the value after that.
            match p.step(at.b) {
                Probe::Matched => {
                    // The newlines the probe passed over.
                    let from = start.saturating_sub(at.base);
                    let read = at.buf.get(from..=at.i).unwrap_or_default();
                    self.line += read.iter().filter(|&&c| c == b'\n').count();
                    *pos += 1;
                    self.state = State::Elements { items: true };
                }
                // Not a wrapper: the value is scanned from its first byte (still held).
                Probe::Failed => {
                    *probe = None;
                    *pos = *start;
                }
                Probe::Pending => *pos += 1,
            }
            return None;
        }
        let scan = scanner.scan(&at.buf[at.i..], true);
        match scan {
            Scan::Closed(n) => {
                *pos += n;
                // A discarded (oversized) value yields nothing: go on scanning.
                self.close_frame(*pos)
            }
            Scan::Newline(n) => {
                *pos += n + 1;
                self.line += 1;
                if let State::Value { line_start, .. } = &mut self.state {
                    *line_start = true;
                }
                None
            }
            Scan::NeedMore => {
                *pos = at.base + at.buf.len();
                self.check_size(*pos)
            }
        }
    }

    /// At the start of a line inside a value: a new value (or a fence) there while this one is still
    /// open breaks this one, so it does not swallow the rest. `Some` when it broke (with the frame,
    /// unless the value was oversized).
    fn value_breaks(&mut self, b: u8, pos: &mut usize) -> Option<Option<Event>> {
        let State::Value {
            start,
            line: first,
            scanner,
            line_start,
            oversized,
            ..
        } = &mut self.state
        else {
            return None;
        };
        if !std::mem::take(line_start) {
            return None;
        }
        let breaks = if b == b'{' {
            scanner.in_string() || !matches!(scanner.last_significant(), b',' | b':' | b'[' | b'{')
        } else {
            b == b'`' && !scanner.in_string()
        };
        if !breaks {
            return None;
        }
        let frame = Frame {
            kind: FrameKind::Value,
            start: *start,
            end: *pos,
            line: *first,
            closed: false,
            at_end: false,
        };
        let oversized = *oversized;
        self.state = State::Between { line_start: true };
        Some(self.complete(frame, oversized))
    }

    /// Inside a `<think>` block, up to `</think…>`.
    fn think(&mut self, b: u8, pos: &mut usize) -> Option<Event> {
        let State::Think { matched } = &mut self.state else {
            return None;
        };
        if *matched == THINK_CLOSE.len() {
            // `</think` seen: skip to its `>` (also covers `</thinking>`).
            if b == b'>' {
                self.state = State::Between { line_start: false };
            } else if b == b'\n' {
                self.line += 1;
            }
        } else if THINK_CLOSE.get(*matched) == Some(&b) {
            *matched += 1;
        } else {
            *matched = usize::from(b == b'<');
            if b == b'\n' {
                self.line += 1;
            }
        }
        *pos += 1;
        None
    }

    /// Inside a wrapper array, between elements: what the next byte begins.
    fn elements(&mut self, b: u8, pos: &mut usize) -> Option<Event> {
        let State::Elements { items } = self.state else {
            return None;
        };
        let line = self.line;
        match b {
            b' ' | b'\t' | b'\r' | 0 | b',' => *pos += 1,
            b'\n' => {
                self.line += 1;
                *pos += 1;
            }
            b']' => {
                *pos += 1;
                self.state = if items {
                    State::Tail {
                        scanner: ValueScanner::inside_object(),
                    }
                } else {
                    State::Between { line_start: false }
                };
            }
            b'}' => {
                *pos += 1;
                self.state = State::Between { line_start: false };
            }
            b'/' => {
                *pos += 1;
                self.state = State::ElementComment { items };
            }
            b'{' | b'[' | b'"' | b'\'' => {
                self.state = State::Element {
                    start: *pos,
                    line,
                    scanner: ValueScanner::new(),
                    items,
                    oversized: false,
                }
            }
            _ => {
                self.state = State::BareElement {
                    start: *pos,
                    line,
                    items,
                    oversized: false,
                }
            }
        }
        None
    }

    /// A `//` comment between elements, to the end of its line.
    fn element_comment(&mut self, at: &At, pos: &mut usize) -> Option<Event> {
        let State::ElementComment { items } = self.state else {
            return None;
        };
        match memchr(b'\n', &at.buf[at.i..]) {
            Some(offset) => {
                *pos += offset + 1;
                self.line += 1;
                self.state = State::Elements { items };
            }
            None => *pos = at.base + at.buf.len(),
        }
        None
    }

    /// An element that is an object, an array or a string.
    fn element(&mut self, at: &At, pos: &mut usize) -> Option<Event> {
        let State::Element { scanner, .. } = &mut self.state else {
            return None;
        };
        match scanner.scan(&at.buf[at.i..], true) {
            Scan::Closed(n) => {
                *pos += n;
                self.close_frame(*pos)
            }
            Scan::Newline(n) => {
                *pos += n + 1;
                self.line += 1;
                None
            }
            Scan::NeedMore => {
                *pos = at.base + at.buf.len();
                self.check_size(*pos)
            }
        }
    }

    /// An element that is a bare scalar (a number, a literal), up to its delimiter.
    fn bare_element(&mut self, at: &At, pos: &mut usize) -> Option<Event> {
        let delimiter = at.buf[at.i..]
            .iter()
            .position(|&c| matches!(c, b',' | b']' | b'}' | b'\n' | b'\r' | b' ' | b'\t'));
        match delimiter {
            Some(offset) => {
                *pos += offset;
                self.close_frame(*pos)
            }
            None => {
                *pos = at.base + at.buf.len();
                self.check_size(*pos)
            }
        }
    }

    /// The value or element being collected closes at `end`: back between values, or between
    /// elements.
    fn close_frame(&mut self, end: usize) -> Option<Event> {
        let (kind, start, line, oversized, next) = match self.state {
            State::Value {
                start,
                line,
                oversized,
                ..
            } => (
                FrameKind::Value,
                start,
                line,
                oversized,
                State::Between { line_start: false },
            ),
            State::Element {
                start,
                line,
                items,
                oversized,
                ..
            }
            | State::BareElement {
                start,
                line,
                items,
                oversized,
            } => (
                FrameKind::Element,
                start,
                line,
                oversized,
                State::Elements { items },
            ),
            _ => return None,
        };
        self.state = next;
        let frame = Frame {
            kind,
            start,
            end,
            line,
            closed: true,
            at_end: false,
        };
        self.complete(frame, oversized)
    }

    /// The rest of an `{"items": [...]}` object after its array, skipped.
    fn tail(&mut self, at: &At, pos: &mut usize) -> Option<Event> {
        let State::Tail { scanner } = &mut self.state else {
            return None;
        };
        match scanner.scan(&at.buf[at.i..], true) {
            Scan::Closed(n) => {
                *pos += n;
                self.state = State::Between { line_start: false };
            }
            Scan::Newline(n) => {
                *pos += n + 1;
                self.line += 1;
            }
            Scan::NeedMore => *pos = at.base + at.buf.len(),
        }
        None
    }

    /// The end of the input: the frame still open, if any.
    pub(crate) fn finish(&mut self, buf: &[u8], base: usize, end: usize) -> Option<Event> {
        let state = std::mem::replace(&mut self.state, State::Between { line_start: true });
        let cut = |kind, start, line| {
            let frame = Frame {
                kind,
                start,
                end,
                line,
                closed: false,
                at_end: true,
            };
            self.complete(frame, false)
        };
        match state {
            State::Bom { matched } if matched > 0 => self.end_line(buf, base, 0, end, 1, true),
            State::Line {
                start,
                line,
                oversized: false,
            } => self.end_line(buf, base, start, end, line, true),
            State::Value {
                start,
                line,
                oversized: false,
                ..
            } => cut(FrameKind::Value, start, line),
            State::Element {
                start,
                line,
                oversized: false,
                ..
            }
            | State::BareElement {
                start,
                line,
                oversized: false,
                ..
            } => cut(FrameKind::Element, start, line),
            _ => None,
        }
    }

    /// A completed frame, or the report that it is too large (so the outcome does not depend on
    /// whether the frame arrived in one chunk or in many).
    fn complete(&self, frame: Frame, oversized: bool) -> Option<Event> {
        if oversized {
            None
        } else if frame.end - frame.start > self.config.max_frame {
            Some(Event::TooLarge {
                start: frame.start,
                line: frame.line,
            })
        } else {
            Some(Event::Frame(frame))
        }
    }

    /// Reports a frame that outgrew the limit, once, and stops keeping its bytes.
    fn check_size(&mut self, pos: usize) -> Option<Event> {
        let limit = self.config.max_frame;
        match &mut self.state {
            State::Line {
                start,
                line,
                oversized,
            }
            | State::Value {
                start,
                line,
                oversized,
                ..
            }
            | State::Element {
                start,
                line,
                oversized,
                ..
            }
            | State::BareElement {
                start,
                line,
                oversized,
                ..
            } if !*oversized && pos - *start > limit => {
                *oversized = true;
                Some(Event::TooLarge {
                    start: *start,
                    line: *line,
                })
            }
            _ => None,
        }
    }

    /// Classifies a finished line: blank lines, fences and bracket-only lines are envelope and
    /// vanish; a `<think>` line opens a thinking block; anything else is a line frame.
    fn end_line(
        &mut self,
        buf: &[u8],
        base: usize,
        start: usize,
        end: usize,
        line: usize,
        at_end: bool,
    ) -> Option<Event> {
        if end - start > self.config.max_frame {
            // Whatever the line holds: a chunked input reported it before its end was seen.
            return Some(Event::TooLarge { start, line });
        }
        let bytes = buf.get(start.checked_sub(base)?..end.checked_sub(base)?)?;
        let lead = bytes
            .iter()
            .position(|c| !matches!(c, b' ' | b'\t' | b'\r' | 0))?;
        let text = &bytes[lead..];
        if is_fence_marker(text)
            || text
                .iter()
                .all(|c| matches!(c, b']' | b'}' | b',' | b' ' | b'\t' | b'\r' | 0))
        {
            return None;
        }
        if text.starts_with(b"<think>") || text.starts_with(b"<thinking>") {
            let Some(close) = memchr::memmem::find(text, THINK_CLOSE) else {
                if !at_end {
                    self.state = State::Think { matched: 0 };
                }
                return None;
            };
            let after = close + memchr(b'>', &text[close..])? + 1;
            let rest = &text[after..];
            if rest.iter().all(|c| c.is_ascii_whitespace() || *c == 0) {
                return None;
            }
            let frame = Frame {
                kind: FrameKind::Line,
                start: start + lead + after,
                end,
                line,
                closed: true,
                at_end,
            };
            return self.complete(frame, false);
        }
        let frame = Frame {
            kind: FrameKind::Line,
            start,
            end,
            line,
            closed: true,
            at_end,
        };
        self.complete(frame, false)
    }
}

/// A fence line: backticks and perhaps a language tag, nothing else (a value on the same line
/// makes it a line frame like any other).
fn is_fence_marker(line: &[u8]) -> bool {
    let Some(rest) = line.strip_prefix(b"```") else {
        return false;
    };
    rest.iter().all(|c| {
        c.is_ascii_alphanumeric()
            || matches!(
                c,
                b'`' | b'-' | b'_' | b'+' | b'.' | b' ' | b'\t' | b'\r' | 0
            )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames(text: &[u8], chunk: usize, config: FramerConfig) -> Vec<(Event, String)> {
        let mut framer = Framer::new(config);
        let mut buf = Vec::new();
        let mut pos = 0;
        let mut out = Vec::new();
        let text_of = |buf: &[u8], e: &Event| match e {
            Event::Frame(f) => String::from_utf8_lossy(&buf[f.start..f.end]).into_owned(),
            Event::TooLarge { .. } => String::new(),
        };
        for piece in text.chunks(chunk.max(1)) {
            buf.extend_from_slice(piece);
            while let Some(e) = framer.next(&buf, 0, &mut pos) {
                out.push((e, text_of(&buf, &e)));
            }
        }
        if let Some(e) = framer.finish(&buf, 0, buf.len()) {
            out.push((e, text_of(&buf, &e)));
        }
        out
    }

    const CONFIG: FramerConfig = FramerConfig {
        top_array_is_wrapper: true,
        items_wrapper: true,
        max_frame: 1 << 20,
    };

    fn texts(text: &str) -> Vec<String> {
        let all = frames(text.as_bytes(), text.len(), CONFIG);
        for chunk in 1..text.len() {
            let other = frames(text.as_bytes(), chunk, CONFIG);
            assert_eq!(other, all, "chunk size {chunk}");
        }
        all.into_iter().map(|(_, t)| t).collect()
    }

    #[test]
    fn scanner_ignores_brackets_in_strings() {
        let mut s = ValueScanner::new();
        assert_eq!(s.scan(br#"{"a":"} ] \" {"}x"#, false), Scan::Closed(16));
        let mut s = ValueScanner::new();
        assert_eq!(s.scan(br#"{"a":"x"#, false), Scan::NeedMore);
        assert_eq!(s.scan(br#"\""}"#, false), Scan::Closed(4));
    }

    #[test]
    fn frames_lines_values_and_prose() {
        assert_eq!(
            texts("{\"a\":1}\nNote:\n{\n \"a\":2\n}\n\n```\n"),
            ["{\"a\":1}", "Note:", "{\n \"a\":2\n}"]
        );
    }

    #[test]
    fn frames_elements_of_wrappers() {
        assert_eq!(texts("[{\"a\":1}, 2 ,\"x\"]"), ["{\"a\":1}", "2", "\"x\""]);
        assert_eq!(
            texts("{\"items\": [ {\"a\":[1]} ,{\"a\":2}], \"n\": {\"x\": \"}\"}}\nend"),
            ["{\"a\":[1]}", "{\"a\":2}", "end"]
        );
        assert_eq!(texts("{\"item\": [1]}"), ["{\"item\": [1]}"]);
    }

    #[test]
    fn a_new_line_starting_a_value_ends_a_broken_one() {
        let got = frames(b"{\"a\":1\n{\"a\":2}", 100, CONFIG);
        assert!(matches!(
            got[0].0,
            Event::Frame(Frame {
                closed: false,
                at_end: false,
                ..
            })
        ));
        assert_eq!(got[1].1, "{\"a\":2}");
    }

    #[test]
    fn think_blocks_and_boms_vanish() {
        assert_eq!(
            texts("\u{feff}<think>\n{x}\n</think>\n{\"a\":1}\n<think>y</think> {\"a\":2}"),
            ["{\"a\":1}", " {\"a\":2}"]
        );
    }

    #[test]
    fn cut_frames_are_reported_at_the_end() {
        let got = frames(b"{\"a\":1}\n{\"a\":", 3, CONFIG);
        assert_eq!(got.len(), 2);
        assert!(matches!(
            got[1].0,
            Event::Frame(Frame {
                closed: false,
                at_end: true,
                ..
            })
        ));
    }

    #[test]
    fn oversized_frames_are_reported_once_and_skipped() {
        let config = FramerConfig {
            max_frame: 8,
            ..CONFIG
        };
        let text = b"{\"a\":\"0123456789abcdef\"}\n{\"a\":1}";
        // 30: the long value is discarded mid-way and closes in the same chunk as the next value.
        for chunk in [1, 3, 20, 30, 100] {
            let got = frames(text, chunk, config);
            assert!(
                matches!(got[0].0, Event::TooLarge { start: 0, line: 1 }),
                "{got:?}"
            );
            assert_eq!(got[1].1, "{\"a\":1}");
            assert_eq!(got.len(), 2);
        }
    }
}

//! The incremental partial-value parser: JSON fed in chunks of any size (cut anywhere, even inside an
//! escape or a multi-byte character) becomes a tree of partial values that grows as the answer is
//! written. It keeps its state between chunks and never reads a byte twice, so a whole answer costs
//! time linear in its length however finely it is chunked.
//!
//! The tree records, for every node, whether it is complete (its closing quote, bracket or delimiter
//! was read) and the number of the chunk that last changed it ([`Node::changed`]). Only the open path
//! from the root to the value being written can change, so a reader that remembers the chunk it last
//! looked at ([`PartialParser::chunk`]) revisits only what changed since (see [`super::partial_value`]).
//! The open path is exactly the nodes not complete yet: each holds the chunk it began in, and changed
//! in every chunk since that changed anything visible, so its stamp is read off the parser
//! ([`PartialParser`]'s `visible`) rather than written along the path at every chunk; a node's own
//! stamp is written once, when it completes. Likewise the open string, number or word is always the
//! end of the parser's text, so its span is brought up to date only when it ends.
//!
//! What it tolerates: prose or a code fence before the value (skipped up to the first `{` or `[` when
//! the schema wants an object or an array), trailing and doubled commas, unquoted keys, unquoted
//! text, Python tuples, invalid escapes (kept literally) and invalid UTF-8 (U+FFFD). Words, numbers
//! and escapes are read by the table the lenient parser uses (`literal`): every spelling of a literal
//! (`True`, `None`, `nil`, `NaN`), every number form (`.5`, `+1`), so a scalar the preview shows
//! complete is the one the final parse reads (a word completes only at the delimiter after it:
//! `true` may go on to `trueish`). What is lexical it takes from the lexer (`lex`): comments are
//! skipped by the lexer's comment machine ([`lex::Comment`], kept between chunks), unquoted text
//! ends where the lexer says ([`lex::text_end`]), a number begins at [`lex::starts_number`], and a
//! string's plain text, number runs and whitespace are skipped with its primitives. It is a preview:
//! the answer's final value always comes from the full pipeline ([`super::from_str_with`]).

use super::{lex, literal};

use serde_json::Value;
use std::collections::HashMap;
use std::sync::Arc;

/// The deepest nesting the parser follows; deeper input ends the preview there (the full parse decides).
const MAX_DEPTH: usize = super::MAX_DEPTH_LIMIT;

/// An incremental parser of one JSON value into a tree of partial values.
///
/// ```
/// use llm_extract::parse::PartialParser;
///
/// let mut parser = PartialParser::new(true);
/// parser.feed(br#"Sure: {"name": "Ada Lo"#);
/// let root = parser.root().unwrap();
/// assert_eq!(root.get("name").and_then(|n| n.as_str()), Some("Ada Lo"));
/// assert!(!root.is_complete());
/// parser.feed(br#"velace", "age": 36}"#);
/// let root = parser.root().unwrap();
/// assert_eq!(root.get("age").and_then(|n| n.number()), Some("36"));
/// assert!(root.is_complete());
/// ```
#[derive(Debug, Clone)]
pub struct PartialParser {
    nodes: Vec<NodeData>,
    /// The open containers, outermost first.
    stack: Vec<Frame>,
    state: State,
    /// The scalar being read (a string, number or literal).
    scalar: Option<Frame>,
    /// Every string, key, number and word read, one after the other: nodes hold spans of it (one
    /// buffer, not an allocation per node). What is being read is always at its end.
    text: String,
    /// The key being read, or read and waiting for its value.
    key: Span,
    /// Whether string bytes go to `key` (else to the scalar).
    in_key: bool,
    /// The bytes of a UTF-8 character cut by the end of a chunk.
    utf8: Vec<u8>,
    /// A `\uXXXX` high surrogate waiting for its low half.
    high: Option<u32>,
    /// The chunk number (one per [`PartialParser::feed`]).
    chunk: u64,
    /// Whether the current chunk changed anything visible.
    dirty: bool,
    /// The depth of the shallowest node the current chunk changed (see [`PartialParser::changed_depth`]).
    shallowest: usize,
    /// The last chunk that changed anything visible: the [`Node::changed`] of every node still open
    /// (each is on the open path, which every such chunk changed) that began before it.
    visible: u64,
    /// Whether the current chunk changed the tree other than by appending to the string value being
    /// read or ending it (a node added, a container closed, a number or word ended).
    other: bool,
    /// Where the text of the string value being read stood when the current chunk began, and where
    /// the chunk's last append to it left it (see [`PartialParser::grown`]).
    grown: Span,
    /// Nodes closed since [`PartialParser::take_closed`] was last called.
    closed: Vec<u32>,
    /// The depths (stack lengths) of the open tuples, innermost last.
    tuples: Vec<usize>,
    /// The state a comment interrupted, resumed after it (comments are skipped, as the lenient
    /// parser skips them).
    resume: State,
    /// Whether the value must be an object or an array (prose before it is skipped).
    container: bool,
    /// The key index of each object with more than [`INDEXED`] members, by the object's node: so
    /// [`Node::get`] takes the same time however many members an object has (a flood of keys the
    /// type does not know would otherwise make every look-up, once per chunk, a scan of them all).
    indexes: HashMap<u32, HashMap<Box<str>, u32>>,
    /// The key of each container a closed value's path went through, by the container's node.
    path_keys: HashMap<u32, Arc<str>>,
}

/// The number of members up to which an object is searched member by member (no index).
const INDEXED: usize = 16;

/// A span of [`PartialParser`]'s text.
#[derive(Debug, Clone, Copy, Default)]
struct Span {
    start: usize,
    end: usize,
}

impl Span {
    /// An empty span at `at`.
    fn at(at: usize) -> Span {
        Span { start: at, end: at }
    }
}

/// One open container or scalar: its node.
#[derive(Debug, Clone, Copy)]
struct Frame {
    id: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Before the value: skipping prose.
    Seek,
    /// Expecting a value.
    Value,
    /// In an object, expecting a key (or its end).
    Key,
    /// Reading an unquoted key.
    BareKey,
    /// After a key, expecting `:`.
    Colon,
    /// After a value in a container, expecting `,` or its end.
    After,
    /// Inside a string (a key or a value).
    Str,
    /// After a backslash in a string.
    Escape,
    /// Inside `\uXXXX`: the digits read so far, as written.
    Unicode { digits: u8, raw: [u8; 4] },
    /// Inside a number.
    Number,
    /// Inside a bare word (`true`, `null`, `None`, ...).
    Literal,
    /// After a `/` between tokens (a comment begins, or the `/` was stray), or inside a comment:
    /// the lexer's comment machine, resumed in each chunk.
    Comment(lex::Comment),
    /// The value is complete (or nested too deep): the rest is ignored.
    End,
}

#[derive(Debug, Clone)]
struct NodeData {
    kind: Kind,
    complete: bool,
    changed: u64,
    /// The chunk that began it.
    created: u64,
}

#[derive(Debug, Clone)]
enum Kind {
    Null,
    Bool(bool),
    /// The number as written.
    Number(Span),
    String(Span),
    /// A bare word while it is read.
    Word(Span),
    Array(Vec<u32>),
    Object(Vec<(Span, u32)>),
}

/// A step of a node's path: an object key or an array index.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum PathSegment {
    /// A key of an object (shared by the paths of everything under it, so a long key is not
    /// copied once per value closed beneath it).
    Key(Arc<str>),
    /// An index in an array.
    Index(usize),
}

/// Where a node sits in the value, from the root: `lines[3].amount`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct JsonPath(pub Vec<PathSegment>);

impl std::fmt::Display for JsonPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, segment) in self.0.iter().enumerate() {
            match segment {
                PathSegment::Key(key) if i == 0 => f.write_str(key)?,
                PathSegment::Key(key) => write!(f, ".{key}")?,
                PathSegment::Index(index) => write!(f, "[{index}]")?,
            }
        }
        Ok(())
    }
}

impl Default for PartialParser {
    fn default() -> Self {
        PartialParser::new(true)
    }
}

impl PartialParser {
    /// A parser of one value; `container`: the value is an object or an array, and anything before
    /// its first `{` or `[` is skipped (else the value starts at the first character that can start
    /// JSON).
    pub fn new(container: bool) -> Self {
        PartialParser {
            nodes: Vec::new(),
            stack: Vec::new(),
            state: State::Seek,
            scalar: None,
            text: String::new(),
            key: Span::default(),
            in_key: false,
            utf8: Vec::new(),
            high: None,
            chunk: 0,
            dirty: false,
            visible: 0,
            shallowest: usize::MAX,
            other: false,
            grown: Span::default(),
            closed: Vec::new(),
            tuples: Vec::new(),
            resume: State::Value,
            container,
            indexes: HashMap::new(),
            path_keys: HashMap::new(),
        }
    }

    /// The number of chunks fed so far: the [`Node::changed`] of what the last chunk changed.
    pub fn chunk(&self) -> u64 {
        self.chunk
    }

    /// The value read so far, once it has begun.
    pub fn root(&self) -> Option<Node<'_>> {
        (!self.nodes.is_empty()).then(|| Node::new(self, 0))
    }

    /// The node at `depth` on the open path (the root is 0) while it is an open container, or the
    /// root at depth 0 once the root is complete or a scalar: what a reader that knows the steps to
    /// that depth brings up to date (see [`PartialValue::update_at`](super::PartialValue::update_at)).
    pub fn open_node(&self, depth: usize) -> Option<Node<'_>> {
        match self.stack.get(depth) {
            Some(frame) => Some(Node::new(self, frame.id)),
            None if depth == 0 => self.root(),
            None => None,
        }
    }

    /// The number of containers open (the depth of the value being written, under them).
    pub fn open_depth(&self) -> usize {
        self.stack.len()
    }

    /// Whether the last chunk did nothing but append to the string value being read (escapes and
    /// characters cut across chunks included), and perhaps end it with its closing quote: then the
    /// only node it changed is that string, at the end of the open path (each container's last member
    /// or item, see [`Node::last_entry`] and [`Node::last_item`]), and a reader may append to its copy
    /// of that string instead of walking the tree. `false` whenever anything else may have changed,
    /// and when nothing visible changed.
    pub fn only_grew(&self) -> bool {
        self.dirty && !self.other
    }

    /// What the last chunk appended to the string value being read, when it did nothing else
    /// ([`PartialParser::only_grew`]): so a reader whose copy of that string was up to date before the
    /// chunk appends this, without reading the string from the tree.
    #[inline]
    pub fn grown(&self) -> &str {
        self.text
            .get(self.grown.start..self.grown.end)
            .unwrap_or_default()
    }

    /// The depth (the root is 0) of the shallowest node of the open path that the last chunk changed
    /// other than by changes below it: it gained a member or item, or one of its members or items
    /// was completed, or, for the string being read, it grew. Every node above it on the open path
    /// is as it was but for its change stamp, so a reader may bring its value up to date from there
    /// (see [`PartialValue::update_below`](super::PartialValue::update_below)). `usize::MAX` when the
    /// chunk changed nothing.
    pub fn changed_depth(&self) -> usize {
        self.shallowest
    }

    /// Notes a change to the node at `depth` (see [`PartialParser::changed_depth`]).
    #[inline]
    fn changed_at(&mut self, depth: usize) {
        self.shallowest = self.shallowest.min(depth);
    }

    /// Notes a change to the members of the innermost open container (the root when none is open).
    #[inline]
    fn changed_here(&mut self) {
        self.changed_at(self.stack.len().saturating_sub(1));
    }

    /// Whether the whole value has been read (what follows it is ignored).
    pub fn is_done(&self) -> bool {
        self.root().is_some_and(Node::is_complete)
    }

    /// The nodes closed since the last call, in the order they closed (innermost first), each with
    /// its path; the root is among them once the value is complete.
    pub fn take_closed(&mut self) -> Vec<(JsonPath, Node<'_>)> {
        let closed = std::mem::take(&mut self.closed);
        let paths: Vec<(JsonPath, u32)> = closed
            .into_iter()
            .map(|id| (self.path_of(id), id))
            .collect();
        let this: &Self = self;
        paths
            .into_iter()
            .map(|(path, id)| (path, Node::new(this, id)))
            .collect()
    }

    /// Reads the next chunk. Each call is one chunk: what it changes gets a new [`Node::changed`].
    ///
    /// The two commonest small chunks, whitespace between tokens and plain text inside a string,
    /// are read here, inlined into the caller's loop; anything else goes to the token loop.
    #[inline]
    pub fn feed(&mut self, bytes: &[u8]) {
        self.chunk += 1;
        self.dirty = false;
        self.other = false;
        self.shallowest = usize::MAX;
        self.grown = Span::at(self.text.len());
        match self.state {
            State::Str if self.utf8.is_empty() && self.high.is_none() && !bytes.is_empty() => {
                // ASCII text, no quote, no escape: each byte is its character, so no UTF-8 check
                // (which costs more than the copy on a chunk this small).
                if let Some(text) = plain(bytes) {
                    self.text.push_str(text);
                    self.pushed();
                    self.stamp();
                    return;
                }
            }
            State::Value | State::Key | State::Colon | State::After => {
                // Whitespace first: a chunk of indentation alone changes nothing (it is counted,
                // and nothing is stamped); the token loop starts after it, not scanning it again.
                let start = lex::space_end(bytes, 0);
                if start < bytes.len() {
                    self.tokens(bytes, start);
                }
                return;
            }
            _ => {}
        }
        self.tokens(bytes, 0);
    }

    /// [`PartialParser::feed`]'s token loop, from `bytes[i]`: everything but its two quick cases.
    #[inline(never)]
    fn tokens(&mut self, bytes: &[u8], mut i: usize) {
        while i < bytes.len() {
            i = self.step(bytes, i);
            if matches!(
                self.state,
                State::Value | State::Key | State::Colon | State::After
            ) {
                // Whitespace between tokens (most of a pretty-printed answer's indentation).
                i = lex::space_end(bytes, i);
            }
        }
        self.stamp();
    }

    /// Notes that this chunk changed the open path, if anything visible changed (see `visible`).
    #[inline]
    fn stamp(&mut self) {
        if self.dirty {
            self.visible = self.chunk;
        }
    }

    /// Consumes input from `bytes[i]`; returns where to continue.
    fn step(&mut self, bytes: &[u8], i: usize) -> usize {
        let Some(&byte) = bytes.get(i) else {
            return bytes.len();
        };
        match self.state {
            State::End => bytes.len(),
            State::Seek => self.seek(byte, i),
            State::Value | State::Key | State::Colon | State::After if byte == b'/' => {
                self.resume = self.state;
                self.state = State::Comment(lex::Comment::Slash);
                i + 1
            }
            State::Comment(comment) => self.comment(bytes, i, comment),
            State::Value => self.value(byte, i),
            State::Key => self.key(byte, i),
            State::BareKey => self.bare_key(byte, i),
            State::Colon => self.colon(byte, i),
            State::After => self.after(byte, i),
            State::Str => self.string(bytes, i),
            State::Escape => self.escape(byte, i),
            State::Unicode { digits, raw } => self.unicode(byte, i, digits, raw),
            State::Number => self.number(bytes, i),
            State::Literal => self.word(bytes, i),
        }
    }

    /// A byte of the prose before the value: the value begins at a byte that can begin it.
    fn seek(&mut self, byte: u8, i: usize) -> usize {
        let start = match byte {
            b'{' | b'[' => true,
            b'"' | b'-' | b'0'..=b'9' => !self.container,
            _ => false,
        };
        if start {
            self.state = State::Value;
            i
        } else {
            i + 1
        }
    }

    /// Bytes from `bytes[i]` after a `/` between tokens or inside a comment (`comment`, the lexer's
    /// machine): the comment is skipped to its end; a `/` that opens none is, where a value goes, a
    /// word that begins with `/` (`/path`), as the lenient parser reads it, elsewhere a stray `/`,
    /// dropped.
    fn comment(&mut self, bytes: &[u8], i: usize, mut comment: lex::Comment) -> usize {
        match comment.read(bytes, i) {
            lex::Read::More => {
                self.state = State::Comment(comment);
                bytes.len()
            }
            lex::Read::Ended(end) => {
                self.state = self.resume;
                end
            }
            lex::Read::NoComment(at) => {
                // The byte after the `/` is read again.
                self.state = self.resume;
                if self.resume == State::Value {
                    self.begin_scalar(Kind::Word(Span::at(self.text.len())), State::Literal);
                    self.utf8.push(b'/');
                }
                at
            }
        }
    }

    /// A byte where an object's key (or its end) is expected.
    fn key(&mut self, byte: u8, i: usize) -> usize {
        match byte {
            b'"' => {
                self.key = Span::at(self.text.len());
                self.in_key = true;
                self.state = State::Str;
            }
            b'}' | b']' | b')' => self.close(),
            // A name, which a `-` does not begin.
            b if lex::is_name_byte(b) && b != b'-' => {
                self.key = Span::at(self.text.len());
                self.push_key_byte(b);
                self.state = State::BareKey;
            }
            // Whitespace, doubled commas, stray quotes: skipped.
            _ => {}
        }
        i + 1
    }

    /// A byte of an unquoted key, or the byte after it (read again after the colon's state).
    fn bare_key(&mut self, byte: u8, i: usize) -> usize {
        if lex::is_name_byte(byte) {
            self.push_key_byte(byte);
            i + 1
        } else {
            self.state = State::Colon;
            i
        }
    }

    /// A byte after a key, where its colon is expected.
    fn colon(&mut self, byte: u8, i: usize) -> usize {
        match byte {
            // `{"key", 105}`: a comma where the colon belongs, as the lenient parser reads it.
            b':' | b',' => self.state = State::Value,
            b'}' | b']' | b')' => self.close(),
            b'"' => {
                // `{"a": 1, COMMENT "b": 2}`: the word before was stray; this is the key.
                self.key = Span::at(self.text.len());
                self.in_key = true;
                self.state = State::Str;
            }
            _ => {}
        }
        i + 1
    }

    /// A byte after a value in a container, where `,` or its end is expected.
    fn after(&mut self, byte: u8, i: usize) -> usize {
        match byte {
            b',' => self.state = self.after_comma(),
            b'}' | b']' | b')' => self.close(),
            b'"' if self.top_is_object() => {
                // A missing comma between two members.
                self.state = State::Key;
                return i;
            }
            _ => {}
        }
        i + 1
    }

    /// The byte after a backslash in a string.
    fn escape(&mut self, byte: u8, i: usize) -> usize {
        self.state = State::Str;
        if byte == b'u' {
            self.state = State::Unicode {
                digits: 0,
                raw: [0; 4],
            };
            return i + 1;
        }
        self.flush_high();
        match literal::escape(byte, false) {
            Some(decoded) => {
                self.push_char(decoded);
                i + 1
            }
            // An invalid escape keeps its backslash; the byte is read again as text.
            None => {
                self.push_char('\\');
                i
            }
        }
    }

    /// A byte of a `\uXXXX` escape, of which `digits` were read (`raw`, as written).
    fn unicode(&mut self, byte: u8, i: usize, digits: u8, mut raw: [u8; 4]) -> usize {
        if !byte.is_ascii_hexdigit() {
            // An invalid `\u` escape is kept literally, as written; the byte is read again.
            self.flush_high();
            self.push_str("\\u");
            let written = raw.get(..usize::from(digits)).and_then(ascii);
            self.push_str(written.unwrap_or_default());
            self.state = State::Str;
            return i;
        }
        if let Some(slot) = raw.get_mut(usize::from(digits)) {
            *slot = byte;
        }
        if digits < 3 {
            self.state = State::Unicode {
                digits: digits + 1,
                raw,
            };
        } else {
            self.state = State::Str;
            self.code_unit(literal::hex4(&raw).unwrap_or(0xFFFD));
        }
        i + 1
    }

    /// Bytes of a number from `bytes[i]`, up to the byte that ends it (or makes it a word).
    fn number(&mut self, bytes: &[u8], i: usize) -> usize {
        let rest = bytes.get(i..).unwrap_or_default();
        let run = lex::number_end(rest, 0);
        if run > 0 {
            // ASCII by the test above: each byte is its character.
            let digits = rest.get(..run).and_then(ascii).unwrap_or_default();
            self.text.push_str(digits);
            return i + run;
        }
        if rest
            .first()
            .is_some_and(|&b| literal::number_goes_on_as_word(b))
        {
            // `10px`, `82_461_110`: a word after all.
            let start = match self.scalar_kind() {
                Some(Kind::Number(span)) => span.start,
                _ => self.text.len(),
            };
            // Its bytes so far move to where a word's are held until it ends.
            let digits = self.text.get(start..).unwrap_or_default().as_bytes();
            self.utf8.extend_from_slice(digits);
            self.text.truncate(start);
            self.set_scalar_kind(Kind::Word(Span::at(start)));
            self.state = State::Literal;
            return i;
        }
        self.finish_scalar();
        i
    }

    /// Bytes of a bare word from `bytes[i]`, up to the delimiter that ends it.
    fn word(&mut self, bytes: &[u8], i: usize) -> usize {
        let rest = bytes.get(i..).unwrap_or_default();
        let run = lex::text_end(rest, 0, self.top_is_tuple());
        if run > 0 {
            // Bytes of the word, cut characters included: it is read whole at its end.
            self.utf8
                .extend_from_slice(rest.get(..run).unwrap_or_default());
            return i + run;
        }
        self.end_word();
        i
    }

    /// A byte where a value is expected.
    fn value(&mut self, byte: u8, i: usize) -> usize {
        match byte {
            // Room for a typical object's members or list's items: one allocation, not several.
            b'{' => self.open(Kind::Object(Vec::with_capacity(8))),
            b'[' => self.open(Kind::Array(Vec::with_capacity(4))),
            b'"' => {
                self.in_key = false;
                self.begin_scalar(Kind::String(Span::at(self.text.len())), State::Str);
            }
            b if lex::starts_number(b) => {
                self.begin_scalar(Kind::Number(Span::at(self.text.len())), State::Number);
                self.extend_scalar(char::from(byte).encode_utf8(&mut [0; 4]));
            }
            b'(' => {
                self.open(Kind::Array(Vec::with_capacity(4)));
                self.tuples.push(self.stack.len());
            }
            b if !b.is_ascii_whitespace() && !lex::ends_text(b, true) => {
                // A word: a literal in any spelling, or unquoted text, read whole at its end.
                self.begin_scalar(Kind::Word(Span::at(self.text.len())), State::Literal);
                return i;
            }
            // `[1,]`, `{"a": }`: the container ends without this value.
            b']' | b'}' | b')' if !self.stack.is_empty() => self.close(),
            _ => {}
        }
        i + 1
    }

    /// Whether the innermost open container is a tuple (`(1, 2)`, read as an array).
    fn top_is_tuple(&self) -> bool {
        self.tuples.last() == Some(&self.stack.len())
    }

    /// The word being read ends: its bytes (held in `utf8`) are read as the table says, a literal
    /// or text, trimmed at the end, as the lenient parser reads them.
    fn end_word(&mut self) {
        let held = std::mem::take(&mut self.utf8);
        let kind = {
            let word = String::from_utf8_lossy(&held);
            let word = word.trim_end();
            let start = self.text.len();
            match literal::word(word) {
                Some((Value::Bool(flag), _)) => Kind::Bool(flag),
                Some(_) => Kind::Null,
                None => {
                    self.text.push_str(word);
                    Kind::String(Span {
                        start,
                        end: self.text.len(),
                    })
                }
            }
        };
        self.utf8 = held;
        self.utf8.clear();
        self.set_scalar_kind(kind);
        self.finish_scalar();
    }

    fn top_is_object(&self) -> bool {
        self.stack
            .last()
            .and_then(|frame| self.nodes.get(frame.id as usize))
            .is_some_and(|node| matches!(node.kind, Kind::Object(_)))
    }

    fn after_comma(&self) -> State {
        if self.top_is_object() {
            State::Key
        } else {
            State::Value
        }
    }

    /// Adds a node to the open container (or as the root); returns its frame, or `None` when the
    /// nesting is too deep (the preview ends there).
    fn add(&mut self, kind: Kind) -> Option<Frame> {
        self.other = true;
        self.changed_here();
        if self.stack.len() >= MAX_DEPTH {
            self.state = State::End;
            return None;
        }
        let id = u32::try_from(self.nodes.len()).ok()?;
        let parent = self.stack.last().map(|frame| frame.id);
        if let Some((parent, parent_data)) =
            parent.and_then(|p| Some((p, self.nodes.get_mut(p as usize)?)))
        {
            match &mut parent_data.kind {
                Kind::Object(entries) => {
                    entries.push((std::mem::take(&mut self.key), id));
                    if entries.len() > INDEXED {
                        let index = self.indexes.entry(parent).or_default();
                        // The first time past the limit, every member so far; then each new one.
                        let new = if index.is_empty() {
                            0
                        } else {
                            entries.len() - 1
                        };
                        for (key, child) in entries.get(new..).unwrap_or_default() {
                            let key = self.text.get(key.start..key.end).unwrap_or_default();
                            index.insert(key.into(), *child);
                        }
                    }
                }
                Kind::Array(items) => items.push(id),
                _ => {}
            }
        } else if !self.nodes.is_empty() {
            // A second top-level value: ignored.
            self.state = State::End;
            return None;
        }
        // A number or word begun shows nothing until it ends (then it is stamped changed).
        self.dirty |= !matches!(kind, Kind::Number(_) | Kind::Word(_));
        self.nodes.push(NodeData {
            kind,
            complete: false,
            changed: self.chunk,
            created: self.chunk,
        });
        Some(Frame { id })
    }

    fn open(&mut self, kind: Kind) {
        let is_object = matches!(kind, Kind::Object(_));
        if let Some(frame) = self.add(kind) {
            self.stack.push(frame);
            self.state = if is_object { State::Key } else { State::Value };
        }
    }

    fn begin_scalar(&mut self, kind: Kind, state: State) {
        if let Some(frame) = self.add(kind) {
            self.scalar = Some(frame);
            self.state = state;
        }
    }

    fn scalar_kind(&mut self) -> Option<&mut Kind> {
        let frame = self.scalar?;
        self.nodes
            .get_mut(frame.id as usize)
            .map(|node| &mut node.kind)
    }

    /// Brings the span of the scalar being read up to the end of the text: done when it ends or changes
    /// kind, not as it grows (while it is open, a reader takes its text to the end of the parser's
    /// text: see [`Node::text`]).
    fn sync_scalar(&mut self) {
        let end = self.text.len();
        if let Some(Kind::Number(span) | Kind::String(span) | Kind::Word(span)) = self.scalar_kind()
        {
            span.end = end;
        }
    }

    #[inline]
    fn slice(&self, span: Span) -> &str {
        self.text.get(span.start..span.end).unwrap_or_default()
    }

    /// Appends to the number or word being read (its span is the end of the text; see
    /// [`PartialParser::sync_scalar`]). Nothing visible changes: a number or word shows once complete.
    #[inline]
    fn extend_scalar(&mut self, more: &str) {
        self.text.push_str(more);
    }

    fn push_key_byte(&mut self, byte: u8) {
        self.text.push(char::from(byte));
        self.key.end = self.text.len();
    }

    fn set_scalar_kind(&mut self, kind: Kind) {
        if let Some(slot) = self.scalar_kind() {
            *slot = kind;
        }
    }

    /// The scalar being read is complete (a number or a word: see [`PartialParser::finish_string`]).
    fn finish_scalar(&mut self) {
        self.other = true;
        self.finish_string();
    }

    /// The string value being read is complete: the only change to it a reader of
    /// [`PartialParser::only_grew`] may skip (a string shows the same whether complete or not).
    fn finish_string(&mut self) {
        self.sync_scalar();
        if let Some(frame) = self.scalar.take() {
            self.complete(frame.id);
        }
        self.after_value();
    }

    /// After a value: the end of the root, or what follows an element or a member.
    fn after_value(&mut self) {
        self.state = if self.stack.is_empty() {
            State::End
        } else {
            State::After
        };
    }

    /// Completes node `id`, a member or item of the innermost open container (or the root).
    fn complete(&mut self, id: u32) {
        self.changed_here();
        if let Some(node) = self.nodes.get_mut(id as usize) {
            node.complete = true;
            node.changed = self.chunk;
        }
        self.dirty = true;
        self.closed.push(id);
    }

    /// Closes the innermost open container.
    fn close(&mut self) {
        self.other = true;
        if self.top_is_tuple() {
            self.tuples.pop();
        }
        if let Some(frame) = self.stack.pop() {
            self.complete(frame.id);
        }
        self.after_value();
    }

    /// Reads string bytes from `bytes[i]` up to the next quote or backslash.
    fn string(&mut self, bytes: &[u8], i: usize) -> usize {
        let rest = bytes.get(i..).unwrap_or_default();
        // The lexer's scan stops at control characters too: a preview keeps them as text.
        let mut run = lex::string_stop(rest, 0, b'"');
        while rest.get(run).is_some_and(|&b| b < 0x20) {
            run = lex::string_stop(rest, run + 1, b'"');
        }
        if run > 0 {
            self.flush_high();
            self.push_bytes(rest.get(..run).unwrap_or_default());
            return i + run;
        }
        if !self.utf8.is_empty() {
            // A character cut before a quote or backslash was invalid.
            self.utf8.clear();
            self.push_char(char::REPLACEMENT_CHARACTER);
        }
        match rest.first() {
            Some(b'\\') => self.state = State::Escape,
            Some(_) => {
                self.flush_high();
                if self.in_key {
                    self.in_key = false;
                    self.state = State::Colon;
                } else {
                    self.finish_string();
                }
            }
            None => {}
        }
        i + 1
    }

    /// Appends raw string bytes, holding back a character cut at the end of the chunk.
    fn push_bytes(&mut self, mut bytes: &[u8]) {
        let small = self.utf8.is_empty() && bytes.len() <= 16;
        if let Some(text) = small.then(|| ascii(bytes)).flatten() {
            // The common case in small chunks: a few ASCII bytes, valid as they are.
            self.text.push_str(text);
            self.pushed();
            return;
        }
        // Complete a character cut at the end of the previous chunk.
        while !self.utf8.is_empty() {
            let Some((&first, rest)) = bytes.split_first() else {
                return;
            };
            if first & 0xC0 != 0x80 {
                self.utf8.clear();
                self.push_char(char::REPLACEMENT_CHARACTER);
                break;
            }
            self.utf8.push(first);
            bytes = rest;
            // The held bytes are taken out to be read (no copy of the character), then put back
            // emptied, so their buffer is reused.
            let held = std::mem::take(&mut self.utf8);
            match std::str::from_utf8(&held) {
                Ok(text) => self.push_str(text),
                Err(e) if e.error_len().is_some() => self.push_char(char::REPLACEMENT_CHARACTER),
                Err(_) => {
                    self.utf8 = held;
                    continue;
                }
            }
            self.utf8 = held;
            self.utf8.clear();
        }
        while !bytes.is_empty() {
            match std::str::from_utf8(bytes) {
                Ok(text) => {
                    self.push_str(text);
                    return;
                }
                Err(e) => {
                    let (valid, rest) = bytes.split_at(e.valid_up_to());
                    // Nothing before a cut character: nothing changed (not stamped).
                    if !valid.is_empty() {
                        self.push_str(std::str::from_utf8(valid).unwrap_or_default());
                    }
                    match e.error_len() {
                        Some(len) => {
                            self.push_char(char::REPLACEMENT_CHARACTER);
                            bytes = rest.get(len..).unwrap_or_default();
                        }
                        None => {
                            self.utf8.extend_from_slice(rest);
                            return;
                        }
                    }
                }
            }
        }
    }

    /// A `\uXXXX` code unit: a character, or half of a surrogate pair.
    fn code_unit(&mut self, code: u32) {
        let high = self.high.take();
        if let Some(pair) = high.and_then(|high| literal::surrogate_pair(high, code)) {
            self.push_char(pair);
            return;
        }
        if high.is_some() {
            // A high surrogate without its low half.
            self.push_char(char::REPLACEMENT_CHARACTER);
        }
        if literal::is_high_surrogate(code) {
            self.high = Some(code);
        } else {
            self.push_char(char::from_u32(code).unwrap_or(char::REPLACEMENT_CHARACTER));
        }
    }

    /// A high surrogate not followed by `\u` and a low one stands alone: U+FFFD.
    #[inline]
    fn flush_high(&mut self) {
        if self.high.is_some() {
            self.high = None;
            self.push_char(char::REPLACEMENT_CHARACTER);
        }
    }

    fn push_char(&mut self, c: char) {
        let mut buffer = [0; 4];
        self.push_str(c.encode_utf8(&mut buffer));
    }

    /// Appends string text to the key or the string being read.
    #[inline]
    fn push_str(&mut self, text: &str) {
        self.text.push_str(text);
        self.pushed();
    }

    /// String text was appended: to the key, or to the string being read (whose span
    /// `sync_scalar` extends).
    #[inline]
    fn pushed(&mut self) {
        if self.in_key {
            self.key.end = self.text.len();
        } else {
            self.dirty = true;
            self.grown.end = self.text.len();
            // The string is a member or item of the innermost container, one level below it.
            self.changed_at(self.stack.len());
        }
    }

    /// The path of node `id`: walks down from the root, at each level to the child whose subtree
    /// holds `id` (children are numbered in order, so a binary search finds it). Time: the depth
    /// times a logarithm, plus the length of `id`'s own key; the keys of containers are shared.
    fn path_of(&mut self, id: u32) -> JsonPath {
        let mut segments = Vec::new();
        let mut at = 0u32;
        while at != id {
            let Some(node) = self.nodes.get(at as usize) else {
                break;
            };
            let next = match &node.kind {
                Kind::Object(entries) => {
                    let index = entries.partition_point(|&(_, child)| child <= id);
                    index
                        .checked_sub(1)
                        .and_then(|index| entries.get(index))
                        .map(|&(key, child)| {
                            let text = self.text.get(key.start..key.end).unwrap_or_default();
                            let key = if child == id {
                                Arc::from(text)
                            } else {
                                Arc::clone(
                                    self.path_keys
                                        .entry(child)
                                        .or_insert_with(|| Arc::from(text)),
                                )
                            };
                            (PathSegment::Key(key), child)
                        })
                }
                Kind::Array(items) => {
                    let index = items.partition_point(|&child| child <= id);
                    index
                        .checked_sub(1)
                        .and_then(|index| Some((PathSegment::Index(index), *items.get(index)?)))
                }
                _ => None,
            };
            let Some((segment, child)) = next else {
                break;
            };
            segments.push(segment);
            at = child;
        }
        JsonPath(segments)
    }
}

/// ASCII bytes as the text they are (each byte is its character), without the cost of a UTF-8 check,
/// which on the few bytes of a small chunk costs more than the copy; `None` for anything else.
#[inline]
fn ascii(bytes: &[u8]) -> Option<&str> {
    // SAFETY: ASCII is valid UTF-8.
    bytes
        .is_ascii()
        .then(|| unsafe { std::str::from_utf8_unchecked(bytes) })
}

/// `bytes` as text when they are all ASCII and hold no quote and no backslash: string text each of
/// whose bytes is its character. A chunk of 4 to 8 bytes is tested as one word (two 4-byte reads that
/// may overlap, which tests a byte twice but misses none), without a loop.
#[inline]
fn plain(bytes: &[u8]) -> Option<&str> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    // Whether any byte of `word` is zero.
    let zero = |word: u64| word.wrapping_sub(ONES) & !word & HIGH != 0;
    let word = |at: usize| {
        bytes
            .get(at..at + 4)
            .and_then(|four| <[u8; 4]>::try_from(four).ok())
            .map_or(0, |four| u64::from(u32::from_le_bytes(four)))
    };
    let clean = if (4..=8).contains(&bytes.len()) {
        let word = word(0) | word(bytes.len() - 4) << 32;
        word & HIGH == 0
            && !zero(word ^ (ONES * u64::from(b'"')))
            && !zero(word ^ (ONES * u64::from(b'\\')))
    } else {
        !bytes.iter().fold(false, |bad, &b| {
            bad | (b >= 0x80) | (b == b'"') | (b == b'\\')
        })
    };
    // SAFETY: ASCII is valid UTF-8.
    clean.then(|| unsafe { std::str::from_utf8_unchecked(bytes) })
}

/// A node of the partial tree, borrowed from its parser.
#[derive(Clone, Copy)]
pub struct Node<'a> {
    tree: &'a PartialParser,
    id: u32,
    /// The node's data, looked up once (a walk reads it several times per node).
    data: &'a NodeData,
}

impl std::fmt::Debug for Node<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Node")
            .field("id", &self.id)
            .field("complete", &self.is_complete())
            .finish_non_exhaustive()
    }
}

static EMPTY: NodeData = NodeData {
    kind: Kind::Null,
    complete: false,
    changed: 0,
    created: 0,
};

impl<'a> Node<'a> {
    #[inline]
    fn new(tree: &'a PartialParser, id: u32) -> Node<'a> {
        let data = tree.nodes.get(id as usize).unwrap_or(&EMPTY);
        Node { tree, id, data }
    }

    #[inline]
    fn data(self) -> &'a NodeData {
        self.data
    }

    #[inline]
    fn at(self, id: u32) -> Node<'a> {
        Node::new(self.tree, id)
    }

    /// Whether the value has been read to its end.
    #[inline]
    pub fn is_complete(self) -> bool {
        self.data().complete
    }

    /// The chunk that last changed this value or anything in it (see [`PartialParser::chunk`]).
    #[inline]
    pub fn changed(self) -> u64 {
        let data = self.data();
        match data.complete {
            true => data.changed,
            // Open: on the open path since it began, so changed by every chunk that changed anything.
            false => data.created.max(self.tree.visible),
        }
    }

    /// The text of a span of this scalar: to the end of the parser's text while it is open (the
    /// scalar being read is always last there, and its span is brought up to date when it ends).
    #[inline]
    fn text(self, span: Span) -> &'a str {
        match self.data().complete {
            true => self.tree.slice(span),
            false => self.tree.text.get(span.start..).unwrap_or_default(),
        }
    }

    /// The chunk that began this value: a reader that last looked after chunk `since` has seen it
    /// before exactly when `created() <= since` (a key written again is a new value, begun later).
    #[inline]
    pub fn created(self) -> u64 {
        self.data().created
    }

    /// Whether it is `null` (read whole).
    #[inline]
    pub fn is_null(self) -> bool {
        matches!(self.data().kind, Kind::Null) && self.is_complete()
    }

    /// The text of a string, as far as it has been read.
    #[inline]
    pub fn as_str(self) -> Option<&'a str> {
        match &self.data().kind {
            Kind::String(span) => Some(self.text(*span)),
            _ => None,
        }
    }

    /// A complete `true` or `false`.
    #[inline]
    pub fn as_bool(self) -> Option<bool> {
        match self.data().kind {
            Kind::Bool(flag) if self.is_complete() => Some(flag),
            _ => None,
        }
    }

    /// A complete number, as written.
    #[inline]
    pub fn number(self) -> Option<&'a str> {
        match &self.data().kind {
            Kind::Number(span) if self.is_complete() => Some(self.tree.slice(*span)),
            _ => None,
        }
    }

    /// A complete number as the final parse reads it (`.5` as `0.5`, `+1` as `1`); `None` for
    /// anything else, or a number that is none (`1.2.3`).
    pub fn as_number(self) -> Option<serde_json::Number> {
        literal::number(self.number()?).map(|(number, _)| number)
    }

    /// Whether it is an array.
    #[inline]
    pub fn is_array(self) -> bool {
        matches!(self.data().kind, Kind::Array(_))
    }

    /// Whether it is an object.
    #[inline]
    pub fn is_object(self) -> bool {
        matches!(self.data().kind, Kind::Object(_))
    }

    /// The items of an array so far (empty for anything else).
    #[inline]
    pub fn items(self) -> impl DoubleEndedIterator<Item = Node<'a>> + ExactSizeIterator + 'a {
        let ids: &'a [u32] = match &self.data().kind {
            Kind::Array(items) => items,
            _ => &[],
        };
        let tree = self.tree;
        ids.iter().map(move |&id| Node::new(tree, id))
    }

    /// The number of items of an array so far (0 for anything else).
    #[inline]
    pub fn len(self) -> usize {
        match &self.data().kind {
            Kind::Array(items) => items.len(),
            _ => 0,
        }
    }

    /// Whether an array has no items so far (true for anything else).
    #[inline]
    pub fn is_empty(self) -> bool {
        self.len() == 0
    }

    /// Item `index` of an array.
    #[inline]
    pub fn item(self, index: usize) -> Option<Node<'a>> {
        match &self.data().kind {
            Kind::Array(items) => items.get(index).map(|&id| self.at(id)),
            _ => None,
        }
    }

    /// The members of an object so far, in the order written (empty for anything else). A member
    /// appears once its value has begun.
    #[inline]
    pub fn entries(self) -> impl DoubleEndedIterator<Item = (&'a str, Node<'a>)> + 'a {
        let entries: &'a [(Span, u32)] = match &self.data().kind {
            Kind::Object(entries) => entries,
            _ => &[],
        };
        let tree = self.tree;
        entries
            .iter()
            .map(move |(key, id)| (tree.slice(*key), Node::new(tree, *id)))
    }

    /// The last member of an object so far (the one being written while the object is open).
    #[inline]
    pub fn last_entry(self) -> Option<(&'a str, Node<'a>)> {
        match &self.data().kind {
            Kind::Object(entries) => {
                let &(key, id) = entries.last()?;
                Some((self.tree.slice(key), self.at(id)))
            }
            _ => None,
        }
    }

    /// The last item of an array so far, with its index (the one being written while the array is
    /// open).
    #[inline]
    pub fn last_item(self) -> Option<(usize, Node<'a>)> {
        match &self.data().kind {
            Kind::Array(items) => Some((items.len().checked_sub(1)?, self.at(*items.last()?))),
            _ => None,
        }
    }

    /// The value of `key` (the last one written, as serde takes duplicates). It takes the same time
    /// however many members the object has (large objects are indexed by key).
    #[inline]
    pub fn get(self, key: &str) -> Option<Node<'a>> {
        let Kind::Object(entries) = &self.data().kind else {
            return None;
        };
        if entries.len() > INDEXED {
            let index = self.tree.indexes.get(&self.id)?;
            return index.get(key).map(|&id| self.at(id));
        }
        entries.iter().rev().find_map(|(k, id)| {
            #[cfg(test)]
            tests::COMPARED.with(|n| n.set(n.get() + 1));
            (self.tree.slice(*k) == key).then(|| self.at(*id))
        })
    }

    /// The index of the first item changed after chunk `since`: only the items from there on can
    /// differ from what a reader saw then (values are written left to right).
    #[inline]
    pub fn first_changed_item(self, since: u64) -> usize {
        let Kind::Array(items) = &self.data().kind else {
            return 0;
        };
        let unchanged = items
            .iter()
            .rev()
            .take_while(|&&id| self.at(id).changed() > since)
            .count();
        items.len() - unchanged
    }

    /// The members changed after chunk `since`, in order (a suffix of the members).
    #[inline]
    pub fn changed_entries(self, since: u64) -> impl Iterator<Item = (&'a str, Node<'a>)> + 'a {
        let entries: &'a [(Span, u32)] = match &self.data().kind {
            Kind::Object(entries) => entries,
            _ => &[],
        };
        let tree = self.tree;
        let unchanged = entries
            .iter()
            .rev()
            .take_while(|(_, id)| self.at(*id).changed() > since)
            .count();
        entries
            .get(entries.len() - unchanged..)
            .unwrap_or_default()
            .iter()
            .map(move |(key, id)| (tree.slice(*key), Node::new(tree, *id)))
    }

    /// Whether [`Node::to_value`] includes it: anything but a number or word not read to its end.
    #[inline]
    fn readable(self) -> bool {
        self.is_complete() || !matches!(self.data().kind, Kind::Number(_) | Kind::Word(_))
    }

    /// The value as JSON: what has been read, with incomplete numbers and words left out (a string
    /// as far as it has been read).
    pub fn to_value(self) -> Value {
        match &self.data().kind {
            Kind::Null => Value::Null,
            Kind::Bool(flag) => Value::Bool(*flag),
            Kind::Number(_) => self.as_number().map_or(Value::Null, Value::Number),
            Kind::String(span) => Value::String(self.text(*span).to_owned()),
            Kind::Word(_) => Value::Null,
            Kind::Array(_) => Value::Array(
                self.items()
                    .filter(|item| item.readable())
                    .map(Node::to_value)
                    .collect(),
            ),
            Kind::Object(_) => Value::Object(
                self.entries()
                    .filter(|(_, item)| item.readable())
                    .map(|(key, item)| (key.to_owned(), item.to_value()))
                    .collect(),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;
    use std::cell::Cell;

    thread_local! {
        /// The keys [`Node::get`] has compared on this thread (its work).
        pub(super) static COMPARED: Cell<u64> = const { Cell::new(0) };
    }

    fn fed(chunks: &[&[u8]]) -> PartialParser {
        let mut parser = PartialParser::new(true);
        for chunk in chunks {
            parser.feed(chunk);
        }
        parser
    }

    #[test]
    fn grows_and_completes() {
        let mut parser = fed(&[b"```json\n{\"a\": \"he", b"llo\", \"n\": 1"]);
        let root = parser.root().unwrap();
        assert_eq!(root.get("a").unwrap().as_str(), Some("hello"));
        assert!(root.get("a").unwrap().is_complete());
        // A number is complete only once a delimiter follows it.
        assert_eq!(root.get("n").unwrap().number(), None);
        parser.feed(b"2, \"t\": [true, null, tr");
        let root = parser.root().unwrap();
        assert_eq!(root.get("n").unwrap().number(), Some("12"));
        assert_eq!(
            root.to_value(),
            json!({"a": "hello", "n": 12, "t": [true, null]})
        );
        parser.feed(b"ue]}\n``` trailing {\"x\": 1}");
        assert!(parser.is_done());
        assert_eq!(
            parser.root().unwrap().to_value(),
            json!({"a": "hello", "n": 12, "t": [true, null, true]})
        );
    }

    #[test]
    fn escapes_and_characters_cut_anywhere() {
        let text = r#"{"s": "a\"b\\c\u00e9\ud83d\ude00 é😀 \n"}"#.as_bytes();
        let whole = serde_json::from_slice::<Value>(text).unwrap();
        for size in 1..=7 {
            let mut parser = PartialParser::new(true);
            for chunk in text.chunks(size) {
                parser.feed(chunk);
                // Never a replacement character in the growing text.
                let partial = parser
                    .root()
                    .and_then(|r| r.get("s"))
                    .and_then(|s| s.as_str());
                assert!(
                    !partial.unwrap_or("").contains('\u{FFFD}'),
                    "{size}: {partial:?}"
                );
            }
            assert_eq!(parser.root().unwrap().to_value(), whole, "chunks of {size}");
        }
    }

    #[test]
    fn lenient_syntax() {
        let parser = fed(&[b"{a: 1, 'b': True, \"c\": [1,,2,], \"d\": None,}"]);
        let root = parser.root().unwrap();
        assert!(root.is_complete());
        assert_eq!(root.get("a").unwrap().number(), Some("1"));
        assert_eq!(root.get("d").map(Node::is_null), Some(true));
        assert_eq!(root.get("c").unwrap().to_value(), json!([1, 2]));
    }

    #[test]
    fn comments_are_skipped_however_they_are_cut() {
        let text = "{\"a\": /* x ** / */ 1, // line */\n \"b\": /path, \"s\": 2 /x,\n\
                    /**/ \"c\": [1 /***/, 2] // end\n}";
        let want = json!({"a": 1, "b": "/path", "s": 2, "c": [1, 2]});
        let bytes = text.as_bytes();
        let whole = fed(&[bytes]);
        assert!(whole.is_done());
        assert_eq!(whole.root().unwrap().to_value(), want);
        for cut in 0..=bytes.len() {
            let (head, tail) = bytes.split_at(cut);
            let parser = fed(&[head, tail]);
            assert_eq!(parser.root().unwrap().to_value(), want, "cut at {cut}");
            assert!(parser.is_done(), "cut at {cut}");
        }
        let mut parser = PartialParser::new(true);
        for byte in bytes {
            parser.feed(std::slice::from_ref(byte));
        }
        assert_eq!(parser.root().unwrap().to_value(), want);
        // A comment the input ends in leaves what came before it.
        let open = fed(&[b"{\"a\": 1 /* open *", b"* /"]);
        assert_eq!(open.root().unwrap().to_value(), json!({"a": 1}));
        assert!(!open.is_done());
    }

    #[test]
    fn changes_are_stamped_on_the_open_path_only() {
        let mut parser = fed(&[b"{\"done\": {\"x\": 1}, \"open\": [\"a"]);
        let first = parser.chunk();
        parser.feed(b"b");
        let root = parser.root().unwrap();
        assert_eq!(root.changed(), first + 1);
        assert_eq!(root.get("done").unwrap().changed(), first);
        assert_eq!(root.get("open").unwrap().changed(), first + 1);
        let changed: Vec<&str> = root.changed_entries(first).map(|(k, _)| k).collect();
        assert_eq!(changed, ["open"]);
        // Whitespace changes nothing.
        parser.feed(b"");
        assert_eq!(parser.root().unwrap().changed(), first + 1);
    }

    #[test]
    fn only_grew_covers_escapes_cut_characters_and_the_closing_quote() {
        let mut parser = fed(&[b"{\"a\": [\"x"]);
        // Plain text, an escape, a character cut in two, the closing quote and the next key: the
        // string is the only node changed, so a reader may append to its copy without a walk.
        for chunk in [&b"yz"[..], b"\\n\\u00e9", b"\xc3", b"\xa9\"", b", \"next"] {
            parser.feed(chunk);
            let grew = parser.only_grew();
            let visible = chunk != b"\xc3" && chunk != b", \"next";
            assert_eq!(grew, visible, "{chunk:?}");
        }
        // A new value, a number ended, a container closed: not only grown.
        for chunk in [&b"\", 1"[..], b", 2", b"]"] {
            parser.feed(chunk);
            assert!(!parser.only_grew(), "{chunk:?}");
        }
    }

    #[test]
    fn closed_nodes_carry_their_paths() {
        let mut parser = fed(&[b"{\"a\": [1, {\"b\": \"x\"}], \"c\": 2}"]);
        let closed: Vec<String> = parser
            .take_closed()
            .into_iter()
            .map(|(path, node)| format!("{path}={}", node.to_value()))
            .collect();
        assert_eq!(
            closed,
            [
                "a[0]=1",
                "a[1].b=\"x\"",
                "a[1]={\"b\":\"x\"}",
                "a=[1,{\"b\":\"x\"}]",
                "c=2",
                "={\"a\":[1,{\"b\":\"x\"}],\"c\":2}"
            ]
        );
    }

    #[test]
    fn a_look_up_in_a_flood_of_keys_compares_a_bounded_number_of_them() {
        // A type's fields are looked up once per chunk while its object is hidden: among thousands of
        // keys it does not know, each look-up must not scan them all (it did: quadratic in the answer).
        let mut parser = PartialParser::new(true);
        parser.feed(b"{");
        for i in 0..5_000 {
            parser.feed(format!("\"junk{i}\": {i}, ").as_bytes());
            COMPARED.with(|n| n.set(0));
            let root = parser.root().unwrap();
            assert!(root.get("wanted").is_none());
            assert_eq!(root.get("junk0").unwrap().number(), Some("0"));
            assert!(
                COMPARED.with(Cell::get) <= 2 * INDEXED as u64,
                "after {i} keys"
            );
        }
        parser.feed(b"\"wanted\": \"yes\"}");
        let root = parser.root().unwrap();
        assert_eq!(root.get("wanted").and_then(Node::as_str), Some("yes"));
        assert_eq!(root.get("junk4999").unwrap().number(), Some("4999"));
    }

    /// JSON values with strings of any characters (escapes, multi-byte), numbers and nesting.
    fn json_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i32>().prop_map(|n| json!(n)),
            (-1e6f64..1e6).prop_map(|n| json!(n)),
            "\\PC{0,12}".prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 48, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                prop::collection::btree_map("[a-z\"é]{0,5}", inner, 0..6)
                    .prop_map(|map| Value::Object(map.into_iter().collect())),
            ]
        })
    }

    proptest! {
        /// `plain` passes exactly the bytes that are ASCII and neither a quote nor a backslash, at
        /// every length (one word, two overlapping reads, or byte by byte).
        #[test]
        fn plain_is_ascii_without_quotes_or_backslashes(
            bytes in prop::collection::vec(
                prop_oneof![Just(b'"'), Just(b'\\'), Just(0x80u8), Just(0xFFu8), 0u8..0x80],
                0..20,
            ),
        ) {
            let expected = bytes.iter().all(|&b| b.is_ascii() && b != b'"' && b != b'\\');
            prop_assert_eq!(plain(&bytes).is_some(), expected);
            if let Some(text) = plain(&bytes) {
                prop_assert_eq!(text.as_bytes(), &bytes[..]);
            }
        }

        /// However an answer is cut into chunks, the tree read is the value written.
        #[test]
        fn any_split_reads_the_value_written(
            value in json_value().prop_map(|value| json!([value])),
            cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..12),
            pretty in any::<bool>(),
        ) {
            let text = if pretty {
                serde_json::to_string_pretty(&value).unwrap()
            } else {
                serde_json::to_string(&value).unwrap()
            };
            let bytes = text.as_bytes();
            let mut cuts: Vec<usize> = cuts.iter().map(|i| i.index(bytes.len() + 1)).collect();
            cuts.push(0);
            cuts.push(bytes.len());
            cuts.sort_unstable();
            let mut parser = PartialParser::new(true);
            for pair in cuts.windows(2) {
                parser.feed(&bytes[pair[0]..pair[1]]);
            }
            prop_assert!(parser.is_done());
            prop_assert_eq!(parser.root().map(Node::to_value), Some(value));
        }

        /// With or without the index, `get` finds the last member of that key (as serde does).
        #[test]
        fn get_finds_the_last_member_of_a_key(
            keys in prop::collection::vec("[a-e]{1,2}", 0..60),
            chunk in 1usize..9,
        ) {
            let members: Vec<String> =
                keys.iter().enumerate().map(|(i, k)| format!("\"{k}\": {i}")).collect();
            let text = format!("{{{}}}", members.join(", "));
            let mut parser = PartialParser::new(true);
            for piece in text.as_bytes().chunks(chunk) {
                parser.feed(piece);
            }
            let root = parser.root().unwrap();
            for probe in ["a", "b", "ab", "ee", "zz"] {
                let expected = keys.iter().rposition(|k| k == probe).map(|i| i.to_string());
                let found = root.get(probe).and_then(Node::number).map(str::to_owned);
                prop_assert_eq!(found, expected, "{}", probe);
            }
        }
    }

    #[test]
    fn paths_share_the_keys_of_their_containers() {
        // Each item closed under a long key names it in its path: the key is shared, not copied per
        // item (copying it made the cost the key's length times the number of items).
        let key = "k".repeat(10_000);
        let mut parser = PartialParser::new(true);
        parser.feed(format!("{{\"{key}\": [").as_bytes());
        let mut keys: Vec<Arc<str>> = Vec::new();
        for i in 0..200 {
            parser.feed(format!("{{\"n\": {i}}}, ").as_bytes());
            for (path, _) in parser.take_closed() {
                match path.0.first() {
                    Some(PathSegment::Key(first)) => keys.push(Arc::clone(first)),
                    other => panic!("{other:?}"),
                }
            }
        }
        assert_eq!(keys.len(), 400);
        assert!(keys.iter().all(|k| Arc::ptr_eq(k, &keys[0]) && **k == *key));
    }

    #[test]
    fn paths_of_many_values_closed_in_one_chunk() {
        let members: Vec<String> = (0..100).map(|i| format!("\"m{i}\": [{i}]")).collect();
        let mut parser = fed(&[format!("{{{}}}", members.join(", ")).as_bytes()]);
        let paths: Vec<String> = parser
            .take_closed()
            .into_iter()
            .map(|(path, _)| path.to_string())
            .collect();
        let expected: Vec<String> = (0..100)
            .flat_map(|i| [format!("m{i}[0]"), format!("m{i}")])
            .chain([String::new()])
            .collect();
        assert_eq!(paths, expected);
    }

    #[test]
    fn nesting_beyond_the_limit_ends_the_preview() {
        let deep = "[".repeat(MAX_DEPTH + 10);
        let parser = fed(&[deep.as_bytes()]);
        assert!(!parser.is_done());
        assert_eq!(parser.nodes.len(), MAX_DEPTH);
    }
}

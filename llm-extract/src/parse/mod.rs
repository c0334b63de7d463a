//! Lenient JSON, JSON Lines and the incremental decoder.
//!
//! Everything here follows one idea: **frame, then parse each frame once.** The framer (`frame`)
//! finds where each value (a whole answer, a line, an array element) begins and ends; each frame
//! then goes through the same pipeline:
//!
//! 1. the fast path: `serde_json` straight, then one validation against the compiled schema;
//! 2. only if that fails, the lenient parser (`lenient`) that fixes broken syntax and records
//!    every fix as a [`Fix`];
//! 3. schema-guided coercion (`coerce`) where the schema makes the intent certain;
//! 4. validation again, with every violation and its JSON path.
//!
//! One value ([`from_str`]) first looks for the JSON in its envelope (`envelope`: fences, prose,
//! thinking blocks, several candidates); many values ([`lines_from_str`]) and the incremental
//! [`LineDecoder`] share the framer, so the same bytes give the same items however they are chunked.
//!
//! Each path is orchestrated in one file that calls the steps in order, each step handing its result
//! to the next and none calling back into one before it:
//! - one value (`one`): envelope (`envelope`) -> typed fast path (`typed`) -> the frames of the
//!   envelope through the pipeline (`pipeline`: serde or `lenient`, then `schema_check`: validation,
//!   and `coerce` where it fails) -> which value is the answer (`choice`) -> `T` (`deserialize`);
//! - a stream (`decoder`): framer (`frame`) -> typed fast path (`typed`) -> the pipeline -> `T`; a
//!   line of prose in it is read by its candidates, as one value is.
//!
//! Next in the flow: [`validate`](crate::validate), the compiled validator every frame is checked
//! against (and whose violations the extraction loop shows the model).
//!
//! # One lexer
//! The bytes of JSON text are read by one lexer (`lex`): tokens with their byte spans, string (which
//! quote), escape and number state kept between chunks so a stream may be cut anywhere, a strict
//! syntax (RFC 8259) and a lenient one that reports what it saw outside the RFC (single and smart
//! quotes, comments, bare words, literals in other spellings, number forms, cut-off ends) as data.
//! The framer follows values over its brackets and strings (`Lexer::next_structure`, or brackets
//! alone inside a value: `Lexer::next_bracket`), the loop detector (`extract::loops`) reads it byte by byte,
//! and the confidence scan (`extract::confidence`) takes its leaves' spans from it; its byte-level
//! primitives (a string's end word at a time, a number's, a word's, whitespace and comments) are
//! there for any reader's hot loop: the typed reader reads strings, numbers and whitespace with
//! them, and the lenient and partial parsers a string's plain text, their number runs and
//! whitespace. Literals, numbers and escapes are spelled by one table
//! (`literal`).
//!
//! # Files
//! - `one.rs`: one value, orchestrated; `envelope.rs`: where values may be in an answer;
//!   `pipeline.rs`: one frame read (serde or `lenient.rs`); `schema_check.rs`: a frame checked
//!   (validation, `coerce.rs` where it fails); `choice.rs`: which value is the answer;
//!   `deserialize.rs`: validated JSON to `T`.
//! - `lines.rs`: many values from one answer; `decoder.rs`: the incremental decoder; `frame.rs`:
//!   where each value of a byte stream begins and ends.
//! - `typed/`: clean JSON straight to `T`, checked as it is read (`reader.rs`).
//! - `lex/`: the one lexer (`scan.rs` its primitives, `structure.rs` brackets and strings alone,
//!   `quote.rs`, `comment.rs`); `literal.rs`: how a scalar may be spelled.
//! - `partial.rs`: the incremental partial-value parser; `partial_value.rs`: a type's partial form
//!   kept up to date with it (`partial_shapes.rs`: leaf types of `std` and other crates;
//!   `partial_tuple.rs`: tuples and arrays).
//! - `error.rs`: [`ParseError`]; `work.rs`: the step count that keeps the look-aheads linear.
//!
//! # Typed values skip the `serde_json::Value`
//! Building a `Value` (a map per object) costs about three times a typed parse, so the typed entry
//! points ([`from_str`], [`lines_from_str`], [`LineDecoder`]) first try clean JSON straight from the text
//! to `T`: serde deserializes `T` from our own JSON reader, which checks each value against the
//! schema as it reads it and hands numbers to serde_json (module `typed`). It reads as fast as
//! `serde_json::from_str` (see BENCHMARKS.md). That check only ever accepts what the compiled
//! validator accepts, and the reader only what serde_json reads the same way; anything it is unsure of (a
//! keyword it does not model, a violation, a tag that is not the first key) sends the frame down the
//! pipeline above, which decides. [`from_str`] also takes one clean value alone in prose or a fence
//! this way, and [`lines_from_str`] a text whose every line is one clean value.
//!
//! # Partial values
//! [`PartialParser`] reads one value incrementally into a tree of partial values (a preview: it never
//! decides what the answer is), and [`PartialReader`] keeps a type's partial form ([`PartialValue`],
//! generated by the derive) up to date with it, chunk by chunk, in time linear in the answer.
//!
//! # Policies
//! - **Extra keys** that a closed object does not allow are dropped and recorded
//!   ([`FixKind::DroppedExtraKey`]); small models add such keys often and the rest of the
//!   value is usually right. Strict mode rejects them instead.
//! - **Aliases**: an object schema may carry `"x-aliases": {"alias": "canonical"}`; alias keys are
//!   renamed before validation and the renaming is recorded.
//! - **Duplicate keys**: the last value wins, as in `serde_json` (RFC 8259 only says names
//!   *should* be unique). This is not recorded as a fix, because clean JSON takes the same path.
//! - **Schema echoed back** instead of data is rejected with a schema error that says so.
//! - **Several candidates**: the one that validates is taken; if several validate and differ, and
//!   fences do not single one out, the answer is [`ParseError::Ambiguous`].
//! - **Truncation**: without [`ParseOptions::salvage`] a value cut off at the end of the input is
//!   [`ParseError::Truncated`]. With it the parser closes what is open, but never completes a
//!   scalar it did not see the end of: a cut number (`{"n":12` could have been `123`) or literal
//!   is dropped together with its key, as is a cut element of an array, and so is a cut string but
//!   where the schema wants free text (below); each step is recorded.
//! - **Where only the schema can tell** (it is a validating parser: where two readings both
//!   validate and differ, it does not pick one):
//!   - *members after an early brace* (`{"a": 1}, "b": 2}`) join the object
//!     ([`FixKind::Reopened`]) when the object as closed fails the schema and the joined one passes,
//!     or when both pass and the joined one adds only keys the schema declares; without a schema (or
//!     when the keys are unknown to it) the object as closed stands;
//!   - *digit groups* (`82_461_110`) are read as text, and as the number only where the schema
//!     wants a number ([`FixKind::Coerced`]): without a schema the text is kept as written;
//!   - *a string cut off at the end* (with salvage) is kept as far as it was read, and recorded
//!     with its path and length ([`FixKind::CutString`]), only where the schema wants free text
//!     (a string with no `enum`, `const`, `pattern` or `format`, which a cut could turn into
//!     another valid value) and only as an object member (a cut list item is dropped); without a
//!     schema it is dropped with its key, as any cut scalar;
//!   - *several values* (`{"x": 1} {"name": "A"}`): the one that validates; without a schema,
//!     several that differ are [`ParseError::Ambiguous`].
//! - **Fixes the text makes plain**, with or without a schema, each recorded: unescaped quotes inside
//!   a string ([`FixKind::InnerQuote`]: a quote is read as the string's end only when what follows
//!   can follow a string; in an object, a quote and a comma end a value only when a key, a bracket
//!   or the end follows, so `"lorem "ipsum", sic."` stays one value), a stray quote after a value (`{"a": 1"}`) and a stray word before a
//!   key (`{"a": true, COMMENT "b": 1}`) removed ([`FixKind::StrayText`]), a comma where the colon
//!   belongs (`{"key", 105}`, [`FixKind::MissingColon`], when a value and not another key follows
//!   it), a Python tuple read as an array ([`FixKind::Tuple`]).
//! - **Literals, numbers and escapes** are read by one table that the lenient, partial and typed
//!   readers share: `true`, `false`, `null` in any case and their Python and JavaScript
//!   spellings (`None`, `nil`, `undefined`), and `NaN` and the infinities as `null`, so a preview
//!   never shows a scalar that the final parse reads otherwise.
//! - **Hostile input** cannot make it panic, overflow the stack (the lenient parser is iterative and
//!   nesting is limited to [`ParseOptions::max_depth`]) or take superlinear time; the decoder keeps
//!   at most [`ParseOptions::max_frame_bytes`] of one frame in memory.
//!
//! ```
//! use llm_extract::parse::{from_str_value, ParseOptions};
//! use llm_extract::schema::SchemaSet;
//! use serde_json::json;
//!
//! let schema = SchemaSet::new("Point", json!({
//!     "type": "object",
//!     "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}},
//!     "required": ["x", "y"],
//!     "additionalProperties": false
//! }));
//! let answer = "Sure! ```json\n{'x': 1, 'y': \"2\",}\n```";
//! let parsed = from_str_value(answer, &schema, &ParseOptions::default()).unwrap();
//! assert_eq!(parsed.value, json!({"x": 1, "y": 2}));
//! assert!(!parsed.fixes.is_empty());
//! ```

mod choice;
mod coerce;
mod decoder;
mod deserialize;
mod envelope;
mod error;
mod frame;
mod lenient;
// The one JSON lexer every reader of `parse` reads from. Not public API: open for the workspace's
// property tests only, no stability promise.
#[doc(hidden)]
pub mod lex;
mod lines;
mod literal;
mod one;
pub(crate) mod partial;
mod partial_shapes;
mod partial_tuple;
pub(crate) mod partial_value;
mod pipeline;
mod schema_check;
pub(crate) mod typed;
/// The parsers' step count, for tests (feature `__work-count`). Not public API.
#[doc(hidden)]
pub mod work;

pub(crate) use decoder::WithJson;
pub use decoder::{Item, LineDecoder, LineEvent};
pub(crate) use deserialize::{deserialize, typed_item};
pub use error::ParseError;
pub use lines::{lines_from_str, lines_from_str_value, lines_from_str_with};
pub(crate) use one::from_str_with_json;
pub use one::{from_str, from_str_value, from_str_with};
pub use partial::{JsonPath, Node, PartialParser, PathSegment};
pub use partial_value::{Partial, PartialReader, PartialValue, UNNUMBERED};

use crate::validate::Violation;

/// How lenient the parser is.
///
/// ```
/// use llm_extract::parse::ParseOptions;
/// let options = ParseOptions::default().with_salvage(true);
/// assert!(options.salvage && !options.strict);
/// assert!(ParseOptions::strict().strict);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ParseOptions {
    /// Turn every fix off: only exactly clean JSON that validates is accepted (no envelope, no
    /// syntax fix, no coercion, no dropped keys).
    pub strict: bool,
    /// Close an answer cut off at end of input and keep the value if it validates (recorded as a fix).
    pub salvage: bool,
    /// Validate against the schema (on by default). Off, clean JSON goes straight to serde and the
    /// schema is only used to guide fixes.
    pub validate: bool,
    /// The deepest nesting the lenient parser accepts (default 128, as `serde_json`). Values above
    /// [`MAX_DEPTH_LIMIT`] count as that limit: deeper values would overflow the stack of a thread
    /// with the default 2 MiB when they are validated, deserialized or dropped.
    pub max_depth: usize,
    /// The largest frame (one value or one line) the decoder keeps in memory (default 1 MiB);
    /// a larger one is skipped as [`SkipReason::TooLarge`].
    pub max_frame_bytes: usize,
}

/// The most [`ParseOptions::max_depth`] can be: nesting deeper than this is a syntax error
/// whatever the options say.
pub const MAX_DEPTH_LIMIT: usize = 256;

impl Default for ParseOptions {
    fn default() -> Self {
        ParseOptions {
            strict: false,
            salvage: false,
            validate: true,
            max_depth: 128,
            max_frame_bytes: 1 << 20,
        }
    }
}

impl ParseOptions {
    /// The default options: every fix on, no salvage, validation on.
    pub fn new() -> Self {
        Self::default()
    }

    /// Options that accept only clean JSON.
    pub fn strict() -> Self {
        ParseOptions {
            strict: true,
            ..Self::default()
        }
    }

    /// Sets [`ParseOptions::strict`].
    pub fn with_strict(mut self, strict: bool) -> Self {
        self.strict = strict;
        self
    }

    /// Sets [`ParseOptions::salvage`].
    pub fn with_salvage(mut self, salvage: bool) -> Self {
        self.salvage = salvage;
        self
    }

    /// Sets [`ParseOptions::validate`].
    pub fn with_validation(mut self, validate: bool) -> Self {
        self.validate = validate;
        self
    }

    /// Sets [`ParseOptions::max_depth`] (at most [`MAX_DEPTH_LIMIT`]).
    pub fn with_max_depth(mut self, max_depth: usize) -> Self {
        self.max_depth = max_depth.min(MAX_DEPTH_LIMIT);
        self
    }

    /// Sets [`ParseOptions::max_frame_bytes`].
    pub fn with_max_frame_bytes(mut self, max_frame_bytes: usize) -> Self {
        self.max_frame_bytes = max_frame_bytes;
        self
    }
}

/// A parsed value and what was fixed to get it.
#[derive(Debug, Clone)]
pub struct Parsed<T> {
    /// The value.
    pub value: T,
    /// What was fixed, where; empty when the input was clean JSON.
    pub fixes: Vec<Fix>,
}

/// One fix the parser made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fix {
    /// Byte offset in the input where it applies.
    pub offset: usize,
    /// What was done, for a person.
    pub description: String,
    /// What kind of fix it was, for a program.
    pub kind: FixKind,
}

impl Fix {
    pub(crate) fn new(kind: FixKind, offset: usize, description: impl Into<String>) -> Self {
        Fix {
            offset,
            description: description.into(),
            kind,
        }
    }

    /// The fix for a value taken out of the text around it, at `start..end`.
    pub(crate) fn extracted(start: usize, end: usize) -> Fix {
        // Built by hand: `format!` would cost more than the rest of a fenced answer's fast path.
        let (mut from, mut to) = (itoa::Buffer::new(), itoa::Buffer::new());
        let (from, to) = (from.format(start), to.format(end));
        const HEAD: &str = "took the JSON value at bytes ";
        const TAIL: &str = " out of the text around it";
        let mut description = String::with_capacity(HEAD.len() + TAIL.len() + 42);
        description.push_str(HEAD);
        description.push_str(from);
        description.push_str("..");
        description.push_str(to);
        description.push_str(TAIL);
        Fix::new(FixKind::Envelope, start, description)
    }

    /// The fixes of an answer found at `span` in `text`: what the envelope `skipped` before the
    /// answer proper (a thinking block, a BOM), then taking the value out of the text around it,
    /// when there was text around it (`None`: found named in prose).
    pub(crate) fn taken_out(
        text: &str,
        skipped: Option<Fix>,
        span: Option<(usize, usize)>,
    ) -> Vec<Fix> {
        let mut fixes = Vec::with_capacity(2);
        fixes.extend(skipped);
        if let Some((s, e)) = span {
            // The value is the whole text but for whitespace around it (told from the text before
            // and after it, which is short or stops at its first letter).
            let alone = text.get(..s).is_some_and(|t| t.trim_start().is_empty())
                && text.get(e..).is_some_and(|t| t.trim_end().is_empty())
                && text.get(s..e).is_some_and(|v| v.trim().len() == v.len());
            if !alone {
                fixes.push(Fix::extracted(s, e));
            }
        }
        fixes
    }
}

impl std::fmt::Display for Fix {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "at byte {}: {}", self.offset, self.description)
    }
}

/// The kinds of [`Fix`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FixKind {
    /// The JSON was taken out of surrounding text: a fence, prose, a thinking block, a BOM.
    Envelope,
    /// A trailing or doubled comma was removed.
    ExtraComma,
    /// A missing comma was inserted.
    MissingComma,
    /// A comment was removed.
    Comment,
    /// Single, smart or other non-JSON quotes were replaced by double quotes.
    Quotes,
    /// An unquoted key was quoted.
    UnquotedKey,
    /// An unquoted word was read as a string.
    UnquotedString,
    /// A Python or JavaScript literal (`True`, `None`, `undefined`, `NaN`, ...) was translated.
    Literal,
    /// A raw control character (a newline, a tab, a NUL byte) inside a string was escaped or removed.
    ControlCharacter,
    /// An invalid escape sequence was kept literally.
    InvalidEscape,
    /// An unescaped quote inside a string was escaped.
    InnerQuote,
    /// A number written in a non-JSON form (`.5`, `1.`, `+1`, `01`) was normalized.
    NumberForm,
    /// A missing or mismatched closing bracket was supplied.
    Bracket,
    /// Salvage: containers open at the end of the input were closed.
    ClosedTruncated,
    /// Salvage: a value cut off at the end of the input was dropped.
    DroppedIncomplete,
    /// A scalar was converted to the type the schema wants (`"42"` to `42`, `"true"` to `true`).
    Coerced,
    /// A single value was wrapped in the array the schema wants.
    WrappedInArray,
    /// The wanted value was taken out of a one-key object or a one-element array around it.
    Unwrapped,
    /// An enum value (or a tag) differing only in case or separators was replaced by the variant.
    EnumCase,
    /// A key was renamed to its canonical name (an `x-aliases` alias, or a case difference).
    RenamedKey,
    /// A key the schema does not allow was dropped.
    DroppedExtraKey,
    /// Invalid UTF-8 was replaced by U+FFFD.
    InvalidUtf8,
    /// Stray text between members (a word, a quote after a value) was removed.
    StrayText,
    /// A comma where a key's colon belongs was read as the colon (`{"key", 105}`).
    MissingColon,
    /// A Python tuple `(1, 2)` was read as an array.
    Tuple,
    /// Members that follow an object's closing brace were read as its own (`{"a": 1}, "b": 2}`),
    /// because the schema wants them.
    Reopened,
    /// Salvage: a string cut off at the end of the input was kept as far as it was read, because
    /// the schema wants free text there (the fix says where, and how much was kept).
    CutString,
}

/// Many parsed values and the lines that were skipped.
#[derive(Debug, Clone)]
pub struct Lines<T> {
    /// The valid items, in order.
    pub items: Vec<T>,
    /// What was skipped and why.
    pub skipped: Vec<Skipped>,
}

impl<T> Default for Lines<T> {
    fn default() -> Self {
        Lines {
            items: Vec::new(),
            skipped: Vec::new(),
        }
    }
}

/// A line (or frame) that produced no item.
#[derive(Debug, Clone, PartialEq)]
pub struct Skipped {
    /// 1-based line number where it starts.
    pub line: usize,
    /// The raw text (at most a few hundred bytes of a frame too large to keep).
    pub raw: String,
    /// Why.
    pub reason: SkipReason,
}

/// Why a line was skipped.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum SkipReason {
    /// Not fixable JSON.
    Syntax(String),
    /// JSON that fails the schema (or serde): every violation with its JSON path.
    Schema(Vec<Violation>),
    /// JSON that fits the schema but fails a [check](crate::check): every hard issue with its path.
    Check(Vec<Violation>),
    /// Cut off at the end of the input.
    Truncated,
    /// Prose, not JSON.
    NotJson,
    /// A frame larger than [`ParseOptions::max_frame_bytes`].
    TooLarge {
        /// The limit in bytes.
        limit: usize,
    },
}

impl std::fmt::Display for SkipReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SkipReason::Syntax(message) => write!(f, "broken JSON: {message}"),
            SkipReason::Schema(violations) => {
                write!(f, "does not match the schema: {}", error::list(violations))
            }
            SkipReason::Check(issues) => write!(f, "fails its checks: {}", error::list(issues)),
            SkipReason::Truncated => f.write_str("cut off at the end of the answer"),
            SkipReason::NotJson => f.write_str("not JSON"),
            SkipReason::TooLarge { limit } => write!(f, "larger than the {limit}-byte frame limit"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_builders_set_fields() {
        let o = ParseOptions::new()
            .with_salvage(true)
            .with_strict(true)
            .with_validation(false)
            .with_max_depth(7)
            .with_max_frame_bytes(9);
        assert!(o.salvage && o.strict && !o.validate);
        assert_eq!((o.max_depth, o.max_frame_bytes), (7, 9));
        assert_eq!(ParseOptions::default().max_depth, 128);
    }

    #[test]
    fn max_depth_is_capped_where_the_stack_holds() {
        use serde_json::json;
        let schema = std::sync::Arc::new(crate::schema::SchemaSet::new(
            "Any",
            json!({"type": "object"}),
        ));
        // A hostile answer nested 100,000 deep, a trailing comma keeping it off serde's path, on a
        // thread with the default stack, with the limit raised as far as it goes.
        let check = move |depth: usize, options: ParseOptions| {
            let schema = std::sync::Arc::clone(&schema);
            std::thread::Builder::new()
                .stack_size(2 << 20)
                .spawn(move || {
                    let inner = depth - 1;
                    let text = format!("{{\"a\": {}1,{}}}", "[".repeat(inner), "]".repeat(inner));
                    from_str_value(&text, &schema, &options).map(|_| ())
                })
                .unwrap()
                .join()
                .unwrap()
        };
        let unbounded = ParseOptions {
            max_depth: usize::MAX,
            ..ParseOptions::default()
        };
        let err = check(100_000, unbounded).unwrap_err();
        assert!(
            err.to_string()
                .contains(&format!("deeper than {MAX_DEPTH_LIMIT}")),
            "{err}"
        );
        assert!(check(MAX_DEPTH_LIMIT, unbounded).is_ok());
        assert!(check(MAX_DEPTH_LIMIT + 1, unbounded).is_err());
        assert_eq!(
            ParseOptions::new().with_max_depth(usize::MAX).max_depth,
            MAX_DEPTH_LIMIT
        );
    }

    #[test]
    fn skip_reason_messages_are_readable() {
        let reason = SkipReason::Schema(vec![Violation {
            path: "/n".into(),
            message: "\"x\" is not of type \"integer\"".into(),
        }]);
        assert_eq!(
            reason.to_string(),
            "does not match the schema: at /n: \"x\" is not of type \"integer\""
        );
    }
}

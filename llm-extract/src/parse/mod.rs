//! Lenient JSON, JSON Lines and the incremental decoder. OWNER: parse helper (issue 3).
//!
//! PLACEHOLDER BODIES: the parse helper replaces them (and may split this file into submodules);
//! the names and shapes below are the contract the runtime codes against.

use crate::schema::SchemaSet;
use crate::validate::Violation;
use crate::Extract;
use serde_json::Value;
use std::marker::PhantomData;

/// How lenient the parser is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ParseOptions {
    /// Turn every repair off: only clean JSON (optionally fenced? no: exactly clean JSON) is accepted.
    pub strict: bool,
    /// Close an answer cut off at end of input and keep the value if it validates (recorded as a repair).
    pub salvage: bool,
}

impl Default for ParseOptions {
    fn default() -> Self {
        ParseOptions {
            strict: false,
            salvage: false,
        }
    }
}

/// A parsed value and what was repaired to get it.
#[derive(Debug, Clone)]
pub struct Parsed<T> {
    /// The value.
    pub value: T,
    /// What was fixed, where; empty when the input was clean JSON.
    pub repairs: Vec<Repair>,
}

/// One repair the parser made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repair {
    /// Byte offset in the input where it applies.
    pub offset: usize,
    /// What was done.
    pub description: String,
}

/// Many parsed values and the lines that were skipped.
#[derive(Debug, Clone)]
pub struct Lines<T> {
    /// The valid items, in order.
    pub items: Vec<T>,
    /// What was skipped and why.
    pub skipped: Vec<Skipped>,
}

/// A line (or frame) that produced no item.
#[derive(Debug, Clone, PartialEq)]
pub struct Skipped {
    /// 1-based line number where it starts.
    pub line: usize,
    /// The raw text.
    pub raw: String,
    /// Why.
    pub reason: SkipReason,
}

/// Why a line was skipped.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum SkipReason {
    /// Not repairable JSON.
    Syntax(String),
    /// JSON that fails the schema (or serde): every violation with its JSON path.
    Schema(Vec<Violation>),
    /// Cut off at the end of the input.
    Truncated,
    /// Prose, not JSON.
    NotJson,
}

/// One event of the incremental decoder.
#[derive(Debug, Clone)]
pub enum LineEvent<T> {
    /// A complete, valid item.
    Item(Item<T>),
    /// A frame that produced no item.
    Skipped(Skipped),
}

/// A decoded item with the validated JSON it came from.
#[derive(Debug, Clone)]
pub struct Item<T> {
    /// The typed value.
    pub value: T,
    /// The validated JSON (after repairs), for deduplication and reporting.
    pub json: Value,
    /// 1-based line where the item starts.
    pub line: usize,
    /// Repairs made to this item.
    pub repairs: Vec<Repair>,
}

/// Parsing failed. Every variant carries the raw text.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum ParseError {
    /// No JSON was found.
    #[error("no JSON found in the answer")]
    NoJson {
        /// The raw text.
        raw: String,
    },
}

impl ParseError {
    /// The raw text that failed.
    pub fn raw(&self) -> &str {
        match self {
            ParseError::NoJson { raw } => raw,
        }
    }
}

/// Parses one value of `T` with default options.
pub fn parse<T: Extract>(text: &str) -> Result<Parsed<T>, ParseError> {
    parse_with(text, &ParseOptions::default())
}

/// Parses one value of `T`.
pub fn parse_with<T: Extract>(text: &str, options: &ParseOptions) -> Result<Parsed<T>, ParseError> {
    let _ = options;
    match serde_json::from_str(text) {
        Ok(value) => Ok(Parsed {
            value,
            repairs: Vec::new(),
        }),
        Err(_) => Err(ParseError::NoJson {
            raw: text.to_owned(),
        }),
    }
}

/// Parses one value against a runtime schema, returning validated JSON.
pub fn parse_value(
    text: &str,
    schema: &SchemaSet,
    options: &ParseOptions,
) -> Result<Parsed<Value>, ParseError> {
    let _ = (schema, options);
    match serde_json::from_str(text) {
        Ok(value) => Ok(Parsed {
            value,
            repairs: Vec::new(),
        }),
        Err(_) => Err(ParseError::NoJson {
            raw: text.to_owned(),
        }),
    }
}

/// Parses many values of `T` (JSON Lines, fenced, pretty-printed, an array or an `{"items": [...]}` wrapper).
pub fn parse_lines<T: Extract>(text: &str) -> Lines<T> {
    parse_lines_with(text, &ParseOptions::default())
}

/// Parses many values of `T` with options.
pub fn parse_lines_with<T: Extract>(text: &str, options: &ParseOptions) -> Lines<T> {
    let mut decoder = LineDecoder::<T>::with_options(*options);
    let mut events = decoder.feed(text.as_bytes());
    events.extend(decoder.finish());
    let mut lines = Lines {
        items: Vec::new(),
        skipped: Vec::new(),
    };
    for event in events {
        match event {
            LineEvent::Item(item) => lines.items.push(item.value),
            LineEvent::Skipped(s) => lines.skipped.push(s),
        }
    }
    lines
}

/// Incremental decoder of many values of `T`: feed bytes as they arrive, get items as they complete.
pub struct LineDecoder<T> {
    options: ParseOptions,
    _marker: PhantomData<fn() -> T>,
}

impl<T: Extract> Default for LineDecoder<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Extract> LineDecoder<T> {
    /// A decoder with default options.
    pub fn new() -> Self {
        Self::with_options(ParseOptions::default())
    }
    /// A decoder with `options`.
    pub fn with_options(options: ParseOptions) -> Self {
        LineDecoder {
            options,
            _marker: PhantomData,
        }
    }
    /// Feeds a chunk (which may end anywhere, even inside a UTF-8 character); returns what it completed.
    pub fn feed(&mut self, chunk: &[u8]) -> Vec<LineEvent<T>> {
        let _ = (chunk, self.options);
        Vec::new()
    }
    /// Ends the input; returns what remained (a cut-off last item is reported as truncated).
    pub fn finish(self) -> Vec<LineEvent<T>> {
        Vec::new()
    }
}

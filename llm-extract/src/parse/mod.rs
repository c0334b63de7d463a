//! Lenient JSON, JSON Lines and the incremental decoder. OWNER: parse helper (issue 3).
//!
//! PLACEHOLDER SIGNATURES: the parse helper replaces the bodies; the names and shapes are the contract.

use crate::Extract;
use std::marker::PhantomData;

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

/// A line that produced no item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// 1-based line number where it starts.
    pub line: usize,
    /// The raw text.
    pub raw: String,
    /// Why.
    pub reason: String,
}

/// Parsing failed.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ParseError {
    /// No JSON was found.
    #[error("no JSON found in the answer")]
    NoJson {
        /// The raw text.
        raw: String,
    },
}

/// Parses one value.
pub fn parse<T: Extract>(text: &str) -> Result<Parsed<T>, ParseError> {
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

/// Parses many values.
pub fn parse_lines<T: Extract>(text: &str) -> Lines<T> {
    let mut items = Vec::new();
    for line in text.lines() {
        if let Ok(v) = serde_json::from_str(line) {
            items.push(v);
        }
    }
    Lines {
        items,
        skipped: Vec::new(),
    }
}

/// Incremental JSON Lines decoder.
pub struct LineDecoder<T> {
    _marker: PhantomData<T>,
}

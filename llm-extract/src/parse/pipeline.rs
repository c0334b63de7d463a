//! The pipeline every frame goes through, whether it is a whole answer, a line, an array element or
//! a candidate value the envelope found: read by serde straight, else by the lenient parser; then
//! checked against the schema (`schema_check`: validation, and coercion only if validation fails).
//! It takes a frame's text and hands back a checked value or why there is none; where the frame is
//! (the envelope, the framer) is decided before it, which value is the answer after it (`choice`).
//! Each part is read once, then checked once ([`Pipeline::read`]): an object closed too early is
//! read with the members after its brace in the same step, and the check keeps that reading when
//! the schema prefers it. The candidates of a line go through it in one loop
//! ([`Pipeline::each_candidate`]).

use super::envelope::Candidate;
use super::lenient::{self, Failure, Fixed, Settings};
use super::schema_check::{Accepted, Rejection, SchemaCheck};
use super::ParseOptions;
use crate::error::SchemaError;
use crate::schema::SchemaSet;
use serde_json::Value;

/// What the pipeline is asked to read of a text ([`Pipeline::read`]).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Part<'t> {
    /// The whole text, by serde alone.
    Whole,
    /// A slice of the text, at its offset (the answer without its fence: a scalar, a tuple).
    Slice(usize, &'t str),
    /// A candidate value.
    Candidate(Candidate),
}

/// A part read and checked: where it lies (a candidate read with the members after its brace
/// reaches their end), and the value that passed or why there is none.
#[derive(Debug)]
pub(crate) struct Read {
    pub(crate) span: (usize, usize),
    /// Whether it lies inside a fenced block (a candidate's mark).
    pub(crate) fenced: bool,
    pub(crate) result: Result<Accepted, Rejection>,
}

/// Where a run of candidates stands ([`Pipeline::candidate`]).
#[derive(Debug, Default)]
pub(crate) struct Run {
    /// The end of a candidate that took in the members after it: candidates inside those are its
    /// parts.
    taken_to: usize,
    /// A value cut off at the end was read: the candidates after it start inside it.
    stopped: bool,
}

/// One schema and one set of options, ready to read frames and check them.
pub(crate) struct Pipeline<'s> {
    schema_check: SchemaCheck<'s>,
    options: ParseOptions,
    /// How the lenient parser reads a frame.
    settings: Settings,
}

impl<'s> Pipeline<'s> {
    pub(crate) fn new(schema: &'s SchemaSet, options: ParseOptions) -> Result<Self, SchemaError> {
        Ok(Pipeline {
            schema_check: SchemaCheck::new(schema, options)?,
            options,
            settings: Settings {
                salvage: options.salvage,
                // The field is public, so the limit is applied where it is used.
                max_depth: options.max_depth.min(super::MAX_DEPTH_LIMIT),
                reopen: false,
            },
        })
    }

    pub(crate) fn schema(&self) -> &'s SchemaSet {
        self.schema_check.schema()
    }

    /// Whether the wanted value is an object or an array (found by its brackets), rather than a scalar.
    pub(crate) fn wants_container(&self) -> bool {
        self.schema().wants_container()
    }

    /// Whether the wanted value may also be a scalar (see [`SchemaSet::admits_scalar`]).
    pub(crate) fn admits_scalar(&self) -> bool {
        self.schema().admits_scalar()
    }

    /// One frame: read (serde straight, else, unless strict, the lenient parser), then checked.
    /// `base` is the offset of `text` in the whole input.
    pub(crate) fn frame(&self, text: &str, base: usize) -> Result<Accepted, Rejection> {
        match self.read(text, Part::Slice(0, text), base, &mut Run::default()) {
            Some(read) => read.result,
            None => Err(Rejection::NotJson),
        }
    }

    /// Every candidate value of `text` (found by the envelope), each read as one of a run
    /// ([`Pipeline::read`]) and handed to `each` in order as it is evaluated (so a caller keeps
    /// only what it needs: a thousand copies of one value are not all held at once). `base` is the
    /// offset of `text` in the whole input.
    pub(crate) fn each_candidate(
        &self,
        text: &str,
        candidates: impl Iterator<Item = Candidate>,
        base: usize,
        mut each: impl FnMut(Read),
    ) {
        let mut run = Run::default();
        for candidate in candidates {
            if let Some(read) = self.read(text, Part::Candidate(candidate), base, &mut run) {
                each(read);
            }
        }
    }

    /// One part of `text` read, then checked; `base` is the offset of `text` in the whole input.
    ///
    /// - The whole text is read by serde alone: `None` when serde refuses it and the lenient
    ///   parser may still read a part of it (in strict mode, serde's refusal is the result).
    /// - A slice (the answer without its fence) by serde, else, unless strict, the lenient parser.
    /// - A candidate, as one of a `run`: `None` when it is inside a value cut off at the end or
    ///   inside one read with the members after its brace. An object whose members go on after
    ///   its brace (`{"a": 1}, "b": 2}`) is also read to their end, and that reading kept when the
    ///   schema prefers it (see [`SchemaCheck::prefers_longer`]); its span then reaches their end.
    pub(crate) fn read(
        &self,
        text: &str,
        part: Part<'_>,
        base: usize,
        run: &mut Run,
    ) -> Option<Read> {
        let strict = self.options.strict;
        let (span, fenced, lenient, longer) = match part {
            Part::Whole => ((0, text.len()), false, false, false),
            Part::Slice(at, slice) => ((at, at + slice.len()), false, true, false),
            Part::Candidate(c) if run.stopped || c.start < run.taken_to => return None,
            Part::Candidate(c) => (
                (c.start, c.end),
                c.fenced,
                true,
                !strict && c.closed && c.members_follow,
            ),
        };
        let at = base + span.0;
        let slice = text.get(span.0..span.1).unwrap_or_default();
        // Read: serde straight, else the lenient parser; with the members after the brace too.
        let closed = match serde_json::from_str::<Value>(slice) {
            Ok(value) => Ok(Fixed {
                value,
                fixes: Vec::new(),
                cut: None,
                end: slice.len(),
            }),
            Err(e) if strict => Err(serde_rejection(&e, slice, at)),
            Err(_) if !lenient => return None,
            Err(_) => lenient::parse(slice, at, self.settings).map_err(|failure| match failure {
                Failure::Syntax { message, offset } => Rejection::Syntax { message, offset },
                Failure::Truncated { offset } => Rejection::Truncated { offset },
                Failure::Empty => Rejection::NotJson,
            }),
        };
        let reopened = Settings {
            reopen: true,
            ..self.settings
        };
        let longer = match longer {
            true => text
                .get(span.0..)
                .and_then(|rest| lenient::parse(rest, at, reopened).ok())
                .filter(|read| span.0 + read.end > span.1),
            false => None,
        };
        // Checked: the value as read, and the longer reading kept when the schema prefers it.
        let (result, longer_end) = self.schema_check.checked(closed, longer, at);
        let mut span = span;
        if let Some(end) = longer_end {
            span.1 = span.0 + end;
            run.taken_to = span.1;
        }
        if let Part::Candidate(c) = part {
            // A value cut off at the end that reads as the start of a real value (not prose):
            // the candidates after it start inside it.
            run.stopped =
                !c.closed && !matches!(result, Err(Rejection::Syntax { .. } | Rejection::NotJson));
        }
        Some(Read {
            span,
            fenced,
            result,
        })
    }
}

/// A strict-mode rejection from serde's error.
pub(crate) fn serde_rejection(e: &serde_json::Error, text: &str, base: usize) -> Rejection {
    if e.is_eof() {
        return Rejection::Truncated {
            offset: base + text.len(),
        };
    }
    // serde counts lines from 1 and columns in bytes from 1.
    let line_start: usize = text
        .split_inclusive('\n')
        .take(e.line().saturating_sub(1))
        .map(str::len)
        .sum();
    let offset = (line_start + e.column().saturating_sub(1)).min(text.len());
    Rejection::Syntax {
        message: e.to_string(),
        offset: base + offset,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serde_errors_point_at_the_byte() {
        let text = "{\"a\":1,\n \"b\": x}";
        let e = serde_json::from_str::<Value>(text).unwrap_err();
        match serde_rejection(&e, text, 10) {
            Rejection::Syntax { offset, .. } => assert_eq!(offset, 10 + text.find('x').unwrap()),
            other => panic!("{other:?}"),
        }
    }
}

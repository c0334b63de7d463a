//! The pipeline every frame goes through, whether it is a whole answer, a line, an array element or
//! a candidate value the envelope found: read by serde straight, else by the lenient parser; then
//! checked against the schema (`schema_check`: validation, and coercion only if validation fails).
//! It takes a frame's text and hands back a checked value or why there is none; where the frame is
//! (the envelope, the framer) is decided before it, which value is the answer after it (`choice`).
//! The candidates of a text go through it in one loop ([`Pipeline::each_candidate`]), which also
//! reads an object closed too early with the members after its brace, and keeps that reading when
//! the schema prefers it.

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
}

impl<'s> Pipeline<'s> {
    pub(crate) fn new(schema: &'s SchemaSet, options: ParseOptions) -> Result<Self, SchemaError> {
        Ok(Pipeline {
            schema_check: SchemaCheck::new(schema, options)?,
            options,
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
    pub(crate) fn frame(&self, text: &str, base: usize) -> Result<Accepted, Rejection> {
        self.frame_to_end(text, base, false)
            .map(|(accepted, _)| accepted)
    }

    /// `text` through serde straight, then checked; in strict mode, serde's refusal; `None` when
    /// serde refuses a text the lenient parser may still read.
    pub(crate) fn straight(&self, text: &str, base: usize) -> Option<Result<Accepted, Rejection>> {
        let value = self.serde_straight(text, base)?;
        Some(value.and_then(|value| self.schema_check.validated(value, Vec::new(), base)))
    }

    /// One part of `text` read and checked: the whole text by serde alone (`None` when serde
    /// refuses it and the lenient parser may still read a part of it), the answer without its
    /// fence, or one candidate of a run ([`Pipeline::candidate`]; `None` when it is not read).
    pub(crate) fn read(&self, text: &str, part: Part<'_>, run: &mut Run) -> Option<Read> {
        match part {
            Part::Whole => self.straight(text, 0).map(|result| Read {
                span: (0, text.len()),
                fenced: false,
                result,
            }),
            Part::Slice(at, slice) => Some(Read {
                span: (at, at + slice.len()),
                fenced: false,
                result: self.frame(slice, at),
            }),
            Part::Candidate(candidate) => {
                self.candidate(run, text, candidate, 0)
                    .map(|(candidate, result)| Read {
                        span: (candidate.start, candidate.end),
                        fenced: candidate.fenced,
                        result,
                    })
            }
        }
    }

    /// Every candidate value of `text` (found by the envelope), each through the pipeline
    /// ([`Pipeline::candidate`]), handed to `each` in order as it is evaluated (so a caller keeps
    /// only what it needs: a thousand copies of one value are not all held at once). `base` is the
    /// offset of `text` in the whole input.
    pub(crate) fn each_candidate(
        &self,
        text: &str,
        candidates: Vec<Candidate>,
        base: usize,
        mut each: impl FnMut(Candidate, Result<Accepted, Rejection>),
    ) {
        let mut run = Run::default();
        for candidate in candidates {
            if let Some((candidate, result)) = self.candidate(&mut run, text, candidate, base) {
                each(candidate, result);
            }
        }
    }

    /// One candidate value of a run over `text`, through the pipeline. An object whose members go
    /// on after its brace is read to their end when the schema prefers it (`{"a": 1}, "b": 2}`);
    /// values found inside a value cut off at the end are its parts, not candidates of their own,
    /// and are left out (`None`), as are those inside a value read with the members after it.
    pub(crate) fn candidate(
        &self,
        run: &mut Run,
        text: &str,
        mut candidate: Candidate,
        base: usize,
    ) -> Option<(Candidate, Result<Accepted, Rejection>)> {
        if run.stopped || candidate.start < run.taken_to {
            return None;
        }
        let slice = text.get(candidate.start..candidate.end).unwrap_or_default();
        let mut result = self.frame(slice, base + candidate.start);
        if let Some((longer, longer_result)) = self.continued(text, candidate, base, &result) {
            candidate = longer;
            result = longer_result;
            run.taken_to = candidate.end;
        }
        // A value cut off at the end that reads as the start of a real value (not prose): the
        // candidates after it start inside it.
        run.stopped = !candidate.closed
            && !matches!(result, Err(Rejection::Syntax { .. } | Rejection::NotJson));
        Some((candidate, result))
    }

    /// An object closed too early, whose members go on after its brace (`{"a": 1}, "b": 2}`): the
    /// longer reading, when the schema prefers it (see [`SchemaCheck::prefers_longer`]).
    fn continued(
        &self,
        text: &str,
        candidate: Candidate,
        base: usize,
        closed: &Result<Accepted, Rejection>,
    ) -> Option<(Candidate, Result<Accepted, Rejection>)> {
        if self.options.strict || !candidate.closed || !candidate.members_follow {
            return None;
        }
        let (longer, end) = self
            .reopened(text.get(candidate.start..)?, base + candidate.start)
            .ok()?;
        let end = candidate.start + end;
        if end <= candidate.end || !self.schema_check.prefers_longer(closed, &longer) {
            return None;
        }
        let longer_candidate = Candidate { end, ..candidate };
        Some((longer_candidate, Ok(longer)))
    }

    /// `text` read, then checked against the schema; also where the value ended in `text`.
    /// `reopen`: members that follow the root object's closing brace are read as its own
    /// (`{"a": 1}, "b": 2}`, see [`Settings::reopen`]).
    fn frame_to_end(
        &self,
        text: &str,
        base: usize,
        reopen: bool,
    ) -> Result<(Accepted, usize), Rejection> {
        let read = self.read_frame(text, base, reopen)?;
        let end = read.end;
        self.schema_check
            .validated_reading(read, base)
            .map(|accepted| (accepted, end))
    }

    /// `text` as read: by serde straight (not when `reopen`: members after the brace are never
    /// JSON), else, unless strict, by the lenient parser, which records its fixes.
    fn read_frame(&self, text: &str, base: usize, reopen: bool) -> Result<Fixed, Rejection> {
        if !reopen {
            if let Some(value) = self.serde_straight(text, base) {
                return value.map(|value| Fixed {
                    value,
                    fixes: Vec::new(),
                    cut: None,
                    end: text.len(),
                });
            }
        }
        let settings = Settings {
            salvage: self.options.salvage,
            // The field is public, so the limit is applied where it is used.
            max_depth: self.options.max_depth.min(super::MAX_DEPTH_LIMIT),
            reopen,
        };
        lenient::parse(text, base, settings).map_err(|failure| match failure {
            Failure::Syntax { message, offset } => Rejection::Syntax { message, offset },
            Failure::Truncated { offset } => Rejection::Truncated { offset },
            Failure::Empty => Rejection::NotJson,
        })
    }

    /// `text` by serde straight; in strict mode, serde's refusal; `None` when serde refuses a text
    /// the lenient parser may still read.
    fn serde_straight(&self, text: &str, base: usize) -> Option<Result<Value, Rejection>> {
        match serde_json::from_str::<Value>(text) {
            Ok(value) => Some(Ok(value)),
            Err(e) if self.options.strict => Some(Err(serde_rejection(&e, text, base))),
            Err(_) => None,
        }
    }

    /// The reading with members that follow the root object's closing brace read as its own
    /// (`{"a": 1}, "b": 2}`); also where the value ended in `text`. Whether that reading is the one
    /// meant is [`SchemaCheck::prefers_longer`]'s call.
    fn reopened(&self, text: &str, base: usize) -> Result<(Accepted, usize), Rejection> {
        self.frame_to_end(text, base, true)
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

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
use super::{ParseOptions, SkipReason, Skipped};
use crate::error::SchemaError;
use crate::schema::SchemaSet;
use crate::validate::Violation;
use serde::de::DeserializeOwned;
use serde_json::Value;

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

    pub(crate) fn options(&self) -> &ParseOptions {
        &self.options
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

    /// Every candidate value of `text` (found by the envelope), each through the pipeline, handed
    /// to `each` in order as it is evaluated (so a caller keeps only what it needs: a thousand
    /// copies of one value are not all held at once). An object whose members go on after its
    /// brace is read to their end when the schema prefers it (`{"a": 1}, "b": 2}`); values found
    /// inside a value cut off at the end are its parts, not candidates of their own, and are left
    /// out. `base` is the offset of `text` in the whole input.
    pub(crate) fn each_candidate(
        &self,
        text: &str,
        candidates: Vec<Candidate>,
        base: usize,
        mut each: impl FnMut(Candidate, Result<Accepted, Rejection>),
    ) {
        // The end of a candidate that took in the members after it: candidates inside those are
        // its parts.
        let mut taken_to = 0;
        for mut candidate in candidates {
            if candidate.start < taken_to {
                continue;
            }
            let slice = text.get(candidate.start..candidate.end).unwrap_or_default();
            let mut result = self.frame(slice, base + candidate.start);
            if let Some((longer, longer_result)) = self.continued(text, candidate, base, &result) {
                candidate = longer;
                result = longer_result;
                taken_to = candidate.end;
            }
            // A value cut off at the end that reads as the start of a real value (not prose): the
            // candidates after it start inside it.
            let cut = !candidate.closed
                && !matches!(result, Err(Rejection::Syntax { .. } | Rejection::NotJson));
            each(candidate, result);
            if cut {
                break;
            }
        }
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
        let longer_candidate = Candidate {
            end,
            reopened: true,
            ..candidate
        };
        Some((longer_candidate, Ok(longer)))
    }

    /// A candidate span of `text` read again as [`Pipeline::each_candidate`] read it (for a value
    /// not kept, to compare).
    pub(crate) fn reread(&self, text: &str, candidate: Candidate) -> Result<Accepted, Rejection> {
        let slice = text.get(candidate.start..candidate.end).unwrap_or_default();
        match candidate.reopened {
            true => self
                .reopened(slice, candidate.start)
                .map(|(accepted, _)| accepted),
            false => self.frame(slice, candidate.start),
        }
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

/// Builds `T` from validated JSON; on failure, the serde path and message.
pub(crate) fn deserialize<T: DeserializeOwned>(json: &Value) -> Result<T, (String, String)> {
    match T::deserialize(json) {
        Ok(value) => Ok(value),
        // Track the path only on failure, so the success path pays nothing for it.
        Err(_) => match serde_path_to_error::deserialize::<_, T>(json) {
            Ok(value) => Ok(value),
            Err(e) => Err((e.path().to_string(), e.into_inner().to_string())),
        },
    }
}

/// An item's validated JSON as a `T`; when serde refuses it, the item is skipped with serde's path
/// and message. The one adapter from validated JSON to `T`, for the decoder and the extraction loop.
pub(crate) fn typed_item<T: DeserializeOwned>(json: &Value, line: usize) -> Result<T, Skipped> {
    deserialize::<T>(json).map_err(|(path, message)| Skipped {
        line,
        raw: json.to_string(),
        reason: SkipReason::Schema(vec![Violation { path, message }]),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn serde_errors_point_at_the_byte() {
        let text = "{\"a\":1,\n \"b\": x}";
        let e = serde_json::from_str::<Value>(text).unwrap_err();
        match serde_rejection(&e, text, 10) {
            Rejection::Syntax { offset, .. } => assert_eq!(offset, 10 + text.find('x').unwrap()),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn deserialize_errors_carry_the_path() {
        #[derive(Debug, serde::Deserialize)]
        #[allow(dead_code)]
        struct Inner {
            n: u8,
        }
        #[derive(Debug, serde::Deserialize)]
        #[allow(dead_code)]
        struct Outer {
            items: Vec<Inner>,
        }
        let (path, message) =
            deserialize::<Outer>(&json!({"items":[{"n":1},{"n":300}]})).unwrap_err();
        assert_eq!(path, "items[1].n");
        assert!(message.contains("300"), "{message}");
        assert!(typed_item::<Outer>(&json!({"items":[]}), 1).is_ok());
        let skipped = typed_item::<Outer>(&json!({"items":[{"n":-1}]}), 7).unwrap_err();
        assert_eq!(skipped.line, 7);
        assert_eq!(skipped.raw, r#"{"items":[{"n":-1}]}"#);
        assert!(
            matches!(&skipped.reason, SkipReason::Schema(v) if v[0].path == "items[0].n"),
            "{skipped:?}"
        );
    }
}

//! The pipeline every frame goes through, whether it is a whole answer, a line or an array element:
//! serde straight, else the lenient parser; then validation, and coercion only if validation fails.

use super::envelope::{self, Candidate};
use super::lenient::{self, Failure, Settings};
use super::{coerce, Fix, FixKind, ParseError, ParseOptions, SkipReason, Skipped};
use crate::error::SchemaError;
use crate::schema::SchemaSet;
use crate::validate::{Validator, Violation};
use serde::de::DeserializeOwned;
use serde_json::Value;

/// A value that passed.
#[derive(Debug)]
pub(crate) struct Accepted {
    pub(crate) value: Value,
    pub(crate) fixes: Vec<Fix>,
}

/// Why a frame gave no value.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Rejection {
    NotJson,
    Syntax { message: String, offset: usize },
    Truncated { offset: usize },
    Schema(Vec<Violation>),
}

impl Rejection {
    pub(crate) fn into_error(self, raw: &str) -> ParseError {
        let raw = raw.to_owned();
        match self {
            Rejection::NotJson => ParseError::NoJson { raw },
            Rejection::Syntax { message, offset } => ParseError::Syntax {
                message,
                offset,
                raw,
            },
            Rejection::Truncated { offset } => ParseError::Truncated { offset, raw },
            Rejection::Schema(violations) => ParseError::Schema { violations, raw },
        }
    }

    pub(crate) fn into_reason(self) -> SkipReason {
        match self {
            Rejection::NotJson => SkipReason::NotJson,
            Rejection::Syntax { message, .. } => SkipReason::Syntax(message),
            Rejection::Truncated { .. } => SkipReason::Truncated,
            Rejection::Schema(violations) => SkipReason::Schema(violations),
        }
    }
}

/// One schema and one set of options, ready to check frames.
pub(crate) struct Pipeline<'s> {
    schema: &'s SchemaSet,
    validator: Option<&'s Validator>,
    options: ParseOptions,
}

impl<'s> Pipeline<'s> {
    pub(crate) fn new(schema: &'s SchemaSet, options: ParseOptions) -> Result<Self, SchemaError> {
        let validator = if options.validate {
            Some(schema.validator()?)
        } else {
            None
        };
        Ok(Pipeline {
            schema,
            validator,
            options,
        })
    }

    pub(crate) fn options(&self) -> &ParseOptions {
        &self.options
    }

    pub(crate) fn schema(&self) -> &'s SchemaSet {
        self.schema
    }

    /// Whether the wanted value is an object or an array (found by its brackets), rather than a scalar.
    pub(crate) fn wants_container(&self) -> bool {
        self.schema.wants_container()
    }

    /// One frame: serde straight, else (unless strict) the lenient parser; then [`Pipeline::check`].
    pub(crate) fn frame(&self, text: &str, base: usize) -> Result<Accepted, Rejection> {
        match serde_json::from_str::<Value>(text) {
            Ok(value) => return self.check(value, Vec::new(), base),
            Err(e) if self.options.strict => return Err(serde_rejection(&e, text, base)),
            Err(_) => {}
        }
        let settings = Settings {
            salvage: self.options.salvage,
            // The field is public, so the limit is applied where it is used.
            max_depth: self.options.max_depth.min(super::MAX_DEPTH_LIMIT),
        };
        match lenient::parse(text, base, settings) {
            Ok(fixed) => self.check(fixed.value, fixed.fixes, base),
            Err(Failure::Syntax { message, offset }) => Err(Rejection::Syntax { message, offset }),
            Err(Failure::Truncated { offset }) => Err(Rejection::Truncated { offset }),
            Err(Failure::Empty) => Err(Rejection::NotJson),
        }
    }

    /// Validates; if that fails (and fixes are allowed), rejects an echoed schema, coerces and
    /// validates again.
    pub(crate) fn check(
        &self,
        mut value: Value,
        mut fixes: Vec<Fix>,
        base: usize,
    ) -> Result<Accepted, Rejection> {
        let schema = self.schema.generic();
        let Some(validator) = self.validator else {
            if !self.options.strict {
                coerce::coerce(&mut value, schema, base, &mut fixes);
            }
            return Ok(Accepted { value, fixes });
        };
        if validator.is_valid(&value) {
            return Ok(Accepted { value, fixes });
        }
        if self.options.strict {
            return Err(Rejection::Schema(validator.violations(&value)));
        }
        if coerce::is_schema_echo(&value, schema) {
            return Err(Rejection::Schema(vec![Violation {
                path: String::new(),
                message: "the answer is a JSON Schema, not data: the model echoed the schema \
                          instead of filling it in"
                    .into(),
            }]));
        }
        coerce::coerce(&mut value, schema, base, &mut fixes);
        let violations = validator.violations(&value);
        if violations.is_empty() {
            Ok(Accepted { value, fixes })
        } else {
            Err(Rejection::Schema(violations))
        }
    }

    /// Every candidate value in `text` from `from`, each through [`Pipeline::frame`], handed to `each`
    /// in order as it is evaluated (so a caller keeps only what it needs: a thousand copies of one value
    /// are not all held at once). Values found inside a value cut off at the end are its parts, not
    /// candidates of their own, and are left out.
    pub(crate) fn each_candidate(
        &self,
        text: &str,
        from: usize,
        base: usize,
        mut each: impl FnMut(Candidate, Result<Accepted, Rejection>),
    ) {
        for candidate in envelope::candidates(text, from) {
            let slice = text.get(candidate.start..candidate.end).unwrap_or_default();
            let result = self.frame(slice, base + candidate.start);
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
}

/// The most telling rejection among candidates that all failed.
pub(crate) fn best_rejection<'r>(
    text: &str,
    failed: impl Iterator<Item = (&'r Candidate, &'r Rejection)>,
) -> Rejection {
    let mut best: Option<(u8, usize, &Rejection)> = None;
    for (candidate, rejection) in failed {
        let rank = match rejection {
            Rejection::Truncated { .. } => 4,
            Rejection::Schema(_) => 3,
            Rejection::Syntax { .. } => {
                // A syntax error in something that does not even look like JSON is prose.
                let slice = text.get(candidate.start..candidate.end).unwrap_or_default();
                if slice.contains([':', '"', '\'']) {
                    2
                } else {
                    0
                }
            }
            Rejection::NotJson => 0,
        };
        let size = candidate.end - candidate.start;
        if best.is_none_or(|(r, s, _)| (rank, size) > (r, s)) {
            best = Some((rank, size, rejection));
        }
    }
    match best {
        Some((rank, _, rejection)) if rank > 0 => rejection.clone(),
        _ => Rejection::NotJson,
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

/// The envelope fix for a value taken out of surrounding text.
pub(crate) fn extracted(start: usize, end: usize) -> Fix {
    // Built by hand: `format!` would cost more than the rest of a fenced answer's fast path.
    let mut description = String::with_capacity(72);
    description.push_str("took the JSON value at bytes ");
    push_decimal(&mut description, start);
    description.push_str("..");
    push_decimal(&mut description, end);
    description.push_str(" out of the text around it");
    Fix::new(FixKind::Envelope, start, description)
}

/// Appends `n` in decimal.
fn push_decimal(out: &mut String, n: usize) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut rest = n;
    loop {
        at -= 1;
        if let Some(digit) = digits.get_mut(at) {
            *digit = b'0' + (rest % 10) as u8;
        }
        rest /= 10;
        if rest == 0 || at == 0 {
            break;
        }
    }
    for &digit in digits.get(at..).unwrap_or_default() {
        out.push(char::from(digit));
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
    fn the_extracted_fix_names_its_span() {
        for (start, end) in [(0, 9), (10, 200), (12_345, usize::MAX)] {
            assert_eq!(
                extracted(start, end).description,
                format!("took the JSON value at bytes {start}..{end} out of the text around it")
            );
        }
    }

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

//! One value from an answer: where the parse of one value is orchestrated. The steps are called
//! here, in order, and each hands its result to the next; none calls back into one before it.
//!
//! 1. the envelope (`envelope`): where the answer proper begins, past a byte-order mark or a
//!    thinking block;
//! 2. the typed fast path (`typed`): clean JSON straight to `T`, the whole text or one value alone
//!    in prose or a fence;
//! 3. otherwise each frame (the whole text; a scalar or a tuple alone; each candidate value the
//!    envelope finds) through the pipeline (`pipeline`): serde or the lenient parser, coercion,
//!    validation;
//! 4. the choice (`choice`): which value is the answer, and the fixes that took it out of its text;
//! 5. the validated JSON to `T`.
//!
//! A line of a stream that holds prose is read the same way, by its candidates ([`each_candidate`]).

use super::choice::{self, Choice, Distinct};
use super::envelope::{Candidate, Envelope};
use super::pipeline::{self, Accepted, Pipeline, Rejection};
use super::{typed, Fix, FixKind, ParseError, ParseOptions, Parsed};
use crate::schema::Schema;
use crate::schema::SchemaSet;
use serde_json::Value;

/// Parses one value of `T` with default options.
///
/// ```
/// use llm_extract::{from_str, Schema, schema::SchemaSet};
/// use serde_json::json;
/// use std::sync::OnceLock;
///
/// #[derive(serde::Deserialize)]
/// struct Answer { n: i32 }
/// impl Schema for Answer {
///     fn schema() -> &'static SchemaSet {
///         static S: OnceLock<SchemaSet> = OnceLock::new();
///         S.get_or_init(|| SchemaSet::new("Answer", json!({
///             "type": "object", "properties": {"n": {"type": "integer"}},
///             "required": ["n"], "additionalProperties": false
///         })))
///     }
/// }
///
/// let parsed = from_str::<Answer>("Here you go:\n```json\n{\"n\": \"42\"}\n```").unwrap();
/// assert_eq!(parsed.value.n, 42);
/// assert_eq!(parsed.fixes.len(), 2); // taken out of the fence; "42" read as 42
/// ```
pub fn from_str<T: Schema>(text: &str) -> Result<Parsed<T>, ParseError> {
    from_str_with(text, &ParseOptions::default())
}

/// Parses one value of `T`.
///
/// Clean JSON goes straight from the text to `T`: with [`ParseOptions::validate`] off through
/// `serde_json::from_str::<T>`, with it on through a deserializer that checks the schema as it reads.
/// So does one clean value alone in prose or a fence (unless strict). Anything else, or anything
/// that check is not sure of, takes the full path: the lenient parser, validation, coercion, located
/// errors.
pub fn from_str_with<T: Schema>(
    text: &str,
    options: &ParseOptions,
) -> Result<Parsed<T>, ParseError> {
    let envelope = Envelope::new(text);
    if let Some(parsed) = clean::<T>(&envelope, options) {
        return Ok(parsed);
    }
    if options.strict && !options.validate {
        if let Err(e) = serde_json::from_str::<T>(text) {
            return Err(pipeline::serde_rejection(&e, text, 0).into_error(text));
        }
    }
    let Parsed { value, fixes } = value_from(&envelope, T::schema(), options)?;
    // Borrowed, so a refusal carries serde's path without parsing the text a second time.
    match pipeline::deserialize::<T>(&value) {
        Ok(value) => Ok(Parsed { value, fixes }),
        Err((path, message)) => Err(ParseError::Deserialize {
            path,
            message,
            raw: text.to_owned(),
        }),
    }
}

/// `T` straight from the text when it is clean JSON, or (unless strict) one clean JSON value alone
/// in prose or a fence; validated while it is deserialized when the options ask for validation.
/// `None` sends the text down the full path.
fn clean<T: Schema>(envelope: &Envelope<'_>, options: &ParseOptions) -> Option<Parsed<T>> {
    let text = envelope.text;
    let schema = T::schema();
    let plan = match options.validate {
        true => Some(schema.plan()?),
        false => None,
    };
    let wants_container = schema.wants_container();
    // Prose first cannot be clean JSON of an object or an array: skip serde's error for it. (JSON
    // allows only ASCII whitespace before a value, so the first other byte settles it.)
    let prose_first = wants_container
        && !matches!(
            text.bytes().find(|b| !b.is_ascii_whitespace()),
            Some(b'{' | b'[')
        );
    if !prose_first {
        if let Some(value) = typed::from_str::<T>(text, plan) {
            return Some(Parsed {
                value,
                fixes: Vec::new(),
            });
        }
    }
    if options.strict || !wants_container {
        return None;
    }
    let from = envelope.first_bracket()?;
    let (value, len) = typed::prefix_from_str::<T>(text.get(from..)?, plan.is_some())?;
    let to = from + len;
    // One value alone (else the full path finds and reads the others, or the members after it).
    if !choice::alone(text, to) {
        return None;
    }
    Some(Parsed {
        value,
        fixes: choice::fixes(text, envelope.fix.clone(), Some((from, to))),
    })
}

/// [`from_str_with`], with the validated JSON the value was read from: for checks that read JSON
/// (an extractor's closures) on a typed value.
pub(crate) fn from_str_with_json<T: Schema>(
    text: &str,
    options: &ParseOptions,
) -> Result<(Parsed<T>, Value), ParseError> {
    let Parsed { value, fixes } = value_from(&Envelope::new(text), T::schema(), options)?;
    match pipeline::deserialize::<T>(&value) {
        Ok(typed) => Ok((
            Parsed {
                value: typed,
                fixes,
            },
            value,
        )),
        Err((path, message)) => Err(ParseError::Deserialize {
            path,
            message,
            raw: text.to_owned(),
        }),
    }
}

/// Parses one value against a runtime schema, returning validated JSON.
pub fn from_str_value(
    text: &str,
    schema: &SchemaSet,
    options: &ParseOptions,
) -> Result<Parsed<Value>, ParseError> {
    value_from(&Envelope::new(text), schema, options)
}

/// Validated JSON from the answer in `envelope`: the whole text when it is clean JSON, else the
/// frames the envelope holds.
fn value_from(
    envelope: &Envelope<'_>,
    schema: &SchemaSet,
    options: &ParseOptions,
) -> Result<Parsed<Value>, ParseError> {
    let text = envelope.text;
    let pipeline = Pipeline::new(schema, *options).map_err(|source| ParseError::InvalidSchema {
        source,
        raw: text.to_owned(),
    })?;
    // The fast path: the whole answer is clean JSON.
    let accepted = match serde_json::from_str::<Value>(text) {
        Ok(value) => pipeline
            .check(value, Vec::new(), 0)
            .map_err(|r| r.into_error(text)),
        Err(e) if options.strict => Err(pipeline::serde_rejection(&e, text, 0).into_error(text)),
        Err(_) => in_envelope(&pipeline, envelope),
    };
    accepted.map(|Accepted { value, fixes }| Parsed { value, fixes })
}

/// Everything but the fast path: the frames of the envelope (a scalar or a tuple alone, each
/// candidate value) through the pipeline, then the choice among what passed.
fn in_envelope(pipeline: &Pipeline<'_>, envelope: &Envelope<'_>) -> Result<Accepted, ParseError> {
    let text = envelope.text;
    if envelope.body().trim().is_empty() {
        return Err(ParseError::NoJson {
            raw: text.to_owned(),
        });
    }
    let with_envelope = |mut accepted: Accepted, span: Option<(usize, usize)>| {
        let mut fixes = choice::fixes(text, envelope.fix.clone(), span);
        fixes.append(&mut accepted.fixes);
        accepted.fixes = fixes;
        accepted
    };

    // A scalar answer (an enum, a number) is the whole text, perhaps quoted or fenced; where the
    // value may be a container too (a union), only when the text opens none (else prose before an
    // object could be read as a string). A Python tuple for a wanted array: no bracket opens it,
    // so the candidates miss it.
    let mut scalar_rejection = None;
    let (at, inner) = envelope.inner();
    let scalar_first = pipeline.admits_scalar() && !inner.contains(['{', '[', '(']);
    if !pipeline.wants_container() || scalar_first {
        match pipeline.frame(inner, at) {
            Ok(accepted) => return Ok(with_envelope(accepted, Some((at, at + inner.len())))),
            Err(rejection) => scalar_rejection = Some(rejection),
        }
    }
    if pipeline.wants_container() && inner.starts_with('(') {
        if let Ok(accepted) = pipeline.frame(inner, at) {
            return Ok(with_envelope(accepted, Some((at, at + inner.len()))));
        }
    }

    let mut distinct = Distinct::default();
    let mut failed: Vec<(Candidate, Rejection)> = Vec::new();
    each_candidate(
        pipeline,
        text,
        envelope.candidates(),
        0,
        |candidate, result| match result {
            Ok(accepted) => distinct.add(candidate, accepted, |earlier| {
                reread(pipeline, text, earlier)
                    .ok()
                    .map(|again| again.value)
            }),
            Err(r) => failed.push((candidate, r)),
        },
    );
    match distinct.choice(text) {
        Choice::None => {}
        Choice::One(c, a) => return Ok(with_envelope(a, Some((c.start, c.end)))),
        Choice::Ambiguous(candidates) => {
            return Err(ParseError::Ambiguous {
                candidates,
                raw: text.to_owned(),
            })
        }
    }

    // A string-enum answer written as prose ("The sentiment is Positive.").
    let found = match pipeline.options().strict {
        true => None,
        false => choice::enum_in_prose(pipeline.schema(), envelope.body()),
    };
    if let Some(found) = found {
        return match found {
            Ok(variant) => {
                let fix = Fix::new(
                    FixKind::EnumCase,
                    envelope.start,
                    format!("found the enum value {variant:?} in the text"),
                );
                let accepted = Accepted {
                    value: Value::String(variant),
                    fixes: vec![fix],
                };
                Ok(with_envelope(accepted, None))
            }
            Err(candidates) => Err(ParseError::Ambiguous {
                candidates,
                raw: text.to_owned(),
            }),
        };
    }

    let rejection = if failed.is_empty() {
        scalar_rejection.unwrap_or(Rejection::NotJson)
    } else {
        choice::best_rejection(text, failed.iter().map(|(c, r)| (c, r)))
    };
    Err(rejection.into_error(text))
}

/// Every candidate value of `text` (found by the envelope), each through the pipeline, handed to
/// `each` in order as it is evaluated (so a caller keeps only what it needs: a thousand copies of
/// one value are not all held at once). An object whose members go on after its brace is read to
/// their end when the schema prefers it (`{"a": 1}, "b": 2}`); values found inside a value cut off
/// at the end are its parts, not candidates of their own, and are left out. `base` is the offset of
/// `text` in the whole input.
pub(crate) fn each_candidate(
    pipeline: &Pipeline<'_>,
    text: &str,
    candidates: Vec<Candidate>,
    base: usize,
    mut each: impl FnMut(Candidate, Result<Accepted, Rejection>),
) {
    // The end of a candidate that took in the members after it: candidates inside those are its parts.
    let mut taken_to = 0;
    for mut candidate in candidates {
        if candidate.start < taken_to {
            continue;
        }
        let slice = text.get(candidate.start..candidate.end).unwrap_or_default();
        let mut result = pipeline.frame(slice, base + candidate.start);
        if let Some((longer, longer_result)) = continued(pipeline, text, candidate, base, &result) {
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
/// longer reading, when the schema prefers it (see [`choice::prefers_longer`]).
fn continued(
    pipeline: &Pipeline<'_>,
    text: &str,
    candidate: Candidate,
    base: usize,
    closed: &Result<Accepted, Rejection>,
) -> Option<(Candidate, Result<Accepted, Rejection>)> {
    if pipeline.options().strict
        || !candidate.closed
        || !text.get(candidate.start..)?.starts_with('{')
        || !choice::members_follow(text, candidate.end)
    {
        return None;
    }
    let (longer, end) = pipeline
        .reopened(text.get(candidate.start..)?, base + candidate.start)
        .ok()?;
    let end = candidate.start + end;
    if end <= candidate.end || !choice::prefers_longer(pipeline.schema(), closed, &longer) {
        return None;
    }
    let longer_candidate = Candidate {
        end,
        reopened: true,
        ..candidate
    };
    Some((longer_candidate, Ok(longer)))
}

/// A candidate span read again as [`each_candidate`] read it (for a value not kept, to compare).
fn reread(
    pipeline: &Pipeline<'_>,
    text: &str,
    candidate: Candidate,
) -> Result<Accepted, Rejection> {
    let slice = text.get(candidate.start..candidate.end).unwrap_or_default();
    match candidate.reopened {
        true => pipeline
            .reopened(slice, candidate.start)
            .map(|(accepted, _)| accepted),
        false => pipeline.frame(slice, candidate.start),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::work;
    use serde_json::json;

    #[test]
    fn telling_candidates_apart_is_linear() {
        // Comparing each accepted candidate with every distinct one before it would be quadratic.
        for n in [300, 1_200] {
            let text: String = (0..n)
                .map(|i| format!("Draft {i}: {{\"a\":{i}}}\n"))
                .collect();
            let mut result = None;
            let steps = work::of(|| result = Some(value(&text)));
            assert!(
                matches!(&result, Some(Err(ParseError::Ambiguous { candidates, .. })) if candidates.len() == n),
                "{result:?}"
            );
            let same = "{\"a\":1} ".repeat(n);
            let steps_same = work::of(|| result = Some(value(&same)));
            assert_eq!(result.and_then(Result::ok), Some(json!({"a":1})));
            // One step per candidate to tell whether it is fenced, one per comparison.
            assert!(
                steps + steps_same <= 4 * n,
                "{steps} + {steps_same} steps for {n} candidates"
            );
        }
    }

    #[test]
    fn finding_an_enum_in_long_prose_is_linear() {
        let schema = SchemaSet::new(
            "S",
            json!({"type":"string","enum":["positive","negative","very_positive"]}),
        );
        for n in [500, 2_000] {
            let text = format!("The answer: {}", "very positive, ".repeat(n));
            let mut result = None;
            let steps = work::of(|| {
                result = Some(from_str_value(&text, &schema, &ParseOptions::default()))
            });
            assert_eq!(result.unwrap().unwrap().value, json!("very_positive"));
            // Two words per repetition, each compared with the variants' four words at most.
            assert!(steps <= 9 * n, "{steps} steps for {n} repetitions");
        }
    }

    fn object_schema() -> SchemaSet {
        SchemaSet::new(
            "A",
            json!({"type":"object","properties":{"a":{"type":"integer"}},"required":["a"],"additionalProperties":false}),
        )
    }

    fn value(text: &str) -> Result<Value, ParseError> {
        from_str_value(text, &object_schema(), &ParseOptions::default()).map(|p| p.value)
    }

    #[test]
    fn envelope_fix_is_recorded_only_when_there_is_an_envelope() {
        let schema = object_schema();
        let clean = from_str_value(" {\"a\":1,} ", &schema, &ParseOptions::default()).unwrap();
        assert!(clean.fixes.iter().all(|r| r.kind != FixKind::Envelope));
        let prose = from_str_value("x {\"a\":1}", &schema, &ParseOptions::default()).unwrap();
        assert_eq!(prose.fixes[0].kind, FixKind::Envelope);
        assert_eq!(prose.fixes[0].offset, 2);
    }

    #[test]
    fn a_fence_singles_out_the_answer() {
        let text = "For example {\"a\":1}. Answer:\n```json\n{\"a\":2}\n```";
        assert_eq!(value(text).unwrap(), json!({"a":2}));
        assert!(matches!(
            value("{\"a\":1} or {\"a\":2}"),
            Err(ParseError::Ambiguous { candidates, .. }) if candidates.len() == 2
        ));
        assert_eq!(value("{\"a\":1} {\"a\":1}").unwrap(), json!({"a":1}));
        // A repeat of a value that was not kept (neither first nor fenced) is read again from its
        // span and still counts once; written differently, it is still the same value.
        assert!(matches!(
            value("{\"a\":1} {\"a\":2} {\"a\":3} {\"a\": 2} {\"a\":3}"),
            Err(ParseError::Ambiguous { candidates, .. })
                if candidates == ["{\"a\":1}", "{\"a\":2}", "{\"a\":3}"]
        ));
        // The only fenced value wins, wherever it is among the others.
        let text = "{\"a\":1} {\"a\":2}\n```json\n{\"a\":3}\n```\n{\"a\":2} {\"a\":1}";
        assert_eq!(value(text).unwrap(), json!({"a":3}));
        // A fenced copy of a value seen before is that value, not a second fenced one.
        let text = "{\"a\":1}\n```json\n{\"a\":2}\n```\n```json\n{\"a\":1}\n```";
        assert_eq!(value(text).unwrap(), json!({"a":2}));
    }

    #[test]
    fn enums_in_prose() {
        let schema = SchemaSet::new(
            "S",
            json!({"type":"string","enum":["positive","negative","very_positive"]}),
        );
        let parse = |t: &str| from_str_value(t, &schema, &ParseOptions::default());
        assert_eq!(
            parse("The sentiment is Positive.").unwrap().value,
            json!("positive")
        );
        assert_eq!(
            parse("very positive!").unwrap().value,
            json!("very_positive")
        );
        assert_eq!(parse("'negative'").unwrap().value, json!("negative"));
        assert!(matches!(
            parse("positive or negative"),
            Err(ParseError::Ambiguous { .. })
        ));
        assert!(matches!(parse("no idea"), Err(ParseError::Schema { .. })));
        assert!(from_str_value("Positive", &schema, &ParseOptions::strict()).is_err());
    }

    #[test]
    fn errors_pick_the_most_telling_candidate() {
        assert!(matches!(
            value("{\"a\":\"x\"}"),
            Err(ParseError::Schema { .. })
        ));
        assert!(matches!(
            value("ok {\"a\":"),
            Err(ParseError::Truncated { .. })
        ));
        assert!(matches!(
            value("see {here}"),
            Err(ParseError::NoJson { .. })
        ));
        assert!(matches!(
            value("x {\"a\" 1}"),
            Err(ParseError::Syntax { .. })
        ));
        assert!(matches!(value("   "), Err(ParseError::NoJson { .. })));
    }

    #[test]
    fn clean_json_that_fails_validation_is_coerced() {
        assert_eq!(value("{\"a\":\"7\"}").unwrap(), json!({"a":7}));
    }
}

//! One value from an answer: where the parse of one value is orchestrated. Each step is called
//! once, in order, and hands its result to the next; none calls back into one before it.
//!
//! 1. the envelope (`envelope`): the places the answer may be, each found only when asked for: a
//!    value alone (the whole text, or one object or array in prose or a fence), the whole text,
//!    the answer proper (past a byte-order mark or a thinking block, without its fence), each
//!    candidate value in it;
//! 2. the typed fast path (`typed`): the value alone straight to `T`, checked as it is read;
//! 3. otherwise each other place through the pipeline (`pipeline`: read once by serde or the
//!    lenient parser, then checked once by `schema_check`: validation, coercion where it fails);
//! 4. the choice (`choice`): which value is the answer, and the fixes for where it was found;
//! 5. the validated JSON to `T` (`deserialize`).
//!
//! A line of a stream that holds prose is read the same way, by its candidates
//! ([`Pipeline::each_candidate`]).

use super::choice::Choosing;
use super::envelope::{Alone, Envelope, Frame, Wanted};
use super::pipeline::{self, Part, Pipeline, Run};
use super::{deserialize, typed, ParseError, ParseOptions, Parsed};
use crate::schema::Schema;
use crate::schema::SchemaSet;
use serde::de::DeserializeOwned;
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
    match answer::<T>(text, T::schema(), options, true)? {
        Answer::Typed(parsed) => Ok(parsed),
        Answer::Json(Parsed { value, fixes }) => {
            // From the validated JSON, so a refusal carries serde's path without reading the text
            // again.
            let (value, _) = deserialize::answer::<T>(value, text)?;
            Ok(Parsed { value, fixes })
        }
    }
}

/// [`from_str_with`], with the validated JSON the value was read from: for checks that read JSON
/// (an extractor's closures) on a typed value.
pub(crate) fn from_str_with_json<T: Schema>(
    text: &str,
    options: &ParseOptions,
) -> Result<(Parsed<T>, Value), ParseError> {
    let Parsed { value, fixes } = answer::<Value>(text, T::schema(), options, false)?.json();
    let (typed, value) = deserialize::answer::<T>(value, text)?;
    Ok((
        Parsed {
            value: typed,
            fixes,
        },
        value,
    ))
}

/// Parses one value against a runtime schema, returning validated JSON.
pub fn from_str_value(
    text: &str,
    schema: &SchemaSet,
    options: &ParseOptions,
) -> Result<Parsed<Value>, ParseError> {
    answer::<Value>(text, schema, options, false).map(Answer::json)
}

/// An answer: `T` read straight, or validated JSON.
enum Answer<T> {
    Typed(Parsed<T>),
    Json(Parsed<Value>),
}

impl Answer<Value> {
    /// The validated JSON, however it was read.
    fn json(self) -> Parsed<Value> {
        match self {
            Answer::Typed(parsed) | Answer::Json(parsed) => parsed,
        }
    }
}

/// The answer of `text`, each step once, in order: the places the answer may be, as the envelope
/// hands them out; a value alone straight to `T` (when `typed`: clean JSON, or one clean value in
/// prose or a fence); else the other frames through the pipeline, and the choice among what passed.
fn answer<T: DeserializeOwned>(
    text: &str,
    schema: &SchemaSet,
    options: &ParseOptions,
    typed: bool,
) -> Result<Answer<T>, ParseError> {
    // The typed fast path, when asked for: with the schema's plan when validating, for it
    // checks the value as it is read (no plan: the full path decides).
    let plan = match (typed, options.validate) {
        (false, _) => None,
        (true, false) => Some(None),
        (true, true) => schema.plan().map(Some),
    };
    let wanted = Wanted {
        alone: plan.is_some(),
        strict: options.strict,
        container: schema.wants_container(),
    };
    let mut frames = Envelope::new(text).frames(wanted);
    if let Some(Alone { span, clean, fixes }) = frames.alone() {
        let plan = plan.flatten();
        if options.strict && plan.is_none() {
            // Read once: serde's verdict on the whole text, its error the rejection.
            match serde_json::from_str::<T>(text) {
                Ok(value) if clean => return Ok(Answer::Typed(Parsed { value, fixes })),
                Ok(_) => {}
                Err(e) => return Err(pipeline::serde_rejection(&e, text, 0).into_error(text)),
            }
        } else if clean || !options.strict {
            let slice = text.get(span.0..span.1).unwrap_or_default();
            if let Some(value) = typed::read::<T>(slice, plan) {
                return Ok(Answer::Typed(Parsed { value, fixes }));
            }
        }
    }
    // Else the other frames, each through the pipeline (the whole text by serde; the answer
    // without its fence, for a scalar or a tuple; each candidate value), then the choice among what
    // passed, with the fixes for where the answer was found.
    let pipeline = Pipeline::new(schema, *options).map_err(|source| ParseError::InvalidSchema {
        source,
        raw: text.to_owned(),
    })?;
    let mut run = Run::default();
    let mut choosing = Choosing::default();
    for frame in frames {
        let part = match frame {
            Frame::Whole => Part::Whole,
            Frame::Body(body) => {
                if body.text.trim().is_empty() {
                    return Err(ParseError::NoJson {
                        raw: text.to_owned(),
                    });
                }
                let (at, inner) = body.inner;
                // A scalar answer (an enum, a number) is the whole text, perhaps quoted or fenced;
                // where the value may be a container too (a union), only when the text opens none
                // (else prose before an object could be read as a string). A Python tuple for a
                // wanted array: no bracket opens it, so the candidates miss it.
                let scalar = !pipeline.wants_container()
                    || (pipeline.admits_scalar() && !inner.contains(['{', '[', '(']));
                let tuple = pipeline.wants_container() && inner.starts_with('(');
                choosing.body(body, scalar);
                match scalar || tuple {
                    true => Part::Slice(at, inner),
                    false => continue,
                }
            }
            Frame::Candidate(candidate) => Part::Candidate(candidate),
        };
        let Some(read) = pipeline.read(text, part, 0, &mut run) else {
            continue;
        };
        match part {
            // The whole text read by serde is the answer, or why there is none.
            Part::Whole => return choosing.whole(read, text).map(Answer::Json),
            // The answer without its fence: a scalar or a tuple that passed is the answer.
            Part::Slice(..) => {
                if choosing.slice(read) {
                    break;
                }
            }
            Part::Candidate(_) => choosing.candidate(read, text),
        }
    }
    choosing
        .answer(text, pipeline.schema(), options.strict)
        .map(Answer::Json)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::{work, FixKind};
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
            // One step per candidate to tell whether it is fenced, one per comparison, and the few
            // bytes after each brace read to tell whether members follow.
            assert!(
                steps + steps_same <= 8 * n,
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
        // A repeat of a value that was not kept whole (neither first nor fenced) still counts once;
        // written differently, it is still the same value.
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

    #[derive(Debug, PartialEq, serde::Deserialize)]
    struct N {
        n: i32,
    }

    impl Schema for N {
        fn schema() -> &'static SchemaSet {
            static S: std::sync::OnceLock<SchemaSet> = std::sync::OnceLock::new();
            S.get_or_init(|| {
                SchemaSet::new(
                    "N",
                    json!({"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}),
                )
            })
        }
    }

    #[test]
    fn strict_without_validation_is_serde_s_verdict() {
        let options = ParseOptions::strict().with_validation(false);
        let parse = |text| from_str_with::<N>(text, &options);
        assert_eq!(parse(" {\"n\": 1} ").unwrap().value, N { n: 1 });
        // A type error is serde's, located where serde stopped.
        let text = "{\"n\": \"1\"}";
        let serde = serde_json::from_str::<N>(text).unwrap_err().to_string();
        assert!(
            matches!(parse(text), Err(ParseError::Syntax { message, offset: 8, .. }) if message == serde),
            "{:?}",
            parse(text)
        );
        // Prose first is not JSON.
        assert!(matches!(
            parse("Sure: {\"n\": 1}"),
            Err(ParseError::Syntax { offset: 0, .. })
        ));
    }

    #[test]
    fn clean_json_that_fails_validation_is_coerced() {
        assert_eq!(value("{\"a\":\"7\"}").unwrap(), json!({"a":7}));
    }
}

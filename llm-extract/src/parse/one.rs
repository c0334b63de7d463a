//! One value from an answer: the fast path, the envelope, and the choice among candidates.

use super::envelope::{self, Candidate};
use super::pipeline::{self, best_rejection, extracted, Accepted, Pipeline, Rejection};
use super::{typed, work, Fix, FixKind, ParseError, ParseOptions, Parsed};
use crate::schema::Schema;
use crate::schema::SchemaSet;
use serde_json::Value;
use std::borrow::Cow;
use std::collections::VecDeque;

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
    // The envelope, once: the clean path looks for the value in it, and the full path starts there.
    let mut body = None;
    if let Some(parsed) = clean::<T>(text, options, &mut body) {
        return Ok(parsed);
    }
    if options.strict && !options.validate {
        if let Err(e) = serde_json::from_str::<T>(text) {
            return Err(pipeline::serde_rejection(&e, text, 0).into_error(text));
        }
    }
    let Parsed { value, fixes } = value_from(text, T::schema(), options, body)?;
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

/// `T` straight from `text` when it is clean JSON, or (unless strict) one clean JSON value alone in
/// prose or a fence; validated while it is deserialized when the options ask for validation. `None`
/// sends the text down the full path; `body` then holds where the answer proper begins, if this
/// looked.
fn clean<T: Schema>(
    text: &str,
    options: &ParseOptions,
    body: &mut Option<Body>,
) -> Option<Parsed<T>> {
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
    let (start, envelope_fix) = body.insert(envelope::body_start(text)).clone();
    let from = envelope::first_bracket(text, start)?;
    let (value, len) = typed::prefix_from_str::<T>(text.get(from..)?, plan.is_some())?;
    let to = from + len;
    // One value alone: the prose after it opens no other (then the full path finds just this one)
    // and does not go on with its members (`{"a": 1}, "b": 2}`, which the full path reads).
    if envelope::first_bracket(text, to).is_some() || envelope::members_follow(text, to) {
        return None;
    }
    Some(Parsed {
        value,
        fixes: envelope_fixes(text, envelope_fix, Some((from, to))),
    })
}

/// The fixes of a value found in `text`: the envelope's (a thinking block, a BOM), then taking
/// the value at `span` out of the text around it, when there was text around it.
fn envelope_fixes(text: &str, envelope_fix: Option<Fix>, span: Option<(usize, usize)>) -> Vec<Fix> {
    let mut fixes = Vec::with_capacity(2);
    fixes.extend(envelope_fix);
    if let Some((s, e)) = span {
        // The value is the whole text but for whitespace around it (told from the text before
        // and after it, which is short or stops at its first letter).
        let alone = text.get(..s).is_some_and(|t| t.trim_start().is_empty())
            && text.get(e..).is_some_and(|t| t.trim_end().is_empty())
            && text.get(s..e).is_some_and(|v| v.trim().len() == v.len());
        if !alone {
            fixes.push(extracted(s, e));
        }
    }
    fixes
}

/// Where the answer proper begins (after a byte-order mark and a thinking block), and the fix that
/// records what was skipped.
type Body = (usize, Option<Fix>);

/// [`from_str_with`], with the validated JSON the value was read from: for checks that read JSON
/// (an extractor's closures) on a typed value.
pub(crate) fn from_str_with_json<T: Schema>(
    text: &str,
    options: &ParseOptions,
) -> Result<(Parsed<T>, Value), ParseError> {
    let Parsed { value, fixes } = value_from(text, T::schema(), options, None)?;
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
    value_from(text, schema, options, None)
}

/// [`from_str_value`], with the envelope's start when it is already known.
fn value_from(
    text: &str,
    schema: &SchemaSet,
    options: &ParseOptions,
    body: Option<Body>,
) -> Result<Parsed<Value>, ParseError> {
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
        Err(_) => lenient(&pipeline, text, body),
    };
    accepted.map(|Accepted { value, fixes }| Parsed { value, fixes })
}

/// Everything but the fast path: the envelope, the candidates, the choice.
fn lenient(
    pipeline: &Pipeline<'_>,
    text: &str,
    body: Option<Body>,
) -> Result<Accepted, ParseError> {
    let (start, envelope_fix) = body.unwrap_or_else(|| envelope::body_start(text));
    let body = text.get(start..).unwrap_or_default();
    if body.trim().is_empty() {
        return Err(ParseError::NoJson {
            raw: text.to_owned(),
        });
    }
    let with_envelope = |mut accepted: Accepted, span: Option<(usize, usize)>| {
        let mut fixes = envelope_fixes(text, envelope_fix.clone(), span);
        fixes.append(&mut accepted.fixes);
        accepted.fixes = fixes;
        accepted
    };

    // A scalar answer (an enum, a number) is the whole text, perhaps quoted or fenced; where the
    // value may be a container too (a union), only when the text opens none (else prose before an
    // object could be read as a string).
    let mut scalar_rejection = None;
    let (offset, inner) = envelope::unfenced(body);
    let trimmed = inner.trim();
    let scalar_first = pipeline.admits_scalar() && !trimmed.contains(['{', '[', '(']);
    if !pipeline.wants_container() || scalar_first {
        let at = start + offset + (inner.len() - inner.trim_start().len());
        match pipeline.frame(trimmed, at) {
            Ok(accepted) => return Ok(with_envelope(accepted, Some((at, at + trimmed.len())))),
            Err(rejection) => scalar_rejection = Some(rejection),
        }
    }

    // A Python tuple for a wanted array: no bracket opens it, so the candidates miss it.
    if pipeline.wants_container() {
        let (offset, inner) = envelope::unfenced(body);
        let trimmed = inner.trim();
        if trimmed.starts_with('(') {
            let at = start + offset + (inner.len() - inner.trim_start().len());
            if let Ok(accepted) = pipeline.frame(trimmed, at) {
                return Ok(with_envelope(accepted, Some((at, at + trimmed.len()))));
            }
        }
    }

    let mut distinct = Distinct::default();
    let mut failed: Vec<(Candidate, Rejection)> = Vec::new();
    pipeline.each_candidate(text, start, 0, |candidate, result| match result {
        Ok(accepted) => distinct.add(pipeline, text, candidate, accepted),
        Err(r) => failed.push((candidate, r)),
    });
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

    if let Some(found) = enum_in_prose(pipeline, body) {
        return match found {
            Ok(variant) => {
                let fix = Fix::new(
                    FixKind::EnumCase,
                    start,
                    format!("found the enum value {variant:?} in the text"),
                );
                let mut accepted = Accepted {
                    value: Value::String(variant),
                    fixes: vec![fix],
                };
                accepted = with_envelope(accepted, None);
                Ok(accepted)
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
        best_rejection(text, failed.iter().map(|(c, r)| (c, r)))
    };
    Err(rejection.into_error(text))
}

/// The distinct values among the accepted candidates, in order. Only the values that can become the
/// answer are kept (the first, and the first fenced one); the others are known by span and hash, and
/// read again from their span when a later value has the same hash. So a thousand values in prose
/// cost a few words each, not a parsed value each, and the memory stays proportional to the text.
#[derive(Default)]
struct Distinct {
    found: Vec<Found>,
    by_hash: std::collections::HashMap<u64, Vec<usize>>,
    fenced: usize,
}

struct Found {
    candidate: Candidate,
    accepted: Option<Accepted>,
}

enum Choice {
    None,
    One(Candidate, Accepted),
    Ambiguous(Vec<String>),
}

impl Distinct {
    fn add(
        &mut self,
        pipeline: &Pipeline<'_>,
        text: &str,
        candidate: Candidate,
        accepted: Accepted,
    ) {
        let same = self.by_hash.entry(value_hash(&accepted.value)).or_default();
        let seen = same.iter().any(|&i| {
            work::count(1);
            self.found
                .get(i)
                .is_some_and(|earlier| match &earlier.accepted {
                    Some(kept) => kept.value == accepted.value,
                    None => pipeline
                        .candidate(text, earlier.candidate, 0)
                        .is_ok_and(|again| again.value == accepted.value),
                })
        });
        if seen {
            return;
        }
        same.push(self.found.len());
        let keep = self.found.is_empty() || (candidate.fenced && self.fenced == 0);
        self.fenced += usize::from(candidate.fenced);
        self.found.push(Found {
            candidate,
            accepted: keep.then_some(accepted),
        });
    }

    /// One value; or, among several, the only fenced one (a fence singles out the answer among
    /// drafts and examples in the prose); or the texts of all of them.
    fn choice(self, text: &str) -> Choice {
        let chosen = match self.found.len() {
            0 => return Choice::None,
            1 => self.found.into_iter().next(),
            _ if self.fenced == 1 => self.found.into_iter().find(|f| f.candidate.fenced),
            _ => {
                return Choice::Ambiguous(
                    self.found
                        .iter()
                        .map(|f| {
                            let c = f.candidate;
                            text.get(c.start..c.end).unwrap_or_default().to_owned()
                        })
                        .collect(),
                )
            }
        };
        match chosen {
            Some(Found {
                candidate,
                accepted: Some(accepted),
            }) => Choice::One(candidate, accepted),
            // Kept by construction: the first value, and the first fenced one.
            _ => Choice::None,
        }
    }
}

/// For a string-enum answer written as prose ("The sentiment is Positive."): the one variant named
/// in it; `Err` with the variants if several are named.
fn enum_in_prose(pipeline: &Pipeline<'_>, text: &str) -> Option<Result<String, Vec<String>>> {
    if pipeline.options().strict {
        return None;
    }
    // The root's names, or those of the one string enum among a root union's branches (the unit
    // variants of an externally tagged enum).
    let generic = pipeline.schema().generic();
    let names = generic.get("enum").or_else(|| {
        let branches = generic
            .get("oneOf")
            .or_else(|| generic.get("anyOf"))?
            .as_array()?;
        let mut enums = branches.iter().filter_map(|branch| branch.get("enum"));
        match (enums.next(), enums.next()) {
            (Some(names), None) => Some(names),
            _ => None,
        }
    })?;
    let variants: Vec<&str> = names.as_array()?.iter().filter_map(Value::as_str).collect();
    let mut named = named_variants(&variants, text);
    match named.len() {
        0 => None,
        1 => named.pop().map(Ok),
        _ => Some(Err(named)),
    }
}

/// The variants named in `text`, each as a run of whole words (case aside), in the order first named.
/// "very positive" names very_positive, not positive as well: a hit inside a longer hit (of another
/// variant) does not count.
///
/// One pass over the words with a window as wide as the longest variant: a hit starting at word `p` is
/// inside a longer one when a hit starting before `p` ends at or after its end, or a longer hit starts
/// at `p` too. Time linear in the text (times the variants' words), memory the window's.
fn named_variants(variants: &[&str], text: &str) -> Vec<String> {
    let needles: Vec<(&str, Vec<Cow<'_, str>>)> = variants
        .iter()
        .map(|v| (*v, lowercase_words(v)))
        .filter(|(_, words)| !words.is_empty())
        .collect();
    let width = needles.iter().map(|(_, w)| w.len()).max().unwrap_or(0);
    let mut named: Vec<String> = Vec::new();
    if width == 0 {
        return named;
    }
    let mut window: VecDeque<Cow<'_, str>> = VecDeque::with_capacity(width);
    // The absolute index of window[0], and the furthest end of a hit starting before it.
    let mut start = 0usize;
    let mut furthest = 0usize;
    // The needles that hit at the window's start (reused, so a word costs no allocation).
    let mut hits: Vec<usize> = Vec::new();
    let mut decide = |window: &VecDeque<Cow<'_, str>>, start: usize| {
        hits.clear();
        hits.extend(needles.iter().enumerate().filter_map(|(i, (_, needle))| {
            work::count(needle.len());
            let hit = needle.len() <= window.len()
                && window.iter().zip(needle.iter()).all(|(a, b)| a == b);
            hit.then_some(i)
        }));
        let longest = hits
            .iter()
            .filter_map(|&i| needles.get(i))
            .map(|(_, n)| n.len())
            .max()
            .unwrap_or(0);
        for (variant, needle) in hits.iter().filter_map(|&i| needles.get(i)) {
            let inside = furthest >= start + needle.len() || longest > needle.len();
            if !inside && !named.iter().any(|n| n == variant) {
                named.push((*variant).to_owned());
            }
        }
        furthest = furthest.max(start + longest);
    };
    for word in lowercase_words_iter(text) {
        window.push_back(word);
        if window.len() == width {
            decide(&window, start);
            window.pop_front();
            start += 1;
        }
    }
    while !window.is_empty() {
        decide(&window, start);
        window.pop_front();
        start += 1;
    }
    named
}

/// The words of `text` (runs of alphanumeric characters), lowercased.
fn lowercase_words(text: &str) -> Vec<Cow<'_, str>> {
    lowercase_words_iter(text).collect()
}

/// The words of `text` (runs of alphanumeric characters), lowercased; a word already in lowercase is
/// borrowed, so prose costs no allocation per word.
fn lowercase_words_iter(text: &str) -> impl Iterator<Item = Cow<'_, str>> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(|w| {
            let lower = if w.is_ascii() {
                !w.bytes().any(|b| b.is_ascii_uppercase())
            } else {
                w.chars().all(|c| c.to_lowercase().eq([c]))
            };
            if lower {
                Cow::Borrowed(w)
            } else {
                Cow::Owned(w.to_lowercase())
            }
        })
}

/// A hash of `value` that equal values share (object keys in any order, `0.0` and `-0.0`).
fn value_hash(value: &Value) -> u64 {
    use std::hash::{Hash, Hasher};
    fn feed(value: &Value, h: &mut impl Hasher) {
        match value {
            Value::Null => 0u8.hash(h),
            Value::Bool(b) => (1u8, b).hash(h),
            Value::Number(n) => {
                2u8.hash(h);
                if let Some(u) = n.as_u64() {
                    (0u8, u).hash(h);
                } else if let Some(i) = n.as_i64() {
                    (1u8, i).hash(h);
                } else {
                    let f = n.as_f64().unwrap_or_default();
                    (2u8, if f == 0.0 { 0 } else { f.to_bits() }).hash(h);
                }
            }
            Value::String(s) => (3u8, s).hash(h),
            Value::Array(items) => {
                (4u8, items.len()).hash(h);
                items.iter().for_each(|item| feed(item, h));
            }
            Value::Object(map) => {
                // Equal maps may list their keys in different orders: sum the entries' hashes.
                let sum = map.iter().fold(0u64, |sum, (k, v)| {
                    let mut entry = std::collections::hash_map::DefaultHasher::new();
                    k.hash(&mut entry);
                    feed(v, &mut entry);
                    sum.wrapping_add(entry.finish())
                });
                (5u8, map.len(), sum).hash(h);
            }
        }
    }
    let mut h = std::collections::hash_map::DefaultHasher::new();
    feed(value, &mut h);
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn equal_values_hash_alike() {
        let a: Value = serde_json::from_str(r#"{"a":1,"b":[0.0,"x",null,true]}"#).unwrap();
        let b: Value = serde_json::from_str(r#"{"b":[-0.0,"x",null,true],"a":1}"#).unwrap();
        assert_eq!(a, b);
        assert_eq!(value_hash(&a), value_hash(&b));
        assert_ne!(value_hash(&json!({"a":1})), value_hash(&json!({"a":2})));
        assert_ne!(value_hash(&json!([1, 2])), value_hash(&json!([2, 1])));
    }

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

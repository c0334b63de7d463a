//! Which value is the answer, once the frames are checked ([`Choosing`]): the answer proper read
//! whole, the one distinct value among the candidates (or the only fenced one), an enum value named
//! in prose; and, when none passed, the most telling rejection. With the fixes for where the answer
//! was found.
//!
//! It reads the texts and the values the steps before it handed over and calls back into none of
//! them: a value it does not keep whole is compared with a later one by its text, or by its compact
//! JSON when it was not read as written.

use super::envelope::Body;
use super::pipeline::Read;
use super::schema_check::{Accepted, Rejection};
use super::{work, Fix, FixKind, ParseError, Parsed};
use crate::schema::SchemaSet;
use serde_json::Value;
use std::borrow::Cow;
use std::collections::VecDeque;

/// The reads of one answer's frames, handed over as they come ([`Pipeline::read`]), and the answer
/// they make once all are in ([`Choosing::answer`]).
///
/// [`Pipeline::read`]: super::pipeline::Pipeline::read
#[derive(Default)]
pub(crate) struct Choosing<'t> {
    /// The answer proper, once the envelope found it, and whether it was read whole as a scalar.
    body: Option<(Body<'t>, bool)>,
    /// The answer proper read whole, when that passed.
    settled: Option<Read>,
    /// Why the answer proper read whole as a scalar did not pass.
    scalar: Option<Rejection>,
    distinct: Distinct,
    failed: Rejections,
}

impl<'t> Choosing<'t> {
    /// The answer proper, found; `scalar`: whether it is read whole as a scalar.
    pub(crate) fn body(&mut self, body: Body<'t>, scalar: bool) {
        self.body = Some((body, scalar));
    }

    /// The whole text, read by serde: the answer, or why there is none.
    pub(crate) fn whole(self, read: Read, text: &str) -> Result<Parsed<Value>, ParseError> {
        read.result
            .map(|Accepted { value, fixes }| Parsed { value, fixes })
            .map_err(|r| r.into_error(text))
    }

    /// The answer proper read whole (a scalar, a tuple): whether it passed, and so is the answer.
    pub(crate) fn slice(&mut self, read: Read) -> bool {
        match read.result {
            Ok(_) => {
                self.settled = Some(read);
                true
            }
            Err(rejection) => {
                if self.body.as_ref().is_some_and(|(_, scalar)| *scalar) {
                    self.scalar = Some(rejection);
                }
                false
            }
        }
    }

    /// A candidate value of `text`, read.
    pub(crate) fn candidate(&mut self, read: Read, text: &str) {
        match read.result {
            Ok(accepted) => self.distinct.add(text, read.span, read.fenced, accepted),
            Err(rejection) => self.failed.add(text, read.span, rejection),
        }
    }

    /// The answer: the answer proper read whole when it passed; else the one distinct candidate
    /// value (or the only fenced one); else a string-enum value named in the prose ("The
    /// sentiment is Positive."); else the most telling rejection. With the fixes for where it was
    /// found: what the envelope skipped, and taking it out of the text around it.
    pub(crate) fn answer(
        self,
        text: &str,
        schema: &SchemaSet,
        strict: bool,
    ) -> Result<Parsed<Value>, ParseError> {
        let (skipped, body) = match self.body {
            Some((body, _)) => (body.skipped, body.text),
            None => (None, text),
        };
        let (accepted, span) = match self.settled {
            Some(Read {
                span,
                result: Ok(accepted),
                ..
            }) => (accepted, Some(span)),
            _ => match self.distinct.choice(text) {
                Choice::One(span, accepted) => (accepted, Some(span)),
                Choice::Ambiguous(candidates) => {
                    return Err(ParseError::Ambiguous {
                        candidates,
                        raw: text.to_owned(),
                    })
                }
                Choice::None => {
                    let named = match strict {
                        true => None,
                        false => enum_in_prose(schema, body),
                    };
                    match named {
                        // At the start of the answer proper.
                        Some(Ok(variant)) => {
                            let fix = Fix::new(
                                FixKind::EnumCase,
                                text.len() - body.len(),
                                format!("found the enum value {variant:?} in the text"),
                            );
                            let accepted = Accepted {
                                value: Value::String(variant),
                                fixes: vec![fix],
                            };
                            (accepted, None)
                        }
                        Some(Err(candidates)) => {
                            return Err(ParseError::Ambiguous {
                                candidates,
                                raw: text.to_owned(),
                            })
                        }
                        None => {
                            let rejection = match self.failed.is_empty() {
                                true => self.scalar.unwrap_or(Rejection::NotJson),
                                false => self.failed.best(),
                            };
                            return Err(rejection.into_error(text));
                        }
                    }
                }
            },
        };
        let mut fixes = Fix::taken_out(text, skipped, span);
        fixes.extend(accepted.fixes);
        Ok(Parsed {
            value: accepted.value,
            fixes,
        })
    }
}

/// The most telling rejection among candidates that all failed, kept as they come (one, whatever
/// their number): a cut-off value over a schema error over a syntax error in what looks like JSON,
/// the larger among equals. A syntax error in something that does not even look like JSON is
/// prose, and tells nothing.
#[derive(Default)]
pub(crate) struct Rejections {
    /// The most telling so far (the first is always kept): its rank, its size, and it.
    best: Option<(u8, usize, Rejection)>,
}

impl Rejections {
    /// The rejection of the candidate at `span` of `text`.
    pub(crate) fn add(&mut self, text: &str, span: (usize, usize), rejection: Rejection) {
        let (start, end) = span;
        let size = end.saturating_sub(start);
        let beats = |best: &Option<(u8, usize, Rejection)>, rank: u8| {
            best.as_ref().is_none_or(|&(r, s, _)| (rank, size) > (r, s))
        };
        let rank = match rejection {
            Rejection::Truncated { .. } => 4,
            Rejection::Schema(_) => 3,
            // Whether it looks like JSON is read only when that could make it the most telling.
            Rejection::Syntax { .. }
                if beats(&self.best, 2)
                    && text
                        .get(start..end)
                        .is_some_and(|slice| slice.contains([':', '"', '\''])) =>
            {
                2
            }
            Rejection::Syntax { .. } | Rejection::NotJson => 0,
        };
        if beats(&self.best, rank) {
            self.best = Some((rank, size, rejection));
        }
    }

    /// Whether no candidate failed.
    pub(crate) fn is_empty(&self) -> bool {
        self.best.is_none()
    }

    /// The most telling rejection ([`Rejection::NotJson`] when none tells anything).
    pub(crate) fn best(self) -> Rejection {
        match self.best {
            Some((rank, _, rejection)) if rank > 0 => rejection,
            _ => Rejection::NotJson,
        }
    }
}

/// The distinct values among the accepted candidates, in order. Only the values that can become the
/// answer are kept as they are (the first, and the first fenced one); the others are known by hash,
/// and compared only when a later value has the same hash: a value read as written (no fix) by
/// reading its text again with serde_json, any other by its compact JSON, kept in one buffer. So a
/// thousand values in prose cost a few words each, not a parsed value each, and the memory stays
/// proportional to the text.
#[derive(Default)]
struct Distinct {
    found: Vec<Found>,
    /// For each hash, the last value found with it (the others are chained through
    /// [`Found::same`]).
    by_hash: std::collections::HashMap<u64, usize>,
    fenced: usize,
    /// The compact JSON of the values kept compact, one after the other.
    compact: Vec<u8>,
}

struct Found {
    span: (usize, usize),
    fenced: bool,
    value: Kept,
    /// The value found before it with the same hash.
    same: Option<usize>,
}

/// How a found value is kept.
enum Kept {
    /// Whole: it may become the answer.
    Whole(Accepted),
    /// As its text, at its span: read as written, serde_json reads the same value from it.
    Written,
    /// As compact JSON, at this span of [`Distinct::compact`].
    Compact(usize, usize),
}

impl Found {
    /// Whether the value found is `value` (`text`: the answer; `compact`: the buffer a compact
    /// one is in).
    fn is(&self, value: &Value, text: &str, compact: &[u8]) -> bool {
        let json = match self.value {
            Kept::Whole(ref kept) => return kept.value == *value,
            Kept::Written => text.as_bytes().get(self.span.0..self.span.1),
            // Compact JSON reads back to the value it was written from (numbers included).
            Kept::Compact(start, end) => compact.get(start..end),
        };
        json.and_then(|json| serde_json::from_slice::<Value>(json).ok())
            .is_some_and(|again| again == *value)
    }
}

/// What the distinct values make of the answer.
enum Choice {
    /// No candidate was accepted.
    None,
    /// The answer, and where it lies.
    One((usize, usize), Accepted),
    /// Several values and nothing to tell them apart: their texts.
    Ambiguous(Vec<String>),
}

impl Distinct {
    /// Adds an accepted candidate of `text` unless its value is one already found.
    fn add(&mut self, text: &str, span: (usize, usize), fenced: bool, accepted: Accepted) {
        let hash = value_hash(&accepted.value);
        let last = self.by_hash.get(&hash).copied();
        let mut earlier = last;
        while let Some(found) = earlier.and_then(|i| self.found.get(i)) {
            work::count(1);
            if found.is(&accepted.value, text, &self.compact) {
                return;
            }
            earlier = found.same;
        }
        self.by_hash.insert(hash, self.found.len());
        let whole = self.found.is_empty() || (fenced && self.fenced == 0);
        self.fenced += usize::from(fenced);
        let value = match (whole, accepted.fixes.is_empty()) {
            (true, _) => Kept::Whole(accepted),
            (false, true) => Kept::Written,
            (false, false) => {
                let start = self.compact.len();
                // Writing to memory cannot fail; a value that could not be written compares
                // unequal to every later one, so it is still told apart.
                let _ = serde_json::to_writer(&mut self.compact, &accepted.value);
                Kept::Compact(start, self.compact.len())
            }
        };
        self.found.push(Found {
            span,
            fenced,
            value,
            same: last,
        });
    }

    /// One value; or, among several, the only fenced one (a fence singles out the answer among
    /// drafts and examples in the prose); or the texts of all of them.
    fn choice(self, text: &str) -> Choice {
        let chosen = match self.found.len() {
            0 => return Choice::None,
            1 => self.found.into_iter().next(),
            _ if self.fenced == 1 => self.found.into_iter().find(|f| f.fenced),
            _ => {
                return Choice::Ambiguous(
                    self.found
                        .iter()
                        .map(|f| text.get(f.span.0..f.span.1).unwrap_or_default().to_owned())
                        .collect(),
                )
            }
        };
        match chosen {
            Some(Found {
                span,
                value: Kept::Whole(accepted),
                ..
            }) => Choice::One(span, accepted),
            // Kept by construction: the first value, and the first fenced one.
            _ => Choice::None,
        }
    }
}

/// For a string-enum answer written as prose ("The sentiment is Positive."): the one variant named
/// in it; `Err` with the variants if several are named.
fn enum_in_prose(schema: &SchemaSet, text: &str) -> Option<Result<String, Vec<String>>> {
    // The root's names, or those of the one string enum among a root union's branches (the unit
    // variants of an externally tagged enum).
    let generic = schema.generic();
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

    /// The candidates an answer is ambiguous among, or the answer.
    fn answer_of(text: &str) -> Result<Value, Vec<String>> {
        let schema = SchemaSet::new(
            "A",
            json!({"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}),
        );
        match crate::parse::from_str_value(text, &schema, &Default::default()) {
            Ok(parsed) => Ok(parsed.value),
            Err(ParseError::Ambiguous { candidates, .. }) => Err(candidates),
            Err(other) => panic!("{text}: {other}"),
        }
    }

    #[test]
    fn a_value_found_again_counts_once_however_it_is_kept() {
        // The second value is kept as its text (read as written), then found again as written
        // and in single quotes (read with a fix).
        let written = answer_of(r#"A: {"a": 1} B: {"a": 2} C: {"a":2} D: {'a': 2}"#);
        assert_eq!(
            written,
            Err(vec![r#"{"a": 1}"#.into(), r#"{"a": 2}"#.into()])
        );
        // The second value is kept as compact JSON (it was read with a fix), then found again.
        let compact = answer_of(r#"A: {"a": 1} B: {'a': 2} C: {"a": 2} D: {'a':2}"#);
        assert_eq!(compact, Err(vec![r#"{"a": 1}"#.into(), "{'a': 2}".into()]));
        // The same value over and over is the answer.
        let same = answer_of(r#"A: {"a": 3} B: {'a': 3} C: {"a":3}"#);
        assert_eq!(same, Ok(json!({"a": 3})));
    }

    #[test]
    fn the_most_telling_rejection_is_kept_as_they_come() {
        let text = r#"prose {x} then {"a" 1} and {"a": "b"} and {"a": 1, "b": ["#;
        let syntax = |offset| Rejection::Syntax {
            message: "expected `:`".into(),
            offset,
        };
        let schema = || Rejection::Schema(Vec::new());
        let mut rejections = Rejections::default();
        assert!(rejections.is_empty());
        // Prose tells nothing; a syntax error in what looks like JSON does.
        rejections.add(text, (6, 9), syntax(6));
        assert!(!rejections.is_empty());
        rejections.add(text, (15, 22), syntax(19));
        assert!(matches!(
            rejections.best(),
            Rejection::Syntax { offset: 19, .. }
        ));

        // A schema error over a syntax error, a cut-off value over both, the larger among equals.
        let mut rejections = Rejections::default();
        rejections.add(text, (15, 22), syntax(19));
        rejections.add(text, (27, 37), schema());
        assert!(matches!(rejections.best(), Rejection::Schema(_)));
        let mut rejections = Rejections::default();
        rejections.add(text, (42, text.len()), Rejection::Truncated { offset: 60 });
        rejections.add(text, (27, 37), schema());
        rejections.add(text, (0, text.len()), Rejection::Truncated { offset: 61 });
        assert!(matches!(
            rejections.best(),
            Rejection::Truncated { offset: 61 }
        ));

        let mut prose = Rejections::default();
        prose.add(text, (6, 9), syntax(6));
        assert!(matches!(prose.best(), Rejection::NotJson));
    }
}

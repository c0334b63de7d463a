//! Per-field confidence from token log-probabilities: the tokens of an answer laid over its text, each
//! leaf value (string, number, `true`, `false`, `null`) found in the text by a scan of the JSON lexer's
//! tokens (`parse::lex`, whose spans are the leaves' bytes), and the log-probabilities of the tokens
//! that wrote a leaf folded into one figure in `[0, 1]`.
//!
//! The scan reads the text as written, not as the lenient parser repaired it: a leaf is scored when the
//! scan finds it whole (its string closed, its number or literal ended). For a list of items, an item is
//! scored when its text parses as JSON equal to an item kept (`match_items`), so a repaired or dropped
//! item is never given another's figures. Linear time: one pass over the text, leaves deeper than
//! [`MAX_DEPTH`] are not scored (the pointer copied per leaf is bounded), and each leaf looks its tokens
//! up by binary search.

use crate::check::{Issue, Severity};
use crate::llm::TokenLogprob;
use crate::parse::lex::{Bracket, Lexer, Next, Syntax, Token, TokenKind};
use crate::parse::work;
use crate::report::Report;
use crate::schema::node::escape_token;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::ops::Range;

/// How deep a leaf may lie and still be scored (serde_json's own recursion limit).
pub(crate) const MAX_DEPTH: usize = 128;

/// Which log-probability of a token is used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Basis {
    /// Among the tokens the model was allowed to choose ([`TokenLogprob::logprob`]): on the embedded
    /// engine, after the grammar's mask. The default.
    #[default]
    Allowed,
    /// Over the model's whole vocabulary, before the grammar's mask
    /// ([`TokenLogprob::vocabulary_logprob`]; the embedded engine only, [`Basis::Allowed`] elsewhere).
    Vocabulary,
}

/// How the log-probabilities of a leaf's tokens become one figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Aggregate {
    /// `exp` of their mean: the geometric mean of the tokens' probabilities, whatever the value's
    /// length. The default.
    #[default]
    Mean,
    /// `exp` of their sum: the probability of the whole value, lower for longer values.
    Sum,
}

/// How confidence is computed: which log-probabilities, folded how. The default (`Allowed` + `Mean`)
/// ranked right fields above wrong ones best on the project's evaluation set: on the embedded default
/// model (the invoices), ROC AUC 0.783 against 0.738 for `Allowed` + `Sum`, and 0.783 and 0.774 for the
/// `Vocabulary` basis (a tie with `Allowed`, which every backend gives); through llama-server (the
/// whole set), 0.792 against 0.785 for `Sum`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct ConfidenceRule {
    /// Which log-probability of a token.
    pub basis: Basis,
    /// How a leaf's tokens are folded.
    pub aggregate: Aggregate,
}

impl ConfidenceRule {
    /// A rule of `basis` and `aggregate`.
    pub fn new(basis: Basis, aggregate: Aggregate) -> Self {
        ConfidenceRule { basis, aggregate }
    }

    fn logprob(&self, token: &TokenLogprob) -> f32 {
        match self.basis {
            Basis::Allowed => token.logprob,
            Basis::Vocabulary => token.vocabulary_logprob.unwrap_or(token.logprob),
        }
    }
}

/// One top-level value of an answer: where it lies, and its leaves (a JSON pointer relative to the
/// value, and the bytes that wrote it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Scanned {
    /// The value's bytes in the text (to the end of the text when it never closed).
    pub span: Range<usize>,
    /// Whether its brackets closed.
    pub closed: bool,
    /// Each leaf found whole, in order.
    pub leaves: Vec<(String, Range<usize>)>,
}

/// One open container of the scan.
struct Frame {
    /// The pointer's length when the container opened.
    base: usize,
    /// `Some(index)` in an array; `None` in an object.
    index: Option<usize>,
    /// In an object, whether the next string is a key.
    expect_key: bool,
}

/// Every top-level object or array of `text` (prose between them is skipped), with its leaves.
pub(crate) fn scan(text: &str) -> Vec<Scanned> {
    let bytes = text.as_bytes();
    let mut values = Vec::new();
    let mut at = 0;
    // Between values only an opening bracket starts one (a quote in prose opens no string).
    while let Some(found) = memchr::memchr2(b'{', b'[', bytes.get(at..).unwrap_or_default()) {
        // Each byte skipped, and below each token and each byte copied into a leaf's pointer: the
        // tests hold their sum to a multiple of the text's length.
        work::count(found + 1);
        let value = scan_value(text, at + found);
        at = value.span.end;
        values.push(value);
    }
    values
}

/// The value whose opening bracket is at `start`, read with the lexer to its closing bracket or the
/// end of the text.
fn scan_value(text: &str, start: usize) -> Scanned {
    let bytes = text.as_bytes();
    let mut lexer = Lexer::new(SYNTAX).at(start);
    let mut stack: Vec<Frame> = Vec::new();
    let mut pointer = String::new();
    let mut value = Scanned {
        span: start..bytes.len(),
        closed: false,
        leaves: Vec::new(),
    };
    loop {
        let token = match lexer.next(bytes, 0) {
            Next::Token(token) => token,
            Next::Newline(_) => continue,
            Next::More => match lexer.finish() {
                Some(token) => token,
                None => break,
            },
        };
        work::count(1);
        match token.kind {
            TokenKind::Open(bracket) => open(&mut stack, &mut pointer, bracket),
            TokenKind::Close(_) => {
                if let Some(frame) = stack.pop() {
                    pointer.truncate(frame.base);
                }
                if stack.is_empty() {
                    value.span.end = token.end;
                    value.closed = true;
                    break;
                }
            }
            TokenKind::Comma => next_member(&mut stack, &mut pointer),
            TokenKind::String { .. } => {
                let quoted = text.get(token.start..token.end).unwrap_or_default();
                let leaf = string(&mut stack, &mut pointer, quoted, token);
                if let Some(range) = leaf {
                    work::count(pointer.len());
                    value.leaves.push((pointer.clone(), range));
                }
            }
            TokenKind::Number { .. } | TokenKind::Word { .. } => {
                let in_value = stack
                    .last()
                    .is_some_and(|f| f.index.is_some() || !f.expect_key);
                // A word cut by the end of the text may not be whole.
                if in_value && !token.cut && stack.len() <= MAX_DEPTH {
                    work::count(pointer.len());
                    value.leaves.push((pointer.clone(), token.start..token.end));
                }
            }
            TokenKind::Space | TokenKind::Colon | TokenKind::Comment => {}
        }
        if token.cut {
            break;
        }
    }
    value
}

/// What the scan reads: JSON's double-quoted strings.
const SYNTAX: Syntax = Syntax {
    report: false,
    ..Syntax::STRICT
};

/// An array or object opens: its frame, and in an array the first index on the pointer.
fn open(stack: &mut Vec<Frame>, pointer: &mut String, bracket: Bracket) {
    let base = pointer.len();
    let index = (bracket == Bracket::Square).then_some(0);
    if index.is_some() {
        pointer.push_str("/0");
    }
    stack.push(Frame {
        base,
        index,
        expect_key: index.is_none(),
    });
}

/// A comma: the next index of an array, the next key of an object.
fn next_member(stack: &mut [Frame], pointer: &mut String) {
    let Some(frame) = stack.last_mut() else {
        return;
    };
    match &mut frame.index {
        Some(index) => {
            *index += 1;
            pointer.truncate(frame.base);
            pointer.push('/');
            pointer.push_str(&index.to_string());
            work::count(pointer.len() - frame.base);
        }
        None => frame.expect_key = true,
    }
}

/// A string token (`quoted`, quotes included): a key goes on the pointer; a value whose quote closed
/// is a leaf, whose range is returned.
fn string(
    stack: &mut [Frame],
    pointer: &mut String,
    quoted: &str,
    token: Token,
) -> Option<Range<usize>> {
    let shallow = stack.len() <= MAX_DEPTH;
    match stack.last_mut() {
        Some(frame) if frame.expect_key && frame.index.is_none() => {
            frame.expect_key = false;
            pointer.truncate(frame.base);
            pointer.push('/');
            let key: String = serde_json::from_str(quoted)
                .unwrap_or_else(|_| quoted.trim_matches('"').to_owned());
            pointer.push_str(&key.replace('~', "~0").replace('/', "~1"));
            work::count(pointer.len() - frame.base);
            None
        }
        // The characters between the quotes; the quotes themselves for "".
        _ if !token.cut && shallow && token.end - token.start > 2 => {
            Some(token.start + 1..token.end - 1)
        }
        _ if !token.cut && shallow => Some(token.start..token.end),
        _ => None,
    }
}

/// The tokens laid over the text: each token's byte range, as far as their bytes agree with `text`
/// (a backend that cut a stop string, or whose tokens do not spell its text, is followed up to there).
fn token_ranges(text: &[u8], tokens: &[TokenLogprob]) -> Vec<Range<usize>> {
    let mut ranges = Vec::with_capacity(tokens.len());
    let mut at = 0;
    for token in tokens {
        let end = at + token.bytes.len();
        match text.get(at..end) {
            Some(written) if written == token.bytes.as_slice() => {
                ranges.push(at..end);
                at = end;
            }
            _ => break,
        }
    }
    ranges
}

/// The confidence of the text `range`, from the tokens that overlap it; `None` when none do.
fn score(
    range: &Range<usize>,
    ranges: &[Range<usize>],
    tokens: &[TokenLogprob],
    rule: ConfidenceRule,
) -> Option<f32> {
    let first = ranges.partition_point(|r| r.end <= range.start);
    let (mut sum, mut count) = (0.0_f64, 0_u32);
    for (r, token) in ranges.iter().zip(tokens).skip(first) {
        if r.start >= range.end.max(range.start + 1) {
            break;
        }
        sum += f64::from(rule.logprob(token));
        count += 1;
    }
    if count == 0 {
        return None;
    }
    let log = match rule.aggregate {
        Aggregate::Mean => sum / f64::from(count),
        Aggregate::Sum => sum,
    };
    Some(log.exp().clamp(0.0, 1.0) as f32)
}

/// The scored leaves of one answer: every top-level value of `text` with its leaves' confidences.
pub(crate) fn scored(text: &str, tokens: &[TokenLogprob], rule: ConfidenceRule) -> Vec<Item> {
    let ranges = token_ranges(text.as_bytes(), tokens);
    scan(text)
        .into_iter()
        .map(|value| {
            let json = text
                .get(value.span.clone())
                .and_then(|t| serde_json::from_str::<Value>(t).ok());
            let leaves = value
                .leaves
                .into_iter()
                .filter_map(|(pointer, range)| {
                    Some((pointer, score(&range, &ranges, tokens, rule)?))
                })
                .collect();
            Item { json, leaves }
        })
        .collect()
}

/// One scored top-level value: its JSON when its text parses as written, and its leaves' confidences.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Item {
    json: Option<Value>,
    leaves: Vec<(String, f32)>,
}

/// The confidence of one value's leaves: the first scored value of the answer (the one parsed).
pub(crate) fn of_value(items: Vec<Item>) -> BTreeMap<String, f32> {
    items
        .into_iter()
        .find(|item| !item.leaves.is_empty())
        .map(|item| item.leaves.into_iter().collect())
        .unwrap_or_default()
}

/// The values of a list answer as items: an answer that is one object holding one array (the list
/// schema, `{"items": [...]}`) gives that array's elements; one value per line gives each line's.
pub(crate) fn as_items(values: Vec<Item>) -> Vec<Item> {
    let mut items = Vec::new();
    for value in values {
        let wrapped = match &value.json {
            Some(Value::Object(map)) if map.len() == 1 => map
                .iter()
                .next()
                .and_then(|(key, inner)| Some((key.clone(), inner.as_array()?.clone()))),
            _ => None,
        };
        let Some((key, elements)) = wrapped else {
            items.push(value);
            continue;
        };
        let prefix = format!("/{}/", key.replace('~', "~0").replace('/', "~1"));
        let mut split: Vec<Item> = elements
            .into_iter()
            .map(|json| Item {
                json: Some(json),
                leaves: Vec::new(),
            })
            .collect();
        for (pointer, confidence) in value.leaves {
            let Some(rest) = pointer.strip_prefix(&prefix) else {
                continue;
            };
            let (index, inner) = rest.split_once('/').unwrap_or((rest, ""));
            let position = index.parse::<usize>().ok();
            if let Some(item) = position.and_then(|i| split.get_mut(i)) {
                let inner = if inner.is_empty() {
                    String::new()
                } else {
                    format!("/{inner}")
                };
                item.leaves.push((inner, confidence));
            }
        }
        items.extend(split);
    }
    items
}

/// The confidence of the items `kept`, by pointer (`/0/name`): each kept item takes the leaves of the
/// first unused scored item equal to it, in order; a kept item with no equal scored item (repaired by
/// the parser) has none.
pub(crate) fn match_items(kept: &[Value], scored: Vec<Item>) -> BTreeMap<String, f32> {
    let mut confidence = BTreeMap::new();
    let mut pool: Vec<Option<Item>> = scored.into_iter().map(Some).collect();
    let mut from = 0;
    for (position, json) in kept.iter().enumerate() {
        let found = (from..pool.len()).find(|&i| {
            pool[i]
                .as_ref()
                .is_some_and(|item| item.json.as_ref() == Some(json))
        });
        let Some(item) = found.and_then(|i| {
            from = i + 1;
            pool[i].take()
        }) else {
            continue;
        };
        for (pointer, value) in item.leaves {
            confidence.insert(format!("/{position}{pointer}"), value);
        }
    }
    confidence
}

/// One copy of an item taken into a merge on keys: the position of the merged item it went into, its
/// JSON, and the confidence of its leaves (pointers into the item, `/name`).
pub(crate) struct Copied {
    /// The merged item's position, in the order the merge made them.
    pub at: usize,
    /// The copy as it was taken.
    pub json: Value,
    /// Its leaves' confidences.
    pub leaves: Vec<(String, f32)>,
}

/// Each item's leaves in `confidence` (`/3/name`), by the item's position (3), with pointers into
/// the item (`/name`; the empty pointer for an item that is a leaf itself).
pub(crate) fn by_item(confidence: &BTreeMap<String, f32>) -> BTreeMap<usize, Vec<(String, f32)>> {
    let mut items: BTreeMap<usize, Vec<(String, f32)>> = BTreeMap::new();
    for (pointer, &value) in confidence {
        let Some(rest) = pointer.strip_prefix('/') else {
            continue;
        };
        let (index, inner) = match rest.find('/') {
            Some(at) => rest.split_at(at),
            None => (rest, ""),
        };
        if let Ok(index) = index.parse::<usize>() {
            items
                .entry(index)
                .or_default()
                .push((inner.to_owned(), value));
        }
    }
    items
}

/// The confidence of the items a merge on keys made (`merged`, in the merge's order), by pointer
/// (`/0/name`), from the `copies` taken into it (in the order they were taken). A merge keeps each
/// property of an item from one copy (the first that had a value there): every leaf under that
/// property takes its confidence from that copy, the first whose property equals the one kept. An
/// item that is not an object takes the leaves of the first copy equal to it. Time: each copy's
/// leaves are read once; finding where a property came from compares it with the copies before it.
pub(crate) fn merged(copies: Vec<Copied>, merged: &[&Value]) -> BTreeMap<String, f32> {
    let mut groups: Vec<Vec<Copied>> = merged.iter().map(|_| Vec::new()).collect();
    for copy in copies {
        if let Some(group) = groups.get_mut(copy.at) {
            group.push(copy);
        }
    }
    let mut confidence = BTreeMap::new();
    for (at, (group, &kept)) in groups.into_iter().zip(merged).enumerate() {
        let Value::Object(fields) = kept else {
            if let Some(copy) = group.into_iter().find(|copy| copy.json == *kept) {
                for (pointer, value) in copy.leaves {
                    confidence.insert(format!("/{at}{pointer}"), value);
                }
            }
            continue;
        };
        // For each property kept (its pointer token), the copy it came from.
        let sources: HashMap<String, usize> = fields
            .iter()
            .filter_map(|(name, value)| {
                let from = group
                    .iter()
                    .position(|copy| copy.json.get(name) == Some(value))?;
                Some((escape_token(name), from))
            })
            .collect();
        for (position, copy) in group.into_iter().enumerate() {
            for (pointer, value) in copy.leaves {
                let token = pointer
                    .strip_prefix('/')
                    .map(|rest| rest.split_once('/').map_or(rest, |(token, _)| token));
                let from = token.and_then(|token| sources.get(token));
                if from == Some(&position) {
                    confidence.insert(format!("/{at}{pointer}"), value);
                }
            }
        }
    }
    confidence
}

/// Puts `confidence` into `report` (`None`: the backend gave no log-probabilities), with a soft issue
/// for each value under `threshold`; `items` for the pointers of a list (`/0/name`).
pub(crate) fn record(
    report: &mut Report,
    confidence: Option<BTreeMap<String, f32>>,
    threshold: Option<f32>,
    items: bool,
) {
    let Some(confidence) = confidence else {
        report.no_logprobs = true;
        return;
    };
    if let Some(threshold) = threshold {
        report.issues.extend(doubts(&confidence, threshold, items));
    }
    report.confidence = confidence;
}

/// Moves each item's confidence (`/3/name`) to the item's new position, `to[3]`; an item with no new
/// position loses it.
pub(crate) fn renumber(confidence: &mut BTreeMap<String, f32>, to: &[Option<usize>]) {
    if confidence.is_empty() {
        return;
    }
    *confidence = std::mem::take(confidence)
        .into_iter()
        .filter_map(|(pointer, value)| {
            let rest = pointer.strip_prefix('/')?;
            let (index, inner) = rest.split_once('/').map_or((rest, ""), |(i, r)| (i, r));
            let moved = to.get(index.parse::<usize>().ok()?).copied().flatten()?;
            let pointer = if inner.is_empty() {
                format!("/{moved}")
            } else {
                format!("/{moved}/{inner}")
            };
            Some((pointer, value))
        })
        .collect();
}

/// A soft issue for each value under `threshold`, at its pointer (for items, `item` set and the pointer
/// into the item).
pub(crate) fn doubts(
    confidence: &BTreeMap<String, f32>,
    threshold: f32,
    items: bool,
) -> Vec<Issue> {
    confidence
        .iter()
        .filter(|(_, &c)| c < threshold)
        .map(|(pointer, c)| {
            let message = format!("low confidence ({c:.2} < {threshold:.2})");
            if !items {
                return Issue::new(pointer.clone(), message, Severity::Soft);
            }
            let rest = pointer.strip_prefix('/').unwrap_or(pointer);
            let (index, inner) = rest.split_once('/').unwrap_or((rest, ""));
            let mut issue = Issue::new(
                if inner.is_empty() {
                    String::new()
                } else {
                    format!("/{inner}")
                },
                message,
                Severity::Soft,
            );
            issue.item = index.parse().ok();
            issue
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn leaves(text: &str) -> Vec<(String, &str)> {
        scan(text)
            .into_iter()
            .flat_map(|v| v.leaves)
            .map(|(p, r)| (p, &text[r]))
            .collect()
    }

    /// Tokens of `text` cut at every `|`, with the given log-probabilities.
    fn tokens(cut: &str, logprobs: &[f32]) -> (String, Vec<TokenLogprob>) {
        let pieces: Vec<&str> = cut.split('|').collect();
        assert_eq!(pieces.len(), logprobs.len());
        let tokens = pieces
            .iter()
            .zip(logprobs)
            .map(|(p, &l)| TokenLogprob::new(p.as_bytes(), l))
            .collect();
        (pieces.concat(), tokens)
    }

    #[test]
    fn the_scan_finds_each_leaf_at_its_pointer() {
        let text = r#"Here: {"name": "Ada", "tags": ["a", "b/c"], "n": -1.5e3, "ok": true, "x": null, "a/b~": {"e": ""}} bye"#;
        assert_eq!(
            leaves(text),
            vec![
                ("/name".into(), "Ada"),
                ("/tags/0".into(), "a"),
                ("/tags/1".into(), "b/c"),
                ("/n".into(), "-1.5e3"),
                ("/ok".into(), "true"),
                ("/x".into(), "null"),
                ("/a~1b~0/e".into(), "\"\""),
            ]
        );
    }

    #[test]
    fn escaped_quotes_stay_inside_their_string_and_keys_are_unescaped() {
        let text = r#"{"k\"ey": "say \"hi\"", "b": [1, [2, 3]]}"#;
        assert_eq!(
            leaves(text),
            vec![
                ("/k\"ey".into(), r#"say \"hi\""#),
                ("/b/0".into(), "1"),
                ("/b/1/0".into(), "2"),
                ("/b/1/1".into(), "3"),
            ]
        );
    }

    #[test]
    fn lines_are_values_of_their_own_and_a_cut_value_keeps_only_whole_leaves() {
        let values = scan("{\"a\": 1}\n{\"a\": 2}\n{\"a\": \"cu");
        assert_eq!(values.len(), 3);
        assert!(values[0].closed && values[1].closed && !values[2].closed);
        assert_eq!(values[2].leaves, Vec::new());
        // A number at the very end might go on.
        assert_eq!(scan("[1, 2").pop().unwrap().leaves.len(), 1);
    }

    #[test]
    fn a_leaf_takes_the_tokens_that_wrote_it() {
        let (text, toks) = tokens(
            r#"{"|name|": "|Ad|a|", "|n|": |4|2|}"#,
            &[0.0, 0.0, 0.0, -1.0, -3.0, 0.0, 0.0, 0.0, -0.5, -0.7, 0.0],
        );
        let items = scored(&text, &toks, ConfidenceRule::default());
        let confidence = of_value(items);
        let close = |a: f32, b: f64| (f64::from(a) - b).abs() < 1e-5;
        assert!(
            close(confidence["/name"], (-2.0_f64).exp()),
            "{confidence:?}"
        );
        assert!(close(confidence["/n"], (-0.6_f64).exp()));
        let sum = of_value(scored(
            &text,
            &toks,
            ConfidenceRule::new(Basis::Allowed, Aggregate::Sum),
        ));
        assert!(close(sum["/name"], (-4.0_f64).exp()));
        assert!(close(sum["/n"], (-1.2_f64).exp()));
    }

    #[test]
    fn the_vocabulary_basis_reads_the_unmasked_figure_where_there_is_one() {
        let toks = vec![
            TokenLogprob::new("[\"", 0.0),
            TokenLogprob::new("x", -0.1).with_vocabulary_logprob(-2.0),
            TokenLogprob::new("\"]", 0.0),
        ];
        let rule = ConfidenceRule::new(Basis::Vocabulary, Aggregate::Mean);
        let confidence = of_value(scored("[\"x\"]", &toks, rule));
        assert!((confidence["/0"] - (-2.0_f32).exp()).abs() < 1e-6);
    }

    #[test]
    fn a_token_splitting_a_character_still_lines_up() {
        let text = "{\"a\": \"é\"}";
        let bytes = text.as_bytes();
        // é is two bytes: one token each.
        let toks = vec![
            TokenLogprob::new(&bytes[..7], 0.0),
            TokenLogprob::new(&bytes[7..8], -1.0),
            TokenLogprob::new(&bytes[8..9], -3.0),
            TokenLogprob::new(&bytes[9..], 0.0),
        ];
        let confidence = of_value(scored(text, &toks, ConfidenceRule::default()));
        assert!((confidence["/a"] - (-2.0_f32).exp()).abs() < 1e-6);
    }

    #[test]
    fn tokens_that_stop_agreeing_with_the_text_score_only_what_they_cover() {
        let toks = vec![
            TokenLogprob::new("{\"a\": 1, ", -0.5),
            TokenLogprob::new("\"zzz", -0.5),
        ];
        let confidence = of_value(scored(
            "{\"a\": 1, \"b\": 2}",
            &toks,
            ConfidenceRule::default(),
        ));
        assert_eq!(confidence.keys().collect::<Vec<_>>(), vec!["/a"]);
    }

    #[test]
    fn list_items_are_matched_to_the_items_kept() {
        let text = "{\"items\": [{\"n\": \"a\"}, {\"n\": \"b\"}, {\"n\": \"c\"}]}";
        let toks = vec![TokenLogprob::new(text.as_bytes(), -0.25)];
        let items = as_items(scored(text, &toks, ConfidenceRule::default()));
        assert_eq!(items.len(), 3);
        // "b" was dropped; "z" came from elsewhere.
        let kept = vec![
            serde_json::json!({"n": "a"}),
            serde_json::json!({"n": "c"}),
            serde_json::json!({"n": "z"}),
        ];
        let confidence = match_items(&kept, items);
        assert_eq!(
            confidence.keys().collect::<Vec<_>>(),
            vec!["/0/n", "/1/n"],
            "{confidence:?}"
        );
        let lines = "{\"n\": \"a\"}\n{\"n\": \"c\"}";
        let toks = vec![TokenLogprob::new(lines.as_bytes(), -0.25)];
        let confidence = match_items(
            &kept,
            as_items(scored(lines, &toks, ConfidenceRule::default())),
        );
        assert_eq!(confidence.keys().collect::<Vec<_>>(), vec!["/0/n", "/1/n"]);
    }

    #[test]
    fn values_under_the_threshold_become_soft_issues_at_their_paths() {
        let confidence: BTreeMap<String, f32> =
            [("/a".to_owned(), 0.2), ("/b".to_owned(), 0.9)].into();
        let issues = doubts(&confidence, 0.5, false);
        assert_eq!(issues.len(), 1);
        assert_eq!(issues[0].path, "/a");
        assert_eq!(issues[0].severity, Severity::Soft);
        assert_eq!(issues[0].item, None);
        let items: BTreeMap<String, f32> =
            [("/3/name".to_owned(), 0.1), ("/4".to_owned(), 0.1)].into();
        let issues = doubts(&items, 0.5, true);
        assert_eq!(
            (issues[0].item, issues[0].path.as_str()),
            (Some(3), "/name")
        );
        assert_eq!((issues[1].item, issues[1].path.as_str()), (Some(4), ""));
    }

    #[test]
    fn items_are_split_by_position_with_pointers_into_the_item() {
        let confidence: BTreeMap<String, f32> = [
            ("/0/name", 0.5),
            ("/0/tags/1", 0.25),
            ("/12", 0.75),
            ("name", 0.1),
            ("/x/y", 0.1),
        ]
        .into_iter()
        .map(|(p, c)| (p.to_owned(), c))
        .collect();
        let items = by_item(&confidence);
        assert_eq!(items.len(), 2);
        assert_eq!(
            items[&0],
            vec![("/name".to_owned(), 0.5), ("/tags/1".to_owned(), 0.25)]
        );
        assert_eq!(items[&12], vec![(String::new(), 0.75)]);
    }

    fn copy(at: usize, json: Value, leaves: &[(&str, f32)]) -> Copied {
        Copied {
            at,
            json,
            leaves: leaves.iter().map(|(p, c)| ((*p).to_owned(), *c)).collect(),
        }
    }

    #[test]
    fn a_merged_property_takes_the_confidence_of_the_copy_it_was_kept_from() {
        use serde_json::json;
        let kept = [
            json!({"a/b": "x", "tags": ["p", "q"], "n": null}),
            json!("same"),
        ];
        let copies = vec![
            copy(
                0,
                json!({"a/b": "x", "tags": [], "n": null}),
                &[("/a~1b", 0.9), ("/n", 0.8)],
            ),
            copy(1, json!("same"), &[("", 0.3)]),
            copy(
                0,
                json!({"a/b": "y", "tags": ["p", "q"]}),
                &[("/a~1b", 0.1), ("/tags/0", 0.6), ("/tags/1", 0.5)],
            ),
            copy(1, json!("same"), &[("", 0.2)]),
            // Out of range: ignored.
            copy(7, json!(1), &[("", 0.2)]),
        ];
        let confidence = merged(copies, &kept.iter().collect::<Vec<_>>());
        let expected: BTreeMap<String, f32> = [
            ("/0/a~1b", 0.9),
            ("/0/n", 0.8),
            ("/0/tags/0", 0.6),
            ("/0/tags/1", 0.5),
            ("/1", 0.3),
        ]
        .into_iter()
        .map(|(p, c)| (p.to_owned(), c))
        .collect();
        assert_eq!(confidence, expected);
    }

    proptest! {
        #[test]
        fn leaves_lie_inside_the_text_on_char_boundaries(text in "[\\[\\]{}\":,\\\\a-z0-9 é.-]{0,200}") {
            for value in scan(&text) {
                prop_assert!(value.span.start <= value.span.end && value.span.end <= text.len());
                for (pointer, range) in &value.leaves {
                    prop_assert!(range.start < range.end || range.is_empty());
                    prop_assert!(value.span.start <= range.start && range.end <= value.span.end);
                    prop_assert!(text.get(range.clone()).is_some());
                    prop_assert!(pointer.is_empty() || pointer.starts_with('/'));
                }
            }
        }

        #[test]
        fn any_json_value_has_every_scalar_scored(value in json_value()) {
            let text = value.to_string();
            let scanned = scan(&text);
            prop_assert_eq!(scanned.len(), usize::from(value.is_object() || value.is_array()));
            let found: Vec<String> = scanned.into_iter().flat_map(|v| v.leaves).map(|(p, _)| p).collect();
            let mut expected = Vec::new();
            scalars(&value, String::new(), &mut expected);
            if value.is_object() || value.is_array() {
                prop_assert_eq!(found, expected);
            }
        }
    }

    fn scalars(value: &Value, at: String, out: &mut Vec<String>) {
        match value {
            Value::Object(map) => {
                for (k, v) in map {
                    scalars(
                        v,
                        format!("{at}/{}", k.replace('~', "~0").replace('/', "~1")),
                        out,
                    )
                }
            }
            Value::Array(items) => {
                for (i, v) in items.iter().enumerate() {
                    scalars(v, format!("{at}/{i}"), out)
                }
            }
            _ => out.push(at),
        }
    }

    /// Values whose strings and keys need escaping, in JSON and in JSON pointers.
    fn json_value() -> impl Strategy<Value = Value> {
        let numbers = any::<i32>().prop_map(Value::from);
        super::super::json_values(numbers, "[a-z\"\\\\/~é ]{0,6}", "[a-z/~\"]{0,4}", (4, 32))
    }

    #[test]
    fn the_scan_is_linear_on_deep_and_long_input() {
        // The scan's work (steps, bytes read, bytes copied into pointers) counted at each doubling of
        // the input: copying a pointer as deep as the input for each leaf, or reading a string again,
        // would multiply it by about 4 per doubling.
        // Each shape, and how many leaves it has at size `n`.
        type Shape = (fn(usize) -> String, fn(usize) -> usize);
        let makers: [Shape; 5] = [
            // Leaves deeper than the limit are not scored.
            (|n| "[".repeat(n) + &"1,".repeat(n), |_| 0),
            (
                |n| "[".repeat(n) + &"\"ab\",".repeat(n) + &"]".repeat(n),
                |_| 0,
            ),
            (|n| format!("[{}1]", "\"ab\",".repeat(n)), |n| n + 1),
            (
                |n| format!("{{{}\"z\": 1}}", "\"key\": [[true]], ".repeat(n)),
                |n| n + 1,
            ),
            // One leaf at the deepest scored level, then as many more at the same depth.
            (
                |n| "[".repeat(MAX_DEPTH) + &"\"a\",".repeat(n) + &"]".repeat(MAX_DEPTH),
                |n| n,
            ),
        ];
        for (make, leaves) in makers {
            let mut last: Option<usize> = None;
            for n in [5_000, 10_000, 20_000, 40_000] {
                let text = make(n);
                let mut values = Vec::new();
                let steps = work::of(|| values = scan(&text));
                let found: usize = values.iter().map(|v| v.leaves.len()).sum();
                assert_eq!(found, leaves(n), "{}...", &text[..40]);
                assert!(
                    steps <= 8 * text.len() + (2 * MAX_DEPTH + 8) * found,
                    "{steps} steps for {} bytes: {}...",
                    text.len(),
                    &text[..40]
                );
                if let Some(last) = last {
                    assert!(
                        steps * 10 < last * 25,
                        "{last} then {steps} steps at {n}: {}...",
                        &text[..40]
                    );
                }
                last = Some(steps);
            }
        }
    }
}

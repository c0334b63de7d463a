//! The envelope around the JSON: a byte-order mark, a thinking block, fences, prose, and the
//! candidate values inside it. The first step of one value's parse: it hands out the places a value
//! may be ([`Envelope::frames`]), in the order they are read, each found only when asked for (a
//! value alone, the whole text, the answer proper, each candidate value; and whether an object's
//! members seem to go on after its brace), and reads none of them.
//!
//! Candidates are found with the same string-aware [`ValueScanner`] the decoder frames with, so a `}`
//! inside a string or a `[` in the prose does not derail the search. A start that never closes (a
//! stray bracket in the prose, or a value cut off at the end) does not hide what follows: the search
//! goes on from the next bracket, within a total budget that keeps it linear on hostile input.

use super::frame::{Scan, ValueScanner};
use super::lex::{self, Syntax};
use super::{work, Fix, FixKind};
use memchr::{memchr2, memmem, memrchr3};
use std::cell::OnceCell;
use std::sync::OnceLock;

/// Where a candidate value lies in the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Candidate {
    pub(crate) start: usize,
    pub(crate) end: usize,
    /// Whether its brackets closed (otherwise it runs to the end of the text).
    pub(crate) closed: bool,
    /// Whether it lies inside a fenced block.
    pub(crate) fenced: bool,
    /// Whether it is an object that members seem to follow after its closing brace
    /// (`{"a": 1}, "b": 2}`): the pipeline then also reads it with them.
    pub(crate) members_follow: bool,
}

/// What the reader of one value wants from the envelope ([`Envelope::frames`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Wanted {
    /// Whether to hand out a value alone first (for the typed fast path).
    pub(crate) alone: bool,
    /// Strict: no value is taken out of prose.
    pub(crate) strict: bool,
    /// Whether the wanted value is an object or an array (found by its brackets).
    pub(crate) container: bool,
}

/// One value alone, handed out first ([`Frames::alone`]): the whole text (`clean`: when it may be
/// clean JSON of the wanted shape), or one object or array in prose or a fence, with nothing after
/// it that opens another value or goes on with its members. A typed value may be read straight
/// from it; `fixes` are the envelope's for taking it out.
#[derive(Debug)]
pub(crate) struct Alone {
    pub(crate) span: (usize, usize),
    pub(crate) clean: bool,
    pub(crate) fixes: Vec<Fix>,
}

/// A place the answer may be, as [`Envelope::frames`] hands them out, in the order they are read.
#[derive(Debug)]
pub(crate) enum Frame<'t> {
    /// The whole text, as it is.
    Whole,
    /// The answer proper.
    Body(Body<'t>),
    /// A candidate object or array of the answer proper.
    Candidate(Candidate),
}

/// The answer proper: the text past a byte-order mark or a thinking block.
#[derive(Debug, Clone)]
pub(crate) struct Body<'t> {
    /// The answer proper.
    pub(crate) text: &'t str,
    /// The fix that records what was skipped before it, if anything.
    pub(crate) skipped: Option<Fix>,
    /// The answer proper without its fence (the content of its first fenced block, or all of it)
    /// and the whitespace around it, with where that begins in the whole text.
    pub(crate) inner: (usize, &'t str),
}

/// Where the answer lies in a text: where it begins (after a byte-order mark and a leading thinking
/// block), with the fix that records what was skipped. The first step of one value's parse. Where
/// the answer begins is found when first asked: clean JSON read straight never asks.
#[derive(Debug, Clone)]
pub(crate) struct Envelope<'t> {
    /// The whole text.
    text: &'t str,
    /// Where the answer proper begins, and what was skipped before it, if anything.
    body: OnceCell<(usize, Option<Fix>)>,
}

impl<'t> Envelope<'t> {
    /// The envelope of `text`.
    pub(crate) fn new(text: &'t str) -> Self {
        Envelope {
            text,
            body: OnceCell::new(),
        }
    }

    /// The places the answer may be, in the order they are read, each found only when asked for
    /// (so clean JSON read straight costs no search): a value alone (when `wanted`:
    /// [`Frames::alone`]), then, as an iterator, the whole text, the answer proper, and each
    /// candidate value in it.
    pub(crate) fn frames(self, wanted: Wanted) -> Frames<'t> {
        Frames {
            envelope: self,
            wanted,
            stage: Stage::Whole,
            candidates: None,
        }
    }

    /// Where the answer proper begins, and what was skipped before it (found when first asked).
    fn found(&self) -> &(usize, Option<Fix>) {
        self.body.get_or_init(|| body_start(self.text))
    }

    /// Where the answer proper begins.
    fn start(&self) -> usize {
        self.found().0
    }

    /// The answer proper, and that without its fence.
    fn body(&self) -> Body<'t> {
        let at = self.start();
        let text = self.text.get(at..).unwrap_or_default();
        let (offset, inner) = unfenced(text);
        let trimmed = inner.trim();
        let inner_at = at + offset + (inner.len() - inner.trim_start().len());
        Body {
            text,
            skipped: self.found().1.clone(),
            inner: (inner_at, trimmed),
        }
    }

    /// The value alone, if there is one: the whole text when it may be clean JSON (or when strict,
    /// or when a scalar is wanted); else the object or array from the first bracket of the answer
    /// proper to the last closing one of its kind, when no bracket opens after that and its members
    /// do not go on after it. (Whether that span is one value is the reader's to find.)
    fn alone(&self, wanted: Wanted) -> Option<Alone> {
        let text = self.text;
        let bytes = text.as_bytes();
        let clean = !wanted.container
            || matches!(
                bytes.iter().find(|b| !b.is_ascii_whitespace()),
                Some(b'{' | b'[')
            );
        if clean || wanted.strict {
            return Some(Alone {
                span: (0, text.len()),
                clean,
                fixes: Vec::new(),
            });
        }
        let (start, skipped) = self.found();
        let from = first_bracket(text, *start)?;
        // To its last closing bracket of the kind that opened it, with nothing after that which
        // opens a value (the text after it is short) or goes on with its members: the last of
        // the closer and the two openers, searched from the end, must be the closer.
        let closer = match bytes.get(from) {
            Some(b'{') => b'}',
            _ => b']',
        };
        let last = memrchr3(closer, b'{', b'[', bytes)?;
        let to = last + 1;
        if bytes.get(last) != Some(&closer) || from >= to || members_follow(text, to) {
            return None;
        }
        Some(Alone {
            span: (from, to),
            clean,
            fixes: Fix::taken_out(text, skipped.clone(), Some((from, to))),
        })
    }
}

/// The stages of [`Frames`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    Whole,
    Body,
    Candidates,
}

/// The places the answer may be, in the order they are read ([`Envelope::frames`]).
pub(crate) struct Frames<'t> {
    envelope: Envelope<'t>,
    wanted: Wanted,
    stage: Stage,
    /// The candidate values, once asked for.
    candidates: Option<Candidates<'t>>,
}

impl Frames<'_> {
    /// The value alone, when wanted and found; asked for first, if at all.
    pub(crate) fn alone(&mut self) -> Option<Alone> {
        match self.wanted.alone {
            true => self.envelope.alone(self.wanted),
            false => None,
        }
    }
}

impl<'t> Iterator for Frames<'t> {
    type Item = Frame<'t>;

    fn next(&mut self) -> Option<Frame<'t>> {
        match self.stage {
            Stage::Whole => {
                self.stage = Stage::Body;
                Some(Frame::Whole)
            }
            Stage::Body => {
                self.stage = Stage::Candidates;
                Some(Frame::Body(self.envelope.body()))
            }
            Stage::Candidates => {
                // Searched for when first asked for.
                let envelope = &self.envelope;
                let found = self
                    .candidates
                    .get_or_insert_with(|| candidates(envelope.text, envelope.start()));
                found.next().map(Frame::Candidate)
            }
        }
    }
}

/// Whether members of an object seem to follow at `at`, after a closing brace: a comma, then a
/// quoted or bare key and its colon (`, "b": 2}`). Reads the key once, no further.
fn members_follow(text: &str, at: usize) -> bool {
    let (follow, end) = lex::members_follow(text.as_bytes(), at, Syntax::LENIENT);
    work::count(end.saturating_sub(at));
    follow
}

/// Where the answer proper begins: after a byte-order mark and a leading thinking block.
/// Returns the offset and the fix to record, if anything was skipped.
fn body_start(text: &str) -> (usize, Option<Fix>) {
    let mut start = 0;
    if text.starts_with('\u{feff}') {
        start = '\u{feff}'.len_utf8();
    }
    // Every thinking tag starts with `<`: most answers hold none, and one byte search says so.
    let think_end = match memchr::memchr(b'<', text.as_bytes()) {
        None => None,
        Some(_) => {
            let trimmed = text.get(start..).unwrap_or_default().trim_start();
            if trimmed.starts_with("<think>") || trimmed.starts_with("<thinking>") {
                // An unclosed thinking block is all thinking.
                let lead = text.len() - trimmed.len();
                Some(close_of_think(text, lead).unwrap_or(text.len()))
            } else if think_open().find(text.as_bytes()).is_none() {
                // Some templates put the opening tag in the prompt: the answer starts inside the
                // block.
                close_of_think(text, start)
            } else {
                None
            }
        }
    };
    match think_end {
        Some(end) => (
            end,
            Some(Fix::new(
                FixKind::Envelope,
                0,
                "skipped a thinking block before the answer",
            )),
        ),
        None if start > 0 => (
            start,
            Some(Fix::new(FixKind::Envelope, 0, "skipped a byte-order mark")),
        ),
        None => (start, None),
    }
}

/// A searcher for `<think`, built once.
fn think_open() -> &'static memmem::Finder<'static> {
    static FINDER: OnceLock<memmem::Finder<'static>> = OnceLock::new();
    FINDER.get_or_init(|| memmem::Finder::new(b"<think"))
}

/// A searcher for `</think`, built once.
fn think_close() -> &'static memmem::Finder<'static> {
    static FINDER: OnceLock<memmem::Finder<'static>> = OnceLock::new();
    FINDER.get_or_init(|| memmem::Finder::new(b"</think"))
}

/// The offset just past the `</think>` (or `</thinking>`) found from `from`.
fn close_of_think(text: &str, from: usize) -> Option<usize> {
    let close = from + think_close().find(text.get(from..)?.as_bytes())?;
    let gt = memchr::memchr(b'>', text.get(close..)?.as_bytes())?;
    Some(close + gt + 1)
}

/// The byte ranges of fenced blocks' contents (an unclosed fence runs to the end).
fn fences(text: &str) -> Vec<(usize, usize)> {
    let mut regions = Vec::new();
    let mut open: Option<usize> = None;
    for at in memmem::find_iter(text.as_bytes(), b"```") {
        match open {
            Some(start) if at < start => {} // inside the opening marker's run of backticks
            Some(start) => {
                regions.push((start, at));
                open = None;
            }
            None => {
                // The content starts after the marker's line (its language tag).
                let line_end = text[at..].find('\n').map_or(text.len(), |i| at + i + 1);
                open = Some(line_end);
            }
        }
    }
    if let Some(start) = open {
        regions.push((start, text.len()));
    }
    regions
}

/// The content of the first fenced block, or the whole text.
fn unfenced(text: &str) -> (usize, &str) {
    match fences(text).first() {
        Some(&(start, end)) if start <= end => (start, text.get(start..end).unwrap_or_default()),
        _ => (0, text),
    }
}

/// Every candidate JSON object or array in `text` from `from`, in order, each found when asked for
/// ([`Candidates`]).
pub(crate) fn candidates(text: &str, from: usize) -> Candidates<'_> {
    Candidates {
        text,
        fenced: fences(text),
        fence: 0,
        // Scans that fail to close run to the end of the text; bound their total.
        budget: text.len().saturating_mul(4).saturating_add(1 << 16),
        seen_unclosed: false,
        next: Some(from),
    }
}

/// The candidate values of a text, in order ([`candidates`]): the search goes on from where the
/// last one ended, so a thousand values in prose hold no list of a thousand places.
pub(crate) struct Candidates<'t> {
    text: &'t str,
    /// The byte ranges of the fenced blocks' contents, in order.
    fenced: Vec<(usize, usize)>,
    /// The first fence that does not end before the last candidate's start.
    fence: usize,
    budget: usize,
    /// Whether a start that never closes was handed out: only the outermost can be the value.
    seen_unclosed: bool,
    /// Where the search goes on (`None`: it is over).
    next: Option<usize>,
}

impl Candidates<'_> {
    /// Whether `at` is inside a fenced block (`at` grows call after call: one pass over both).
    fn in_fence(&mut self, at: usize) -> bool {
        while self
            .fenced
            .get(self.fence)
            .is_some_and(|&(_, end)| end <= at)
        {
            self.fence += 1;
            work::count(1);
        }
        work::count(1);
        self.fenced
            .get(self.fence)
            .is_some_and(|&(start, end)| start <= at && at < end)
    }
}

impl Iterator for Candidates<'_> {
    type Item = Candidate;

    fn next(&mut self) -> Option<Candidate> {
        let text = self.text;
        let bytes = text.as_bytes();
        while let Some(start) = first_bracket(text, self.next?) {
            let mut scanner = ValueScanner::new();
            match scanner.scan(bytes.get(start..).unwrap_or_default(), false) {
                Scan::Closed(len) => {
                    self.budget = self.budget.saturating_sub(len);
                    self.next = Some(start + len);
                    return Some(Candidate {
                        start,
                        end: start + len,
                        closed: true,
                        fenced: self.in_fence(start),
                        members_follow: bytes.get(start) == Some(&b'{')
                            && members_follow(text, start + len),
                    });
                }
                _ => {
                    let rest = bytes.len() - start;
                    work::count(rest);
                    self.next = self.budget.checked_sub(rest).map(|left| {
                        self.budget = left;
                        start + 1
                    });
                    if !self.seen_unclosed {
                        self.seen_unclosed = true;
                        return Some(Candidate {
                            start,
                            end: bytes.len(),
                            closed: false,
                            fenced: self.in_fence(start),
                            members_follow: false,
                        });
                    }
                }
            }
        }
        self.next = None;
        None
    }
}

/// Where the first `{` or `[` of `text` from `from` is.
fn first_bracket(text: &str, from: usize) -> Option<usize> {
    Some(from + memchr2(b'{', b'[', text.as_bytes().get(from..)?)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spans(text: &str) -> Vec<(&str, bool)> {
        candidates(text, 0)
            .map(|c| (&text[c.start..c.end], c.closed))
            .collect()
    }

    #[test]
    fn the_extracted_fix_names_its_span() {
        for (start, end) in [(0, 9), (10, 200), (12_345, usize::MAX)] {
            assert_eq!(
                Fix::extracted(start, end).description,
                format!("took the JSON value at bytes {start}..{end} out of the text around it")
            );
        }
    }

    /// The span of the value alone the envelope hands out, and whether it is the whole text.
    fn alone(text: &str, strict: bool) -> Option<((usize, usize), bool)> {
        let wanted = Wanted {
            alone: true,
            strict,
            container: true,
        };
        let alone = Envelope::new(text).frames(wanted).alone()?;
        Some((alone.span, alone.clean))
    }

    #[test]
    fn a_value_stands_alone_unless_another_or_its_members_follow() {
        let text = "Sure: {\"a\": [1]}. Done";
        assert_eq!(alone(text, false), Some(((6, 16), false)));
        // From the first bracket to the last closing one: whether that is one value is the
        // reader's to find.
        let two = "Sure: {\"a\": 1} and {\"a\": 2}";
        assert_eq!(alone(two, false), Some(((6, two.len()), false)));
        // To the last closing bracket of its own kind.
        assert_eq!(alone("Sure: {\"a\": 1} ]", false), Some(((6, 14), false)));
        assert_eq!(alone("Sure: [1, {}] }", false), Some(((6, 13), false)));
        // A bracket opens after it, or its members go on after it.
        assert_eq!(alone("Sure: {\"a\": 1} [", false), None);
        assert_eq!(alone("Sure: {\"a\": 1}, b: 2", false), None);
        assert_eq!(alone("Sure: {\"a\": 1}, \"b\": 2", false), None);
        assert_eq!(alone("Sure: no value", false), None);
        // Clean JSON, or strict: the whole text.
        assert_eq!(alone(" {\"a\": 1} x", false), Some(((0, 11), true)));
        assert_eq!(alone("Sure: {\"a\": 1}", true), Some(((0, 14), false)));
        let candidates: Vec<_> = candidates("{\"a\": 1}, \"b\": 2} [1], 2", 0).collect();
        assert!(candidates[0].members_follow && !candidates[1].members_follow);
    }

    #[test]
    fn frames_come_in_order_each_found_when_asked() {
        let text = "<think>x</think>Sure: {\"a\": 1} or {\"a\": 2}";
        let wanted = Wanted {
            alone: false,
            strict: false,
            container: true,
        };
        let frames: Vec<Frame<'_>> = Envelope::new(text).frames(wanted).collect();
        assert!(matches!(frames[0], Frame::Whole));
        assert!(
            matches!(&frames[1], Frame::Body(body) if body.text.starts_with("Sure") && body.skipped.is_some())
        );
        let spans: Vec<&str> = frames[2..]
            .iter()
            .filter_map(|frame| match frame {
                Frame::Candidate(c) => text.get(c.start..c.end),
                _ => None,
            })
            .collect();
        assert_eq!(spans, ["{\"a\": 1}", "{\"a\": 2}"]);
        assert_eq!(frames.len(), 4);
    }

    #[test]
    fn the_first_bracket_from_an_offset() {
        let text = "Sure: {\"a\": [1]} ok";
        assert_eq!(first_bracket(text, 0), Some(6));
        assert_eq!(first_bracket(text, 7), Some(12));
        assert_eq!(first_bracket(text, 16), None);
        assert_eq!(first_bracket(text, 99), None);
    }

    #[test]
    fn finds_values_in_prose() {
        assert_eq!(
            spans("Sure! {\"a\":1} Hope this helps."),
            [("{\"a\":1}", true)]
        );
        assert_eq!(
            spans("{\"bio\":\"a } b\"}"),
            [("{\"bio\":\"a } b\"}", true)]
        );
        assert_eq!(
            spans("Draft: {\"a\":\"x\"}\nFinal: {\"a\":1}"),
            [("{\"a\":\"x\"}", true), ("{\"a\":1}", true)]
        );
    }

    #[test]
    fn a_stray_bracket_does_not_hide_the_value() {
        let text = "Format starts \"I, [\" ok:\n{\"a\":1}";
        let found = spans(text);
        assert!(!found[0].1);
        assert!(found.contains(&("{\"a\":1}", true)));
    }

    #[test]
    fn thinking_blocks_and_boms_are_skipped() {
        let text = "<think>maybe {x}</think>{\"a\":1}";
        assert_eq!(body_start(text).0, text.find("{\"a").unwrap());
        assert_eq!(body_start("<think>only thoughts").0, 20);
        assert_eq!(body_start("thoughts</think>\n{}").0, 16);
        assert_eq!(body_start("\u{feff}{}").0, 3);
        assert_eq!(body_start("{}").0, 0);
        assert!(body_start("{}").1.is_none());
    }

    #[test]
    fn fences_any_tag_and_unclosed() {
        let text = "a\n```json\n{}\n```\nb\n```\n[]";
        let regions = fences(text);
        assert_eq!(regions.len(), 2);
        assert_eq!(&text[regions[0].0..regions[0].1], "{}\n");
        assert_eq!(&text[regions[1].0..regions[1].1], "[]");
        assert_eq!(unfenced("```JSON\n\"x\"```").1, "\"x\"");
    }

    #[test]
    fn telling_fenced_candidates_is_linear() {
        // Checking each candidate against every fence would be quadratic.
        for blocks in [500, 2_000] {
            let text = "```json\n{\"a\":1}\n```\nand {\"a\":2}\n".repeat(blocks);
            let mut found = Vec::new();
            let steps = work::of(|| found = candidates(&text, 0).collect());
            assert_eq!(found.len(), 2 * blocks);
            assert_eq!(found.iter().filter(|c| c.fenced).count(), blocks);
            assert!(
                steps <= 4 * found.len(),
                "{steps} steps for {blocks} blocks"
            );
        }
    }

    #[test]
    fn hostile_brackets_stay_linear() {
        // Each `[` starts a scan that runs to the end of the text: unbounded, quadratic. The bytes
        // those scans read stay within their budget, and about double with the input.
        let mut last: Option<usize> = None;
        for n in [4_000, 8_000, 16_000, 32_000, 64_000, 128_000] {
            let text = "[".repeat(n);
            let mut found = Vec::new();
            let steps = work::of(|| found = candidates(&text, 0).collect());
            assert_eq!(found.len(), 1);
            assert!(steps <= 5 * n + (1 << 16), "{steps} bytes read for {n}");
            if let Some(last) = last {
                assert!(
                    steps * 10 < last * 25,
                    "{last} then {steps} bytes read at {n}"
                );
            }
            last = Some(steps);
        }
    }
}

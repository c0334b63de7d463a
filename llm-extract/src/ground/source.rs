//! [`Source`]: a text prepared for finding values in it, and the three ways a value is found.

use super::{boundary, MatchKind, Span};
use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher, RandomState};
use std::ops::Range;
use std::sync::OnceLock;

/// The lowest [`MatchKind::Fuzzy`] score accepted: below it a value is [`MatchKind::NotFound`].
pub const FUZZY_MIN_SCORE: f32 = 0.75;

/// Bytes between two char-count checkpoints: a char offset costs at most this many byte reads.
const CHECKPOINT: usize = 1024;
/// The most words of a value the fuzzy search compares (a longer value is compared on its first ones).
const MAX_VALUE_WORDS: usize = 64;
/// The most places the fuzzy search checks: occurrences of the value's rarest word.
const MAX_CANDIDATES: usize = 64;

/// A text to find values in.
///
/// Building one is cheap; the normalized copy and the word index a search needs are built on first
/// use (each linear in the text) and kept, so grounding many values against one text costs one build
/// plus a linear search per value.
///
/// ```
/// use llm_extract::ground::{MatchKind, Source};
///
/// let source = Source::new("Mr. Sherlock  Holmes,\r\nwho was usually very late");
/// let (bytes, kind) = source.align("sherlock holmes").unwrap();
/// assert_eq!(kind, MatchKind::Normalized);
/// assert_eq!(&source.text()[bytes], "Sherlock  Holmes");
/// assert_eq!(source.align("Watson"), None);
/// ```
pub struct Source<'a> {
    text: &'a str,
    checkpoints: Vec<usize>,
    normalized: OnceLock<Option<Normalized>>,
    words: OnceLock<Words>,
}

impl std::fmt::Debug for Source<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Source")
            .field("bytes", &self.text.len())
            .finish_non_exhaustive()
    }
}

/// The text with whitespace runs collapsed to one space, lowercased, quotes made straight; for each
/// of its bytes, the range of the source char it came from.
struct Normalized {
    text: String,
    starts: Vec<u32>,
    ends: Vec<u32>,
}

/// The words of the normalized text (runs of alphanumeric chars), and where each word occurs.
struct Words {
    spans: Vec<Range<usize>>,
    hasher: RandomState,
    index: HashMap<u64, Vec<u32>>,
}

impl<'a> Source<'a> {
    /// Prepares `text`.
    pub fn new(text: &'a str) -> Self {
        let bytes = text.as_bytes();
        let mut checkpoints = Vec::with_capacity(bytes.len() / CHECKPOINT + 1);
        let mut chars = 0;
        for block in bytes.chunks(CHECKPOINT) {
            checkpoints.push(chars);
            chars += block.iter().filter(|&&b| !is_continuation(b)).count();
        }
        Source {
            text,
            checkpoints,
            normalized: OnceLock::new(),
            words: OnceLock::new(),
        }
    }

    /// The text.
    pub fn text(&self) -> &'a str {
        self.text
    }

    /// The char offset of byte offset `byte` (a char boundary; clamped to the text's length).
    pub fn char_offset(&self, byte: usize) -> usize {
        let byte = byte.min(self.text.len());
        let block = byte / CHECKPOINT;
        let base = self.checkpoints.get(block).copied().unwrap_or(0);
        let from = block * CHECKPOINT;
        let tail = self.text.as_bytes().get(from..byte).unwrap_or_default();
        base + tail.iter().filter(|&&b| !is_continuation(b)).count()
    }

    /// Where `value` is in the text and how it matched: the first exact occurrence, else the first
    /// normalized one, else the best fuzzy one; `None` when none is found (or `value` has no word).
    ///
    /// Every range returned begins and ends on a word ([`boundary`]): a value that does not is
    /// searched without the punctuation and whitespace at its ends ([`boundary::trim`]; found so, it
    /// is [`MatchKind::Normalized`]), an occurrence that begins or ends inside a word is skipped, and
    /// a fuzzy match is [snapped](boundary::snap) to the words it covers.
    pub fn align(&self, value: &str) -> Option<(Range<usize>, MatchKind)> {
        let exact = boundary::snap(value, 0..value.len()) == Some(0..value.len());
        let trimmed = if exact { value } else { boundary::trim(value)? };
        let text = self.text.as_bytes();
        if let Some(range) = memchr::memmem::find_iter(text, trimmed.as_bytes())
            .map(|start| start..start + trimmed.len())
            .find(|range| boundary::is_span(self.text, range))
        {
            let kind = if exact {
                MatchKind::Exact
            } else {
                MatchKind::Normalized
            };
            return Some((range, kind));
        }
        let normalized = self.normalized().as_ref()?;
        let needle = normalize(trimmed);
        let needle = needle.trim_matches(' ');
        if needle.is_empty() {
            return None;
        }
        let found = memchr::memmem::find_iter(normalized.text.as_bytes(), needle.as_bytes())
            .filter_map(|start| normalized.source_range(start..start + needle.len()))
            .find(|range| boundary::is_span(self.text, range));
        if let Some(range) = found {
            return Some((range, MatchKind::Normalized));
        }
        self.fuzzy(normalized, needle)
    }

    /// The span of `value` at JSON pointer `path`: aligned, or [`MatchKind::NotFound`] with empty
    /// ranges.
    pub fn span(&self, path: String, value: &str) -> Span {
        match self.align(value) {
            Some((bytes, kind)) => Span {
                path,
                value: value.to_owned(),
                chars: self.char_offset(bytes.start)..self.char_offset(bytes.end),
                bytes,
                kind,
            },
            None => Span {
                path,
                value: value.to_owned(),
                bytes: 0..0,
                chars: 0..0,
                kind: MatchKind::NotFound,
            },
        }
    }

    fn normalized(&self) -> &Option<Normalized> {
        self.normalized.get_or_init(|| Normalized::build(self.text))
    }

    fn words(&self, normalized: &Normalized) -> &Words {
        self.words.get_or_init(|| Words::build(&normalized.text))
    }

    /// Anchors on the value's rarest word, then scores the words around each of its occurrences.
    fn fuzzy(&self, normalized: &Normalized, needle: &str) -> Option<(Range<usize>, MatchKind)> {
        let words = self.words(normalized);
        let wanted: Vec<&str> = word_ranges(needle)
            .take(MAX_VALUE_WORDS)
            .filter_map(|r| needle.get(r))
            .collect();
        let m = wanted.len();
        // A value of one word that is not in the text as such cannot match better than not at all.
        if m < 2 {
            return None;
        }
        let (anchor, occurrences) = wanted
            .iter()
            .enumerate()
            .filter_map(|(i, word)| Some((i, words.occurrences(word)?)))
            .min_by_key(|(i, occurrences)| (occurrences.len(), usize::MAX - wanted[*i].len()))?;
        let slack = m / 2 + 1;
        let mut best: Option<(f32, Range<usize>)> = None;
        for &at in occurrences.iter().take(MAX_CANDIDATES) {
            let at = at as usize;
            let from = at.saturating_sub(anchor + slack);
            let to = (at + (m - anchor) + slack).min(words.spans.len());
            let window: Vec<&str> = words
                .spans
                .get(from..to)
                .unwrap_or_default()
                .iter()
                .filter_map(|r| normalized.text.get(r.clone()))
                .collect();
            let Some((score, first, last)) = best_match(&wanted, &window) else {
                continue;
            };
            if best.as_ref().is_none_or(|(s, _)| score > *s) {
                let start = words.spans.get(from + first)?.start;
                let end = words.spans.get(from + last)?.end;
                best = Some((score, start..end));
            }
        }
        let (score, range) = best.filter(|(score, _)| *score >= FUZZY_MIN_SCORE)?;
        let range = normalized.source_range(range)?;
        let range = boundary::snap(self.text, range)?;
        Some((range, MatchKind::Fuzzy { score }))
    }
}

fn is_continuation(byte: u8) -> bool {
    byte & 0xC0 == 0x80
}

/// The char a quote-like char normalizes to.
fn straighten(c: char) -> char {
    match c {
        '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' | '\u{2032}' | '`' => '\'',
        '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' | '\u{00AB}' | '\u{00BB}'
        | '\u{2033}' => '"',
        c => c,
    }
}

/// Pushes the normalized form of the chars of `text`; `each(out_len_before, out_len_after, char start,
/// char end)` is called per source char that produced output.
fn normalize_into(text: &str, out: &mut String, mut each: impl FnMut(usize, usize, usize, usize)) {
    let mut in_space = false;
    for (start, c) in text.char_indices() {
        let end = start + c.len_utf8();
        let before = out.len();
        if c.is_whitespace() {
            if in_space {
                continue;
            }
            in_space = true;
            out.push(' ');
        } else {
            in_space = false;
            out.extend(straighten(c).to_lowercase());
        }
        each(before, out.len(), start, end);
    }
}

fn normalize(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    normalize_into(text, &mut out, |_, _, _, _| {});
    out
}

impl Normalized {
    /// `None` for a text whose offsets do not fit in `u32` (4 GiB).
    fn build(text: &str) -> Option<Normalized> {
        u32::try_from(text.len()).ok()?;
        let mut out = String::with_capacity(text.len());
        let mut starts = Vec::with_capacity(text.len());
        let mut ends = Vec::with_capacity(text.len());
        normalize_into(text, &mut out, |before, after, start, end| {
            for _ in before..after {
                // Fits: checked above, and `end <= text.len()`.
                starts.push(start as u32);
                ends.push(end as u32);
            }
        });
        // Lowercasing may lengthen the text past `u32`; then there is no normalized search.
        u32::try_from(out.len()).ok()?;
        Some(Normalized {
            text: out,
            starts,
            ends,
        })
    }

    /// The source range a non-empty range of the normalized text came from.
    fn source_range(&self, range: Range<usize>) -> Option<Range<usize>> {
        let start = *self.starts.get(range.start)? as usize;
        let end = *self.ends.get(range.end.checked_sub(1)?)? as usize;
        Some(start..end)
    }
}

/// The byte ranges of the words (alphanumeric runs) of `text`.
fn word_ranges(text: &str) -> impl Iterator<Item = Range<usize>> + '_ {
    let mut chars = text.char_indices().peekable();
    std::iter::from_fn(move || {
        let (start, _) = chars.by_ref().find(|(_, c)| c.is_alphanumeric())?;
        let mut end = text.len();
        while let Some(&(at, c)) = chars.peek() {
            if !c.is_alphanumeric() {
                end = at;
                break;
            }
            chars.next();
        }
        Some(start..end)
    })
}

impl Words {
    fn build(text: &str) -> Words {
        let hasher = RandomState::new();
        let mut spans = Vec::new();
        let mut index: HashMap<u64, Vec<u32>> = HashMap::new();
        for range in word_ranges(text) {
            let Some(word) = text.get(range.clone()) else {
                continue;
            };
            let Ok(position) = u32::try_from(spans.len()) else {
                break;
            };
            index.entry(hash(&hasher, word)).or_default().push(position);
            spans.push(range);
        }
        Words {
            spans,
            hasher,
            index,
        }
    }

    /// Where `word` occurs (word positions; a hash collision is weeded out when scored).
    fn occurrences(&self, word: &str) -> Option<&Vec<u32>> {
        self.index.get(&hash(&self.hasher, word))
    }
}

fn hash(hasher: &RandomState, word: &str) -> u64 {
    let mut state = hasher.build_hasher();
    state.write(word.as_bytes());
    state.finish()
}

/// The longest common subsequence of `wanted` and `window` (words): its Dice score against the span it
/// covers, and the first and last window positions it uses. `None` when no word is shared.
fn best_match(wanted: &[&str], window: &[&str]) -> Option<(f32, usize, usize)> {
    let (m, w) = (wanted.len(), window.len());
    if m == 0 || w == 0 {
        return None;
    }
    let cols = w + 1;
    let mut table = vec![0u16; (m + 1) * cols];
    for i in (0..m).rev() {
        for j in (0..w).rev() {
            let value = if wanted.get(i) == window.get(j) {
                table.get((i + 1) * cols + j + 1).copied().unwrap_or(0) + 1
            } else {
                let down = table.get((i + 1) * cols + j).copied().unwrap_or(0);
                let right = table.get(i * cols + j + 1).copied().unwrap_or(0);
                down.max(right)
            };
            if let Some(cell) = table.get_mut(i * cols + j) {
                *cell = value;
            }
        }
    }
    let common = usize::from(table.first().copied().unwrap_or(0));
    if common == 0 {
        return None;
    }
    // Walk the table forward, recording the window positions matched.
    let (mut i, mut j) = (0, 0);
    let (mut first, mut last) = (None, 0);
    while i < m && j < w {
        if wanted.get(i) == window.get(j) {
            first.get_or_insert(j);
            last = j;
            i += 1;
            j += 1;
        } else if table.get((i + 1) * cols + j) >= table.get(i * cols + j + 1) {
            i += 1;
        } else {
            j += 1;
        }
    }
    let first = first?;
    let covered = last - first + 1;
    let score = 2.0 * common as f32 / (m + covered) as f32;
    Some((score, first, last))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(text: &str, value: &str) -> Option<(String, MatchKind)> {
        let source = Source::new(text);
        source
            .align(value)
            .map(|(range, kind)| (text[range].to_owned(), kind))
    }

    #[test]
    fn exact_normalized_fuzzy_and_not_found() {
        let text =
            "To Sherlock Holmes she is always “the woman”.\r\nI have seldom heard him mention her";
        assert_eq!(
            found(text, "Sherlock Holmes"),
            Some(("Sherlock Holmes".into(), MatchKind::Exact))
        );
        assert_eq!(
            found(text, "\"The Woman\""),
            Some(("“the woman”".into(), MatchKind::Normalized))
        );
        assert_eq!(
            found(text, "woman\". I have"),
            Some(("woman”.\r\nI have".into(), MatchKind::Normalized))
        );
        let (span, kind) = found(text, "I have seldom ever heard him").unwrap();
        assert_eq!(span, "I have seldom heard him");
        assert!(matches!(kind, MatchKind::Fuzzy { score } if score >= FUZZY_MIN_SCORE));
        assert_eq!(found(text, "Dr. Watson"), None);
        assert_eq!(found(text, "   "), None);
    }

    #[test]
    fn fuzzy_needs_most_words() {
        let text = "the red-headed league met in a small office in Fleet Street";
        assert_eq!(found(text, "the blue green office of london"), None);
    }

    #[test]
    fn char_offsets_count_scalar_values() {
        let text = "日本語 😀 e\u{301}\r\nabc";
        let source = Source::new(text);
        let span = source.span("/x".into(), "abc");
        assert_eq!(span.kind, MatchKind::Exact);
        assert_eq!(span.bytes, text.len() - 3..text.len());
        let chars = text.chars().count();
        assert_eq!(span.chars, chars - 3..chars);
    }

    #[test]
    fn char_offsets_across_checkpoints() {
        let text = "é".repeat(3000) + " needle";
        let source = Source::new(&text);
        let span = source.span(String::new(), "needle");
        assert_eq!(span.chars, 3001..3007);
        assert_eq!(source.char_offset(text.len()), 3007);
    }

    const BOOK: &str =
        "I had seen little of Holmes lately (my marriage had drifted us away from each \
        other), when my way led me through Baker Street.\r\nAs I passed the well-remembered door, \
        I was seized with a keen desire to see Holmes's friend «Watson» again, and in that vow";

    #[test]
    fn spans_never_begin_or_end_between_words() {
        let (span, kind) = found(BOOK, "), when my way led me through Baker Street. As I").unwrap();
        assert_eq!(span, "when my way led me through Baker Street.\r\nAs I");
        assert_eq!(kind, MatchKind::Normalized);
        assert_eq!(
            found(BOOK, ", and in that vow"),
            Some(("and in that vow".into(), MatchKind::Normalized))
        );
        assert_eq!(
            found(BOOK, "Baker Street."),
            Some(("Baker Street".into(), MatchKind::Normalized))
        );
        assert_eq!(
            found(BOOK, "«Watson»"),
            Some(("«Watson»".into(), MatchKind::Exact))
        );
        assert_eq!(
            found(BOOK, "Holmes"),
            Some(("Holmes".into(), MatchKind::Exact))
        );
        assert_eq!(found(BOOK, "Holm"), None, "half a word");
        assert_eq!(found(BOOK, "olmes lately"), None);
        assert_eq!(found(BOOK, "), ("), None, "no word");
    }

    #[test]
    fn an_occurrence_inside_a_word_is_skipped_for_a_whole_one() {
        let text = "Sherlockian Sherlock";
        let source = Source::new(text);
        assert_eq!(source.align("Sherlock"), Some((12..20, MatchKind::Exact)));
        assert_eq!(
            found("THE SHERLOCKIAN, the Sherlock", "sherlock"),
            Some(("Sherlock".into(), MatchKind::Normalized))
        );
    }

    #[test]
    fn fuzzy_matches_are_snapped_to_words() {
        let (span, kind) = found(BOOK, "when my road led me through Baker Street.").unwrap();
        assert!(matches!(kind, MatchKind::Fuzzy { .. }));
        assert_eq!(span, "when my way led me through Baker Street");
    }

    proptest::proptest! {
        /// Whatever is asked, a span the aligner returns begins and ends on a word; a whole word of
        /// the text is found exactly, at a whole occurrence of it.
        #[test]
        fn aligned_spans_begin_and_end_on_words(
            words in proptest::collection::vec("[a-zA-Zé東京]{1,6}", 1..15),
            between in proptest::collection::vec("[ ,.;()\"“”—]{1,2}|\r\n|' | '", 15),
            a in 0usize..200,
            b in 0usize..200,
            pick in 0usize..30,
        ) {
            let text: String = words
                .iter()
                .zip(&between)
                .flat_map(|(word, between)| [word.as_str(), between.as_str()])
                .collect();
            let source = Source::new(&text);
            let mut offsets: Vec<usize> = text.char_indices().map(|(at, _)| at).collect();
            offsets.push(text.len());
            let at = |i: usize| offsets[i % offsets.len()];
            let value = &text[at(a).min(at(b))..at(a).max(at(b))];
            for value in [value, &value.to_uppercase()] {
                if let Some((range, _)) = source.align(value) {
                    proptest::prop_assert!(boundary::is_span(&text, &range), "{:?} for {:?}", &text[range], value);
                }
            }
            let word = words[pick % words.len()].as_str();
            {
                let (range, kind) = source.align(word).unwrap();
                proptest::prop_assert_eq!(kind, MatchKind::Exact);
                proptest::prop_assert_eq!(&text[range.clone()], word);
                proptest::prop_assert!(boundary::is_span(&text, &range));
            }
        }
    }
}

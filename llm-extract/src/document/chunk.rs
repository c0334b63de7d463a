//! Splitting a long text into chunks that fit a model's context.
//!
//! A chunk ends, in order of preference, at a page break (a form feed, U+000C, which a document read
//! page by page has between its pages, see [`Pages`](crate::document::Pages)), at a paragraph break
//! (a blank line), at the end of a sentence
//! (`.`, `!`, `?` or their CJK forms followed by a space or a line end), at any whitespace, and
//! otherwise at the char boundary nearest the limit: a text that is one giant sentence is still split,
//! never dropped. A cut is looked for in the second half of the allowed length only, so every chunk is
//! at least half full (but the last) and splitting is linear in the text. Each chunk after the first
//! starts `overlap` bytes before the previous one ended (moved forward to the start of a word), so a
//! value cut by a boundary is whole in one of them.

use std::ops::Range;

/// One chunk of a text: a slice of it and where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Chunk<'a> {
    /// Its position among the chunks, from 0.
    pub index: usize,
    /// The chunk's text.
    pub text: &'a str,
    /// Its byte range in the whole text.
    pub bytes: Range<usize>,
    /// Its char range in the whole text.
    pub chars: Range<usize>,
}

/// How to split a text: the largest chunk in bytes, the overlap, and where the first cut falls.
///
/// ```
/// use llm_extract::document::Chunker;
///
/// let text = "First paragraph. It has two sentences.\n\nSecond paragraph, a little longer than that.";
/// let chunks = Chunker::new(60).overlap(0).split(text);
/// assert_eq!(chunks.len(), 2);
/// assert_eq!(chunks[0].text, "First paragraph. It has two sentences.\n\n");
/// assert_eq!(chunks[1].bytes.end, text.len());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Chunker {
    max_bytes: usize,
    overlap: usize,
    first: Option<usize>,
}

/// The smallest chunk a [`Chunker`] makes (a smaller `max_bytes` is raised to it).
pub const MIN_CHUNK_BYTES: usize = 64;

impl Chunker {
    /// Chunks of at most `max_bytes` bytes (at least [`MIN_CHUNK_BYTES`]), overlapping by a tenth of
    /// that.
    pub fn new(max_bytes: usize) -> Self {
        let max_bytes = max_bytes.max(MIN_CHUNK_BYTES);
        Chunker {
            max_bytes,
            overlap: max_bytes / 10,
            first: None,
        }
    }

    /// How many bytes each chunk repeats of the one before (at most a quarter of the chunk size).
    pub fn overlap(mut self, bytes: usize) -> Self {
        self.overlap = bytes.min(self.max_bytes / 4);
        self
    }

    /// Makes the first chunk at most `bytes` long (at least [`MIN_CHUNK_BYTES`]), which moves every
    /// later boundary: what a second pass uses so that a value cut by a boundary in the first is whole.
    pub fn first_chunk(mut self, bytes: usize) -> Self {
        self.first = Some(bytes.clamp(MIN_CHUNK_BYTES, self.max_bytes));
        self
    }

    /// The largest chunk in bytes.
    pub fn max_bytes(&self) -> usize {
        self.max_bytes
    }

    /// Splits `text`. An empty text has no chunks; a text of only whitespace has one.
    pub fn split<'a>(&self, text: &'a str) -> Vec<Chunk<'a>> {
        let mut chunks = Vec::new();
        let mut start = 0;
        let mut chars = 0;
        while let Some(rest) = text.get(start..).filter(|rest| !rest.is_empty()) {
            let (end, next) = self.step(rest, chunks.is_empty());
            let Some(slice) = rest.get(..end) else {
                break;
            };
            let len = slice.chars().count();
            chunks.push(Chunk {
                index: chunks.len(),
                text: slice,
                bytes: start..start + end,
                chars: chars..chars + len,
            });
            if end == rest.len() {
                break;
            }
            chars += rest.get(..next).map_or(0, |s| s.chars().count());
            start += next;
        }
        chunks
    }

    /// One step of a split, on `rest`, the text from where the current chunk starts (the first chunk
    /// when `first`): where that chunk ends and where the next one starts, relative to `rest`. Only
    /// the first [`Chunker::window`] bytes of `rest` are looked at, so `rest` may be cut there (on a
    /// char boundary) when more text follows: what lets a text read piece by piece
    /// ([`ChunkReader`](super::ChunkReader)) be split exactly as the whole text is.
    pub(crate) fn step(&self, rest: &str, first: bool) -> (usize, usize) {
        let max = if first {
            self.first.unwrap_or(self.max_bytes)
        } else {
            self.max_bytes
        };
        if rest.len() <= max {
            return (rest.len(), rest.len());
        }
        let end = cut(rest, 0, max);
        (end, overlap_start(rest, 0, end, self.overlap))
    }

    /// How much text from a chunk's start [`Chunker::step`] needs to see: the largest chunk, and a
    /// char beyond it.
    pub(crate) fn window(&self) -> usize {
        self.max_bytes + 4
    }
}

/// Where a chunk that starts at `start` and may reach `limit` (< text length) ends.
fn cut(text: &str, start: usize, limit: usize) -> usize {
    let limit = floor_boundary(text, limit);
    let lowest = floor_boundary(text, start + (limit - start) / 2).max(start + 1);
    let window = text.get(lowest..limit).unwrap_or_default();
    let bytes = window.as_bytes();
    // A page break: just after the last form feed and the line end that follows it.
    if let Some(at) = memchr::memrchr(b'\x0c', bytes) {
        let after = at + 1 + usize::from(bytes.get(at + 1) == Some(&b'\n'));
        return lowest + after;
    }
    // A paragraph break: the end of a run of two line ends (with optional `\r` and spaces between).
    if let Some(at) = paragraph_end(bytes) {
        return lowest + at;
    }
    if let Some(at) = sentence_end(window) {
        return lowest + at;
    }
    if let Some(at) = window.rfind(char::is_whitespace) {
        let after = window[at..].chars().next().map_or(1, char::len_utf8);
        return lowest + at + after;
    }
    limit.max(ceil_boundary(text, start + 1))
}

/// The end of the last blank line in `bytes`: just after its second line end.
fn paragraph_end(bytes: &[u8]) -> Option<usize> {
    let mut i = bytes.len();
    while i > 0 {
        i -= 1;
        if bytes.get(i) != Some(&b'\n') {
            continue;
        }
        // Look back over spaces, tabs and `\r` for another line end.
        let mut j = i;
        while j > 0 {
            j -= 1;
            match bytes.get(j) {
                Some(b'\n') => return Some(i + 1),
                Some(b' ' | b'\t' | b'\r') => continue,
                _ => break,
            }
        }
    }
    None
}

/// Just after the whitespace that follows the last sentence end in `window`.
fn sentence_end(window: &str) -> Option<usize> {
    let mut last = None;
    let mut previous: Option<char> = None;
    for (at, c) in window.char_indices() {
        if let Some(p) = previous {
            if matches!(p, '.' | '!' | '?') && c.is_whitespace() {
                last = Some(at + c.len_utf8());
            }
        }
        if matches!(c, '。' | '！' | '？') {
            last = Some(at + c.len_utf8());
        }
        previous = Some(c);
    }
    last
}

/// Where the next chunk starts: `overlap` bytes before `end`, moved forward to the start of a word,
/// and always after `start`.
fn overlap_start(text: &str, start: usize, end: usize, overlap: usize) -> usize {
    if overlap == 0 {
        return end;
    }
    let from = ceil_boundary(text, end.saturating_sub(overlap).max(start + 1));
    let window = text.get(from..end).unwrap_or_default();
    match window.find(char::is_whitespace) {
        Some(at) => {
            let rest = &window[at..];
            let word = rest
                .find(|c: char| !c.is_whitespace())
                .map_or(end, |skip| from + at + skip);
            word.min(end)
        }
        None => from,
    }
}

fn floor_boundary(text: &str, mut at: usize) -> usize {
    at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

fn ceil_boundary(text: &str, mut at: usize) -> usize {
    at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at += 1;
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefers_paragraphs_then_sentences_then_spaces() {
        let text = format!("{}\r\n\r\n{}", "a".repeat(40), "b".repeat(40));
        let chunks = Chunker::new(64).overlap(0).split(&text);
        assert_eq!(chunks[0].text, format!("{}\r\n\r\n", "a".repeat(40)));

        let text = format!("{}. {}", "a".repeat(40), "b".repeat(40));
        let chunks = Chunker::new(64).overlap(0).split(&text);
        assert_eq!(chunks[0].text, format!("{}. ", "a".repeat(40)));

        let text = "word ".repeat(30);
        let chunks = Chunker::new(64).overlap(0).split(&text);
        assert!(chunks
            .iter()
            .all(|c| c.text.ends_with(' ') && c.text.len() <= 64));
    }

    #[test]
    fn a_page_break_is_preferred_to_a_paragraph_break() {
        let page = format!("{}\n\n{}", "a".repeat(10), "b".repeat(10));
        let text = format!("{page}\n\u{c}\n{page}\n\u{c}\n{page}");
        let chunks = Chunker::new(64).overlap(0).split(&text);
        assert_eq!(chunks[0].text, format!("{page}\n\u{c}\n{page}\n\u{c}\n"));
        assert!(chunks[1].text.starts_with('a'));
        // Without the page break, the paragraph break after it would have been taken.
        let plain = text.replace('\u{c}', " ");
        assert_ne!(
            Chunker::new(64).overlap(0).split(&plain)[0].text,
            chunks[0].text
        );
    }

    #[test]
    fn one_giant_word_is_split_on_char_boundaries() {
        let text = "語".repeat(100);
        let chunks = Chunker::new(64).overlap(0).split(&text);
        let joined: String = chunks.iter().map(|c| c.text).collect();
        assert_eq!(joined, text);
        assert!(chunks.iter().all(|c| c.text.len() <= 64));
        assert_eq!(chunks.last().map(|c| c.chars.end), Some(100));
    }

    #[test]
    fn overlap_repeats_whole_words() {
        let text =
            "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi";
        let chunks = Chunker::new(64).overlap(16).split(text);
        assert_eq!(chunks.len(), 2);
        assert!(chunks[1].bytes.start < chunks[0].bytes.end);
        assert!(chunks[1].text.starts_with(|c: char| c.is_alphabetic()));
        assert_eq!(
            &text[chunks[1].bytes.clone()],
            chunks[1].text,
            "ranges and text agree"
        );
    }

    #[test]
    fn empty_and_blank_texts() {
        assert!(Chunker::new(100).split("").is_empty());
        assert_eq!(Chunker::new(100).split("  \n ").len(), 1);
    }
}

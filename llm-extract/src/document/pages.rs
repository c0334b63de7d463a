//! A document's text read page by page (from a PDF's text layer, see [`pdf`](super::pdf)): one text
//! with the pages joined by [`PAGE_BREAK`], where each page starts, and the page a [`Span`] of that
//! text falls on, with its offsets within that page's text ([`PageSpan`]).

use crate::ground::{Grounded, Span};
use serde::Serialize;
use std::ops::Range;

/// What separates two pages in [`Pages::text`]: a line end, a form feed (U+000C, the page break of plain
/// text) and a line end. The [`Chunker`](super::Chunker) prefers to end a chunk after it.
pub const PAGE_BREAK: &str = "\n\u{c}\n";

/// A document's text, page by page.
///
/// ```
/// use llm_extract::document::{Pages, PAGE_BREAK};
///
/// let pages = Pages::from_pages(["Invoice 42", "Total: 10 EUR"]);
/// assert_eq!(pages.text(), format!("Invoice 42{PAGE_BREAK}Total: 10 EUR"));
/// assert_eq!(pages.len(), 2);
/// assert_eq!(pages.page_text(2), Some("Total: 10 EUR"));
/// let at = pages.text().find("10 EUR").unwrap();
/// assert_eq!(pages.page_at(at), Some(2));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pages {
    text: String,
    /// Per page, its byte and char range in `text` (without the break that follows it).
    ranges: Vec<(Range<usize>, Range<usize>)>,
    /// Pages whose text could not be read (1-based), with the reason: their text is empty.
    unreadable: Vec<(usize, String)>,
}

/// Where a span of a [`Pages`] text is on its pages.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct PageSpan {
    /// The page the span starts on, from 1.
    pub page: usize,
    /// The page it ends on (the same as `page` but for a span that crosses a page break).
    pub last_page: usize,
    /// Its byte range within the text of `page` ([`Pages::page_text`]); it runs past that page's end
    /// when the span crosses a page break.
    pub bytes: Range<usize>,
    /// Its char range within the text of `page`.
    pub chars: Range<usize>,
}

impl Pages {
    /// The pages' texts joined by [`PAGE_BREAK`]. A form feed inside a page's text becomes a space, so
    /// that every form feed of [`Pages::text`] is a page break.
    pub fn from_pages<S: AsRef<str>>(pages: impl IntoIterator<Item = S>) -> Pages {
        let mut text = String::new();
        let mut chars = 0;
        let mut ranges = Vec::new();
        for (index, page) in pages.into_iter().enumerate() {
            if index > 0 {
                text.push_str(PAGE_BREAK);
                chars += PAGE_BREAK.chars().count();
            }
            let start = text.len();
            let page = page.as_ref();
            text.extend(page.chars().map(|c| if c == '\u{c}' { ' ' } else { c }));
            let len = page.chars().count();
            ranges.push((start..text.len(), chars..chars + len));
            chars += len;
        }
        Pages {
            text,
            ranges,
            unreadable: Vec::new(),
        }
    }

    /// Records the pages (from 1) that could not be read, and why (their text is empty).
    #[cfg(feature = "pdf")]
    pub(crate) fn with_unreadable(mut self, unreadable: Vec<(usize, String)>) -> Pages {
        self.unreadable = unreadable;
        self
    }

    /// The whole text: what an extraction reads.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The whole text, owned.
    pub fn into_text(self) -> String {
        self.text
    }

    /// How many pages.
    pub fn len(&self) -> usize {
        self.ranges.len()
    }

    /// Whether there is no page.
    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    /// The text of page `page` (from 1).
    pub fn page_text(&self, page: usize) -> Option<&str> {
        let (bytes, _) = self.ranges.get(page.checked_sub(1)?)?;
        self.text.get(bytes.clone())
    }

    /// The byte range of page `page` (from 1) in [`Pages::text`].
    pub fn page_bytes(&self, page: usize) -> Option<Range<usize>> {
        Some(self.ranges.get(page.checked_sub(1)?)?.0.clone())
    }

    /// Pages whose text could not be read (from 1), with the reason; their text is empty.
    pub fn unreadable(&self) -> &[(usize, String)] {
        &self.unreadable
    }

    /// The page (from 1) byte `at` of [`Pages::text`] is on; a byte of a page break counts as the page
    /// before it. `None` past the end of the text.
    pub fn page_at(&self, at: usize) -> Option<usize> {
        if at > self.text.len() || self.ranges.is_empty() {
            return None;
        }
        // The last page that starts at or before `at`.
        let index = self.ranges.partition_point(|(bytes, _)| bytes.start <= at);
        Some(index.max(1))
    }

    /// Where `span` (found in [`Pages::text`]) is on the pages; `None` when it was not found or lies
    /// outside the text.
    pub fn locate(&self, span: &Span) -> Option<PageSpan> {
        if !span.kind.is_found() || span.bytes.end > self.text.len() {
            return None;
        }
        let mut page = self.page_at(span.bytes.start)?;
        // A span that starts on a page break belongs to the page after it.
        if span.bytes.start >= self.ranges.get(page - 1)?.0.end && page < self.len() {
            page += 1;
        }
        let last_page = self
            .page_at(span.bytes.end.saturating_sub(1).max(span.bytes.start))?
            .max(page);
        let (bytes, chars) = self.ranges.get(page - 1)?;
        Some(PageSpan {
            page,
            last_page,
            bytes: span.bytes.start.saturating_sub(bytes.start)
                ..span.bytes.end.saturating_sub(bytes.start),
            chars: span.chars.start.saturating_sub(chars.start)
                ..span.chars.end.saturating_sub(chars.start),
        })
    }

    /// [`Pages::locate`] for each span of each item: `[i][j]` locates `items[i].spans[j]`.
    pub fn locate_items<T>(&self, items: &[Grounded<T>]) -> Vec<Vec<Option<PageSpan>>> {
        items
            .iter()
            .map(|item| item.spans.iter().map(|span| self.locate(span)).collect())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ground::Source;

    fn span(pages: &Pages, value: &str) -> Span {
        Source::new(pages.text()).span("/v".to_owned(), value)
    }

    #[test]
    fn spans_name_their_page_and_offsets_within_it() {
        let pages = Pages::from_pages(["Café Lumière\nline two", "", "naïve total 30 €", "end"]);
        for (value, page) in [
            ("Lumière", 1),
            ("line two", 1),
            ("total 30 €", 3),
            ("end", 4),
        ] {
            let found = span(&pages, value);
            let at = pages.locate(&found).unwrap();
            assert_eq!((at.page, at.last_page), (page, page), "{value}");
            let text = pages.page_text(page).unwrap();
            assert_eq!(&text[at.bytes.clone()], value);
            let by_chars: String = text
                .chars()
                .skip(at.chars.start)
                .take(at.chars.len())
                .collect();
            assert_eq!(by_chars, value);
        }
    }

    #[test]
    fn a_span_across_a_break_names_both_pages_and_unfound_spans_none() {
        let pages = Pages::from_pages(["the total is", "42 euros"]);
        let mut found = span(&pages, "is");
        found.bytes.end = pages.text().len();
        found.chars.end = pages.text().chars().count();
        let at = pages.locate(&found).unwrap();
        assert_eq!((at.page, at.last_page), (1, 2));
        assert!(pages.locate(&span(&pages, "absent words here")).is_none());
    }

    #[test]
    fn form_feeds_inside_a_page_are_not_breaks() {
        let pages = Pages::from_pages(["a\u{c}b", "c"]);
        assert_eq!(pages.text().matches('\u{c}').count(), 1);
        assert_eq!(pages.page_text(1), Some("a b"));
        assert_eq!(pages.page_at(pages.text().len()), Some(2));
        assert_eq!(pages.page_text(0), None);
        assert_eq!(pages.page_text(3), None);
    }
}

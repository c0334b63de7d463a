//! The main text of a web page, for extraction: [`read`] parses the HTML (with `scraper`, on the
//! html5ever parser browsers' algorithm is written in) and walks it to plain text ([`Html`]), keeping
//! each heading's place in that text, so a grounded [`Span`] of the text names the nearest heading
//! above it ([`Html::heading_of`]).
//!
//! What is read: the page's `<main>` element (or the element with `role="main"`) when it has one,
//! else its `<body>`. What is left out: scripts, styles, templates, embedded objects and forms'
//! controls (`script`, `style`, `noscript`, `template`, `svg`, `iframe`, `object`, `canvas`, `button`,
//! `select`, `textarea`), navigation and side matter (`nav`, `aside`, elements with `hidden` or
//! `aria-hidden="true"`, `role="navigation"`), and a `<header>` or `<footer>` that is not inside an
//! `<article>` (the page's banner and footer, not an article's title). Character references are
//! decoded by the parser; runs of whitespace become one space (but in `<pre>`); a block element
//! (paragraph, heading, list item, table row, ...) starts a new line, a paragraph or a heading a new
//! paragraph (a blank line), `<br>` a line, a table cell a tab.

use crate::ground::Span;
use serde::Serialize;
use std::ops::Range;

/// The largest page [`read`] takes, in bytes (64 MiB).
pub const MAX_HTML_BYTES: usize = 64 << 20;

/// Why a page's text could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HtmlError {
    /// The page is larger than [`MAX_HTML_BYTES`].
    #[error("the HTML page has {bytes} bytes, more than the limit of {limit}")]
    TooLarge {
        /// The page's size.
        bytes: usize,
        /// The limit.
        limit: usize,
    },
    /// The page has no text once scripts, styles, navigation, header and footer are left out.
    #[error("the HTML page has no main text (once scripts, styles, navigation, header and footer are left out)")]
    NoText,
}

/// A heading of the page: its level and its text, and where it is in [`Html::text`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Heading {
    /// 1 for `<h1>` to 6 for `<h6>`.
    pub level: u8,
    /// Its text.
    pub text: String,
    /// Its byte range in [`Html::text`].
    pub bytes: Range<usize>,
}

/// The main text of a page and its headings.
///
/// ```
/// let page = llm_extract::document::html::read(
///     "<!doctype html><nav>Home</nav><h1>Prices</h1><p>Tea &amp; cake: 4&nbsp;&euro;</p>\
///      <script>var x = 1;</script>",
/// )?;
/// assert_eq!(page.text(), "Prices\n\nTea & cake: 4\u{a0}€");
/// let at = page.text().find("cake").unwrap();
/// assert_eq!(page.heading_at(at).map(|h| h.text.as_str()), Some("Prices"));
/// # Ok::<(), llm_extract::document::html::HtmlError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Html {
    text: String,
    headings: Vec<Heading>,
}

impl Html {
    /// The main text: what an extraction reads.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The main text, owned.
    pub fn into_text(self) -> String {
        self.text
    }

    /// The headings, in order.
    pub fn headings(&self) -> &[Heading] {
        &self.headings
    }

    /// The nearest heading at or above byte `at` of [`Html::text`]: the last one that starts at or
    /// before it.
    pub fn heading_at(&self, at: usize) -> Option<&Heading> {
        let index = self.headings.partition_point(|h| h.bytes.start <= at);
        self.headings.get(index.checked_sub(1)?)
    }

    /// The nearest heading above `span` (found in [`Html::text`]); `None` when it was not found or no
    /// heading precedes it.
    pub fn heading_of(&self, span: &Span) -> Option<&Heading> {
        if !span.kind.is_found() {
            return None;
        }
        self.heading_at(span.bytes.start)
    }
}

/// Whether `bytes` start as an HTML page does: `<!doctype html` or `<html` (any case), after a byte
/// order mark, whitespace and comments.
pub fn is_html(bytes: &[u8]) -> bool {
    let mut rest = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes);
    loop {
        let skip = rest.iter().take_while(|b| b.is_ascii_whitespace()).count();
        rest = rest.get(skip..).unwrap_or_default();
        if rest.starts_with(b"<!--") {
            match memchr::memmem::find(rest, b"-->") {
                Some(end) => rest = rest.get(end + 3..).unwrap_or_default(),
                None => return false,
            }
            continue;
        }
        let head: Vec<u8> = rest.iter().take(14).map(u8::to_ascii_lowercase).collect();
        return head.starts_with(b"<!doctype html") || head.starts_with(b"<html");
    }
}

/// The main text of the page `html` and its headings.
pub fn read(html: &str) -> Result<Html, HtmlError> {
    if html.len() > MAX_HTML_BYTES {
        return Err(HtmlError::TooLarge {
            bytes: html.len(),
            limit: MAX_HTML_BYTES,
        });
    }
    let document = scraper::Html::parse_document(html);
    let root = document.tree.root();
    // The main element, else the body, else the whole tree.
    let mut main = None;
    let mut body = None;
    for node in root.descendants() {
        if let scraper::Node::Element(element) = node.value() {
            if main.is_none() && (element.name() == "main" || element.attr("role") == Some("main"))
            {
                main = Some(node);
            }
            if body.is_none() && element.name() == "body" {
                body = Some(node);
            }
        }
    }
    let start = main.or(body).unwrap_or(root);
    let mut out = Writer::default();
    // An explicit stack (a page may nest deeper than the call stack allows): each node when entered,
    // then again when left.
    let mut stack = vec![(start, false)];
    let mut in_article = 0usize;
    let mut in_pre = 0usize;
    while let Some((node, leaving)) = stack.pop() {
        match node.value() {
            scraper::Node::Text(text) if !leaving => out.text(text, in_pre > 0),
            scraper::Node::Element(element) => {
                let name = element.name();
                if !leaving {
                    if skipped(element, in_article > 0) {
                        continue;
                    }
                    in_article += usize::from(name == "article");
                    in_pre += usize::from(name == "pre");
                    out.open(name);
                    stack.push((node, true));
                    let children: Vec<_> = node.children().collect();
                    stack.extend(children.into_iter().rev().map(|child| (child, false)));
                } else {
                    in_article -= usize::from(name == "article");
                    in_pre -= usize::from(name == "pre");
                    out.close(name);
                }
            }
            scraper::Node::Document | scraper::Node::Fragment if !leaving => {
                let children: Vec<_> = node.children().collect();
                stack.extend(children.into_iter().rev().map(|child| (child, false)));
            }
            _ => {}
        }
    }
    if out.text.trim().is_empty() {
        return Err(HtmlError::NoText);
    }
    Ok(Html {
        text: out.text,
        headings: out.headings,
    })
}

/// Whether an element (and all it holds) is left out of the main text.
fn skipped(element: &scraper::node::Element, in_article: bool) -> bool {
    let name = element.name();
    matches!(
        name,
        "script"
            | "style"
            | "noscript"
            | "template"
            | "svg"
            | "iframe"
            | "object"
            | "canvas"
            | "button"
            | "select"
            | "textarea"
            | "nav"
            | "aside"
            | "head"
            | "title"
    ) || (matches!(name, "header" | "footer") && !in_article)
        || element.attr("hidden").is_some()
        || element.attr("aria-hidden") == Some("true")
        || element.attr("role") == Some("navigation")
}

/// How much room an element takes from what is around it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Break {
    None,
    Space,
    Tab,
    Line,
    Paragraph,
}

fn break_of(name: &str) -> Break {
    match name {
        "p" | "h1" | "h2" | "h3" | "h4" | "h5" | "h6" | "blockquote" | "pre" | "table" | "ul"
        | "ol" | "dl" | "figure" | "hr" => Break::Paragraph,
        "div" | "section" | "article" | "main" | "li" | "tr" | "dt" | "dd" | "figcaption"
        | "address" | "caption" | "details" | "summary" | "form" | "fieldset" | "legend"
        | "header" | "footer" | "body" | "br" | "thead" | "tbody" | "tfoot" => Break::Line,
        "td" | "th" => Break::Tab,
        _ => Break::None,
    }
}

fn heading_level(name: &str) -> Option<u8> {
    match name {
        "h1" => Some(1),
        "h2" => Some(2),
        "h3" => Some(3),
        "h4" => Some(4),
        "h5" => Some(5),
        "h6" => Some(6),
        _ => None,
    }
}

/// The text as it is written: the break owed before the next text, and the headings open.
#[derive(Default)]
struct Writer {
    text: String,
    pending: Option<Break>,
    headings: Vec<Heading>,
    /// The heading being written: its level and where its text starts.
    open: Option<(u8, usize)>,
}

impl Writer {
    fn owe(&mut self, owed: Break) {
        if owed != Break::None {
            self.pending = Some(self.pending.map_or(owed, |p| p.max(owed)));
        }
    }

    fn open(&mut self, name: &str) {
        if name == "br" {
            // A line break is owed even after another (two `<br>` make a blank line).
            self.flush_break();
            self.text.push('\n');
            return;
        }
        self.owe(break_of(name));
        if let Some(level) = heading_level(name) {
            self.open = Some((level, usize::MAX));
        }
    }

    fn close(&mut self, name: &str) {
        if let Some(level) = heading_level(name) {
            if let Some((open, start)) = self.open.take() {
                if open == level && start != usize::MAX {
                    let end = self.text.len();
                    let text = self.text.get(start..end).unwrap_or_default();
                    self.headings.push(Heading {
                        level,
                        text: text.trim().to_owned(),
                        bytes: start..end,
                    });
                }
            }
        }
        if name != "br" {
            self.owe(break_of(name));
        }
    }

    /// Writes the break owed, if any text precedes it (no break opens the text).
    fn flush_break(&mut self) {
        let Some(owed) = self.pending.take() else {
            return;
        };
        if self.text.is_empty() {
            return;
        }
        // What the text already ends with counts towards the break.
        let trimmed = self.text.trim_end_matches([' ', '\t']).len();
        let ends = &self.text[..trimmed];
        let lines = ends.len() - ends.trim_end_matches('\n').len();
        match owed {
            Break::Paragraph | Break::Line => {
                self.text.truncate(trimmed);
                let want = if owed == Break::Paragraph { 2 } else { 1 };
                for _ in lines..want {
                    self.text.push('\n');
                }
            }
            Break::Tab => {
                if lines == 0 {
                    self.text.truncate(trimmed);
                    self.text.push('\t');
                }
            }
            Break::Space | Break::None => {
                if trimmed == self.text.len() && lines == 0 {
                    self.text.push(' ');
                }
            }
        }
    }

    fn text(&mut self, text: &str, pre: bool) {
        if pre {
            if text.is_empty() {
                return;
            }
            self.flush_break();
            self.mark_heading();
            self.text.push_str(text);
            return;
        }
        let mut words = text.split_ascii_whitespace().peekable();
        if words.peek().is_none() {
            if !text.is_empty() {
                self.owe(Break::Space);
            }
            return;
        }
        if text.starts_with(|c: char| c.is_ascii_whitespace()) {
            self.owe(Break::Space);
        }
        self.flush_break();
        self.mark_heading();
        let mut first = true;
        for word in words {
            if !first {
                self.text.push(' ');
            }
            first = false;
            self.text.push_str(word);
        }
        if text.ends_with(|c: char| c.is_ascii_whitespace()) {
            self.owe(Break::Space);
        }
    }

    /// Where the open heading's text starts: at its first text.
    fn mark_heading(&mut self) {
        if let Some((_, start)) = &mut self.open {
            if *start == usize::MAX {
                *start = self.text.len();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ground::Source;

    #[test]
    fn scripts_styles_navigation_and_banners_are_left_out() {
        let page = read(
            "<!DOCTYPE html><html><head><title>T</title><style>p{color:red}</style></head>\
             <body><header>Site banner</header><nav><a href=/>Home</a></nav>\
             <article><header><h1>Quarterly report</h1></header>\
             <p>Revenue rose&nbsp;to 4&#8239;M&euro; &lt;est.&gt;</p>\
             <script>document.write('no')</script><noscript>enable JS</noscript>\
             <aside>Related links</aside><p hidden>secret</p><p>Costs fell.</p></article>\
             <footer>(c) 2026</footer></body></html>",
        )
        .unwrap();
        assert_eq!(
            page.text(),
            "Quarterly report\n\nRevenue rose\u{a0}to 4\u{202f}M€ <est.>\n\nCosts fell."
        );
        assert_eq!(page.headings().len(), 1);
        assert_eq!(page.headings()[0].text, "Quarterly report");
        assert_eq!(page.headings()[0].level, 1);
    }

    #[test]
    fn main_is_preferred_and_blocks_are_lines() {
        let page = read(
            "<html><body><div>Menu</div><main><h2>A</h2>one<br>two<ul><li>x</li><li>y</li></ul>\
             <table><tr><td>k</td><td>v</td></tr></table><pre>  keep\n  this</pre></main></body></html>",
        )
        .unwrap();
        assert_eq!(
            page.text(),
            "A\n\none\ntwo\n\nx\ny\n\nk\tv\n\n  keep\n  this"
        );
    }

    #[test]
    fn spans_name_the_nearest_heading_above_them() {
        let page = read(
            "<h1>Invoice</h1><p>From Acme.</p><h2>Lines</h2><p>Two hammers, 20 EUR.</p>\
             <h2>Total</h2><p>Due: 20 EUR</p>",
        )
        .unwrap();
        let source = Source::new(page.text());
        let heading = |value: &str| {
            let span = source.span("/v".into(), value);
            if span.kind.is_found() {
                assert_eq!(&page.text()[span.bytes.clone()], value);
            }
            page.heading_of(&span).map(|h| h.text.clone())
        };
        assert_eq!(heading("Acme").as_deref(), Some("Invoice"));
        assert_eq!(heading("Two hammers").as_deref(), Some("Lines"));
        assert_eq!(heading("Due: 20 EUR").as_deref(), Some("Total"));
        assert_eq!(heading("absent words entirely"), None);
        let first = read("<p>Before any heading.</p><h3>Later</h3>").unwrap();
        assert!(first.heading_at(0).is_none());
    }

    #[test]
    fn pages_are_detected_by_their_start() {
        assert!(is_html(b"\xef\xbb\xbf  <!DOCTYPE HTML>\n<html>"));
        assert!(is_html(b"<!-- saved page -->\n<html lang=en>"));
        assert!(is_html(b"<HTML>"));
        assert!(!is_html(b"<p>a fragment</p>"));
        assert!(!is_html(b"plain text <html>"));
        assert!(!is_html(b"<!-- unterminated"));
    }

    #[test]
    fn an_empty_page_is_an_error_and_deep_nesting_is_fine() {
        assert!(matches!(
            read("<html><script>x</script><nav>menu</nav></html>"),
            Err(HtmlError::NoText)
        ));
        let deep = format!("{}deep{}", "<div>".repeat(5_000), "</div>".repeat(5_000));
        assert_eq!(read(&deep).unwrap().text(), "deep");
    }
}

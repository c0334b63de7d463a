//! The text layer of a PDF, page by page, read with the pure-Rust `pdf-extract` crate (on `lopdf`):
//! [`read`] and [`read_with`] give [`Pages`], or a [`PdfError`] that says what is wrong with the file.
//!
//! The file is checked against [`PdfLimits`] before and while it is read (its size, its page count,
//! the text it yields), so a huge file is an error naming the limit rather than unbounded memory. The
//! parser can panic on malformed files: each step runs under `catch_unwind`, and a panic becomes
//! [`PdfError::Malformed`] (or, on one page, an unreadable page; see [`Pages::unreadable`]). The
//! panic's message still reaches the process's panic hook (standard error by default).
//!
//! A PDF whose pages yield no text (a scan: images of pages) is [`PdfError::NoText`]: its content
//! must be read by a backend that reads images.

use super::pages::Pages;
use pdf_extract::content::Content;
use pdf_extract::{output_doc_page, Document, Object, ObjectId, PlainTextOutput};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// The bounds a PDF is read within.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct PdfLimits {
    /// The largest file, in bytes.
    pub max_bytes: usize,
    /// The most pages.
    pub max_pages: usize,
    /// The most text, in bytes, all pages together.
    pub max_text_bytes: usize,
}

impl Default for PdfLimits {
    /// 256 MiB of file, 5,000 pages, 64 MiB of text.
    fn default() -> Self {
        PdfLimits {
            max_bytes: 256 << 20,
            max_pages: 5_000,
            max_text_bytes: 64 << 20,
        }
    }
}

impl PdfLimits {
    /// At most `bytes` bytes of file.
    pub fn max_bytes(mut self, bytes: usize) -> Self {
        self.max_bytes = bytes;
        self
    }

    /// At most `pages` pages.
    pub fn max_pages(mut self, pages: usize) -> Self {
        self.max_pages = pages;
        self
    }

    /// At most `bytes` bytes of text.
    pub fn max_text_bytes(mut self, bytes: usize) -> Self {
        self.max_text_bytes = bytes;
        self
    }
}

/// Why a PDF's text could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PdfError {
    /// The bytes do not start as a PDF does (`%PDF-` in the first 1,024 bytes).
    #[error("not a PDF (no `%PDF-` header in its first 1024 bytes)")]
    NotPdf,
    /// The file is larger than [`PdfLimits::max_bytes`].
    #[error("the PDF has {bytes} bytes, more than the limit of {limit} (PdfLimits::max_bytes)")]
    TooLarge {
        /// The file's size.
        bytes: usize,
        /// The limit.
        limit: usize,
    },
    /// The document has more pages than [`PdfLimits::max_pages`].
    #[error("the PDF has {pages} pages, more than the limit of {limit} (PdfLimits::max_pages)")]
    TooManyPages {
        /// Its pages.
        pages: usize,
        /// The limit.
        limit: usize,
    },
    /// The text read so far is larger than [`PdfLimits::max_text_bytes`].
    #[error(
        "the PDF's text passes the limit of {limit} bytes at page {page} (PdfLimits::max_text_bytes)"
    )]
    TooMuchText {
        /// The page where the limit was passed, from 1.
        page: usize,
        /// The limit.
        limit: usize,
    },
    /// The document is encrypted with a password (an empty user password is tried and works).
    #[error("the PDF is encrypted with a password; decrypt it first (e.g. `qpdf --decrypt`)")]
    Encrypted,
    /// The file could not be parsed.
    #[error("the PDF is malformed: {reason}")]
    Malformed {
        /// What the parser said.
        reason: String,
    },
    /// No page has any text: a scanned document, or pages drawn as images.
    #[error(
        "the PDF's {pages} page(s) have no text layer (a scan?): send it to a backend that reads \
         images or PDFs instead, or run it through OCR first"
    )]
    NoText {
        /// Its pages.
        pages: usize,
    },
}

/// The text of each page of the PDF `bytes`, within the default [`PdfLimits`].
///
/// ```no_run
/// let bytes = std::fs::read("report.pdf")?;
/// let pages = llm_extract::document::pdf::read(&bytes)?;
/// println!("{} pages, {} bytes of text", pages.len(), pages.text().len());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn read(bytes: &[u8]) -> Result<Pages, PdfError> {
    read_with(bytes, &PdfLimits::default())
}

/// The text of each page of the PDF `bytes`, within `limits`. A page the parser fails on (or panics
/// on) is empty and listed in [`Pages::unreadable`]; when every page fails, the PDF is
/// [`PdfError::Malformed`]; when no page has text, [`PdfError::NoText`].
pub fn read_with(bytes: &[u8], limits: &PdfLimits) -> Result<Pages, PdfError> {
    if bytes.len() > limits.max_bytes {
        return Err(PdfError::TooLarge {
            bytes: bytes.len(),
            limit: limits.max_bytes,
        });
    }
    if !is_pdf(bytes) {
        return Err(PdfError::NotPdf);
    }
    let mut document = guarded(|| Document::load_mem(bytes).map_err(malformed))?;
    if document.is_encrypted() {
        // Many PDFs are encrypted with an empty user password (to set permissions): they open.
        guarded(|| document.decrypt("").map_err(|_| PdfError::Encrypted))?;
    }
    guarded(|| {
        drop_images(&mut document);
        Ok(())
    })?;
    let numbers: Vec<(u32, ObjectId)> = guarded(|| Ok(document.get_pages().into_iter().collect()))?;
    if numbers.len() > limits.max_pages {
        return Err(PdfError::TooManyPages {
            pages: numbers.len(),
            limit: limits.max_pages,
        });
    }
    if numbers.is_empty() {
        return Err(malformed("it has no pages"));
    }
    let mut texts = Vec::with_capacity(numbers.len());
    let mut unreadable = Vec::new();
    let mut total = 0;
    for (index, (number, id)) in numbers.iter().enumerate() {
        let page = index + 1;
        // A page that shows no text itself (a scanned image, say) and that the parser fails on has no
        // text rather than an unreadable one: the parser reads every drawn object as content.
        let shows_text = guarded(|| Ok(shows_text(&document, *id))).unwrap_or(true);
        let text = guarded(|| {
            let mut text = String::new();
            output_doc_page(&document, &mut PlainTextOutput::new(&mut text), *number)
                .map_err(malformed)?;
            Ok(text)
        });
        match text {
            Ok(text) => {
                let text = tidy(&text);
                total += text.len();
                if total > limits.max_text_bytes {
                    return Err(PdfError::TooMuchText {
                        page,
                        limit: limits.max_text_bytes,
                    });
                }
                texts.push(text);
            }
            Err(_) if !shows_text => texts.push(String::new()),
            Err(e) => {
                unreadable.push((page, e.to_string()));
                texts.push(String::new());
            }
        }
    }
    if unreadable.len() == texts.len() {
        let reason = unreadable
            .first()
            .map_or_else(String::new, |(_, e)| e.clone());
        return Err(malformed(format!("no page could be read ({reason})")));
    }
    if texts.iter().all(|text| text.trim().is_empty()) {
        return Err(PdfError::NoText { pages: texts.len() });
    }
    Ok(Pages::from_pages(texts).with_unreadable(unreadable))
}

/// Empties every image's data: images carry no text, and the parser reads every object a page draws
/// (`Do`) as content, which fails on an image's pixels. Also frees their memory early.
fn drop_images(document: &mut Document) {
    for object in document.objects.values_mut() {
        if let Object::Stream(stream) = object {
            let image =
                matches!(stream.dict.get(b"Subtype"), Ok(Object::Name(name)) if name == b"Image");
            if image {
                stream.dict.remove(b"Filter");
                stream.dict.remove(b"DecodeParms");
                stream.set_content(Vec::new());
            }
        }
    }
}

/// Whether the content of page `id` itself has a text-showing operator (`Tj`, `TJ`, `'`, `"`):
/// `false` for a page that only draws an image (a scan). A content that cannot be decoded counts as
/// showing text (the parser then says what is wrong).
fn shows_text(document: &Document, id: ObjectId) -> bool {
    let Ok(content) = document.get_page_content(id) else {
        return true;
    };
    let Ok(content) = Content::decode(&content) else {
        return true;
    };
    content
        .operations
        .iter()
        .any(|op| matches!(op.operator.as_str(), "Tj" | "TJ" | "'" | "\""))
}

/// Whether `bytes` starts as a PDF does: `%PDF-` within the first 1,024 bytes (readers allow junk
/// before the header).
pub fn is_pdf(bytes: &[u8]) -> bool {
    let head = bytes.get(..bytes.len().min(1024)).unwrap_or_default();
    memchr::memmem::find(head, b"%PDF-").is_some()
}

/// A page's text as the parser wrote it, tidied: line ends as `\n`, no space at the end of a line,
/// no blank lines at its start or end, at most one blank line in a row, no control characters but
/// line ends and tabs.
fn tidy(raw: &str) -> String {
    let mut text = String::with_capacity(raw.len());
    let mut blank = 0;
    for line in raw.split(['\n', '\r']) {
        let line: String = line
            .trim_end()
            .chars()
            .map(|c| if c.is_control() && c != '\t' { ' ' } else { c })
            .collect();
        if line.trim().is_empty() {
            blank += 1;
            continue;
        }
        if !text.is_empty() {
            text.push_str(if blank > 0 { "\n\n" } else { "\n" });
        }
        blank = 0;
        text.push_str(&line);
    }
    text
}

/// `step`, with a panic turned into [`PdfError::Malformed`].
fn guarded<T>(step: impl FnOnce() -> Result<T, PdfError>) -> Result<T, PdfError> {
    catch_unwind(AssertUnwindSafe(step)).unwrap_or_else(|panic| {
        let reason = panic
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "the parser failed".to_owned());
        Err(malformed(format!("the parser panicked: {reason}")))
    })
}

fn malformed(reason: impl ToString) -> PdfError {
    PdfError::Malformed {
        reason: reason.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tidy_keeps_one_blank_line_and_drops_controls() {
        assert_eq!(
            tidy("\n\n  Title  \r\n\n\n\nbody\u{0}text \nmore\n\n"),
            "  Title\n\nbody text\nmore"
        );
    }

    #[test]
    fn limits_and_headers_are_checked_before_parsing() {
        let limits = PdfLimits::default().max_bytes(10);
        assert!(matches!(
            read_with(b"%PDF-1.4 and more than ten bytes", &limits),
            Err(PdfError::TooLarge {
                bytes: 32,
                limit: 10
            })
        ));
        assert!(matches!(
            read(b"<html>not a pdf</html>"),
            Err(PdfError::NotPdf)
        ));
        assert!(matches!(read(b""), Err(PdfError::NotPdf)));
        assert!(matches!(
            read(b"%PDF-1.4\n garbage"),
            Err(PdfError::Malformed { .. })
        ));
    }
}

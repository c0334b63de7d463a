//! The document of `llm-extract doc`, streamed rather than read whole: a file, or standard input
//! copied to an anonymous temporary file (standard input can be read only once, and the document is
//! read several times: once here to check it is UTF-8 and hash it for resuming, then by the library
//! once per pass to count its chunks and once per pass to extract them). The temporary file is removed
//! when the command ends, whatever the outcome; it takes as much disk as the document.
//!
//! A PDF (a `.pdf` file, or bytes that start as one) is read page by page to its text layer first
//! (`llm_extract::document::pdf`), and that text, with its pages joined by a page break, is the
//! document: the pages are kept ([`DocumentFile::pages`]) to name the page of each span. A web page
//! (a `.html` or `.htm` file, or text that starts with `<!doctype html` or `<html`) is read to its main
//! text the same way, its headings kept ([`DocumentFile::html`]) to name the nearest heading of each span.

use crate::error::CliError;
use llm_extract::document::html::{self, Html};
use llm_extract::document::{pdf, Pages};
use llm_extract::document::{ReadError, TextReader};
use llm_extract::stable_hash::StableHasher;
use std::fs::File;
use std::io::{Read, Seek, Write};
use std::path::Path;

/// The document, checked, and its hash.
pub struct DocumentFile {
    /// Read from its start by whoever uses it.
    pub file: File,
    /// What to call it in messages: its path, or "standard input".
    pub what: String,
    /// A hash of its bytes and its length (what a resumed run is keyed by), the same in every build.
    pub hash: [u8; 16],
    /// The pages of a document read page by page (a PDF); `None` for a text.
    pub pages: Option<Pages>,
    /// The headings of a web page (its main text is the document); `None` for a text or a PDF.
    pub html: Option<Html>,
}

impl DocumentFile {
    /// The file at `path`, or standard input copied to a temporary file; read once through to check
    /// that it is UTF-8 (an error names the offset of the first invalid byte) and to hash it.
    pub fn open(path: Option<&Path>) -> Result<Self, CliError> {
        let (file, what) = match path {
            Some(path) => {
                let file = File::open(path)
                    .map_err(|e| CliError::usage(format!("cannot read {}: {e}", path.display())))?;
                (file, path.display().to_string())
            }
            None => (spool(std::io::stdin().lock())?, "standard input".to_owned()),
        };
        let (file, pages) = read_pages(file, path, &what)?;
        let (file, html) = match pages {
            Some(_) => (file, None),
            None => read_html(file, path, &what)?,
        };
        let mut document = DocumentFile {
            file,
            what,
            hash: [0; 16],
            pages,
            html,
        };
        document.hash = document.digest()?;
        Ok(document)
    }

    /// The error the command reports for a document that cannot be read.
    pub fn error(&self, error: ReadError) -> CliError {
        match error {
            ReadError::NotUtf8 { offset } => CliError::usage(format!(
                "{} is not UTF-8 text (invalid byte at offset {offset}); convert it first, e.g. with iconv",
                self.what
            )),
            other => CliError::usage(format!("cannot read {}: {other}", self.what)),
        }
    }

    /// The whole text, for what needs it all (the review page).
    pub fn read_all(&mut self) -> Result<String, CliError> {
        let mut text = String::new();
        self.file
            .rewind()
            .and_then(|()| self.file.read_to_string(&mut text))
            .map_err(|e| CliError::usage(format!("cannot read {} again: {e}", self.what)))?;
        Ok(text)
    }

    /// Reads the document through: its hash, or the first reason it is not UTF-8 text.
    fn digest(&mut self) -> Result<[u8; 16], CliError> {
        self.file
            .rewind()
            .map_err(|e| CliError::usage(format!("cannot read {}: {e}", self.what)))?;
        let mut reader = TextReader::new(&mut self.file);
        let mut hasher = StableHasher::new();
        let mut piece = String::new();
        let mut len: u64 = 0;
        loop {
            piece.clear();
            match reader.read_into(&mut piece) {
                Ok(0) => break,
                Ok(read) => {
                    hasher.write(piece.as_bytes());
                    len += read as u64;
                }
                Err(e) => return Err(self.error(e)),
            }
        }
        let mut hash = [0; 16];
        hash[..8].copy_from_slice(&hasher.finish().to_le_bytes());
        hash[8..].copy_from_slice(&len.to_le_bytes());
        Ok(hash)
    }
}

/// A PDF's pages and their text in a temporary file, or the file as it is: a PDF is a file named
/// `*.pdf` or whose first bytes hold `%PDF-`.
fn read_pages(
    file: File,
    path: Option<&Path>,
    what: &str,
) -> Result<(File, Option<Pages>), CliError> {
    let cannot = |e: std::io::Error| CliError::usage(format!("cannot read {what}: {e}"));
    let limits = pdf::PdfLimits::default();
    let bytes = match read_whole_if(
        file,
        path,
        what,
        &["pdf"],
        pdf::is_pdf,
        limits.max_bytes,
        "PDF",
    )? {
        Whole::Other(file) => return Ok((file, None)),
        Whole::Read(bytes) => bytes,
    };
    // The reader turns a panic of the PDF parser into an error; the panic's message would still reach
    // the default hook and print as a crash. Nothing else runs yet, so the hook is swapped for the read.
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let pages = pdf::read_with(&bytes, &limits);
    std::panic::set_hook(hook);
    let pages = pages.map_err(|e| CliError::usage(format!("{what}: {e}")))?;
    for (page, reason) in pages.unreadable() {
        eprintln!("llm-extract: warning: {what}: page {page} could not be read ({reason}); it is left out");
    }
    let mut text = spool(pages.text().as_bytes())?;
    text.flush().map_err(cannot)?;
    text.rewind().map_err(cannot)?;
    Ok((text, Some(pages)))
}

/// A web page's main text in a temporary file and its headings, or the file as it is.
fn read_html(
    file: File,
    path: Option<&Path>,
    what: &str,
) -> Result<(File, Option<Html>), CliError> {
    let cannot = |e: std::io::Error| CliError::usage(format!("cannot read {what}: {e}"));
    let bytes = match read_whole_if(
        file,
        path,
        what,
        &["html", "htm"],
        html::is_html,
        html::MAX_HTML_BYTES,
        "HTML page",
    )? {
        Whole::Other(file) => return Ok((file, None)),
        Whole::Read(bytes) => bytes,
    };
    let page = String::from_utf8(bytes).map_err(|e| {
        CliError::usage(format!(
            "{what} is not UTF-8 HTML (invalid byte at offset {}); convert it first, e.g. with iconv",
            e.utf8_error().valid_up_to()
        ))
    })?;
    let read = html::read(&page).map_err(|e| CliError::usage(format!("{what}: {e}")))?;
    let mut text = spool(read.text().as_bytes())?;
    text.flush().map_err(cannot)?;
    text.rewind().map_err(cannot)?;
    Ok((text, Some(read)))
}

/// A file of one kind read whole, or a file of another kind as it is.
enum Whole {
    /// Not of the kind asked for: the file, rewound.
    Other(File),
    /// Of the kind: its bytes.
    Read(Vec<u8>),
}

/// Reads `file` whole when it is of one kind (`kind` in messages): named with one of `extensions`, or
/// whose first 1,024 bytes `sniff` recognises. Its size is checked against `max_bytes` before it is
/// read, so a huge file is refused without taking its size in memory.
fn read_whole_if(
    mut file: File,
    path: Option<&Path>,
    what: &str,
    extensions: &[&str],
    sniff: fn(&[u8]) -> bool,
    max_bytes: usize,
    kind: &str,
) -> Result<Whole, CliError> {
    let cannot = |e: std::io::Error| CliError::usage(format!("cannot read {what}: {e}"));
    let mut head = Vec::with_capacity(1024);
    file.rewind().map_err(cannot)?;
    (&mut file)
        .take(1024)
        .read_to_end(&mut head)
        .map_err(cannot)?;
    file.rewind().map_err(cannot)?;
    let named = path
        .and_then(|p| p.extension())
        .is_some_and(|ext| extensions.iter().any(|e| ext.eq_ignore_ascii_case(e)));
    if !named && !sniff(&head) {
        return Ok(Whole::Other(file));
    }
    let size = file.metadata().map_err(cannot)?.len();
    if size > max_bytes as u64 {
        return Err(CliError::usage(format!(
            "{what}: the {kind} has {size} bytes, more than the limit of {max_bytes}"
        )));
    }
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes).map_err(cannot)?;
    Ok(Whole::Read(bytes))
}

/// `input` copied to an anonymous temporary file (removed when closed).
fn spool(mut input: impl Read) -> Result<File, CliError> {
    let mut file = tempfile::tempfile().map_err(|e| {
        CliError::usage(format!(
            "cannot make a temporary file to hold standard input: {e}"
        ))
    })?;
    std::io::copy(&mut input, &mut file)
        .map_err(|e| CliError::usage(format!("cannot read standard input: {e}")))?;
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_document_is_hashed_by_content_and_bad_utf8_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let open = |name: &str, bytes: &[u8]| {
            let path = dir.path().join(name);
            std::fs::write(&path, bytes).unwrap();
            DocumentFile::open(Some(&path))
        };
        let a = open("a", "Holmes.\r\n語".repeat(20_000).as_bytes()).unwrap();
        let b = open("b", "Holmes.\r\n語".repeat(20_000).as_bytes()).unwrap();
        let c = open("c", "Holmes.\r\n語".repeat(20_001).as_bytes()).unwrap();
        assert_eq!(a.hash, b.hash);
        assert_ne!(a.hash, c.hash);
        // The bytes' stable hash, then the length: what names a resume directory in every build.
        let pinned = open("p", b"Holmes.").unwrap().hash;
        assert_eq!(
            pinned[..8],
            llm_extract::stable_hash::hash(b"Holmes.").to_le_bytes()
        );
        assert_eq!(pinned[8..], 7u64.to_le_bytes());
        let mut bad = "語".repeat(30_000).into_bytes();
        bad.truncate(bad.len() - 1);
        let error = open("bad", &bad).err().unwrap();
        assert!(
            error.message.contains("invalid byte at offset 89997"),
            "{}",
            error.message
        );
        let mut spooled = spool(&b"from a pipe"[..]).unwrap();
        let mut text = String::new();
        spooled.rewind().unwrap();
        spooled.read_to_string(&mut text).unwrap();
        assert_eq!(text, "from a pipe");
    }
}

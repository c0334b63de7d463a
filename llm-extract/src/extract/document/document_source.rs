//! [`DocumentSource`]: where a document extraction reads its document from (a string, or a reader), the
//! chunks an earlier run finished, and who is told as each chunk finishes.

use crate::extract::document::chunk_report::{ChunkReport, DoneChunk};
use crate::ground::Grounded;
use serde_json::Value;
use std::borrow::Cow;
use std::io::{Read, Seek};

/// A reader a document can be read from more than once.
pub(crate) trait ReadSeek: Read + Seek {}

impl<R: Read + Seek> ReadSeek for R {}

/// What [`DocumentSource::on_chunk`] calls.
pub(crate) type OnChunk<'a> =
    Box<dyn FnMut(&ChunkReport, &[Grounded<Value>], usize, usize) + Send + 'a>;

/// Where the document is.
pub(crate) enum Text<'a> {
    /// Held in memory.
    Memory(Cow<'a, str>),
    /// Read from the start, once per pass.
    Reader(Box<dyn ReadSeek + Send + 'a>),
}

/// The document of [`Extractor::extract_document`](crate::extract::Extractor::extract_document) and its stream:
/// a text held in memory (any `&str` or `String` converts) or one read from a [`Read`] + [`Seek`]
/// ([`DocumentSource::reader`]), with what an earlier run finished ([`DocumentSource::resume`]) and a
/// callback as each chunk finishes ([`DocumentSource::on_chunk`]).
///
/// ```
/// use llm_extract::extract::{DocumentSource, DoneChunk, Extractor};
/// use llm_extract::llm::{from_fn, ChatResponse};
/// use llm_extract::Extract;
/// use std::sync::Mutex;
///
/// #[derive(Extract, serde::Deserialize, Debug, PartialEq)]
/// struct Person {
///     #[extract(grounded, key)]
///     name: String,
/// }
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let llm = from_fn(|_| async { Ok(ChatResponse::new(r#"{"items": [{"name": "Holmes"}]}"#)) });
/// let book = "Holmes smoked his pipe.\n\n".repeat(100);
/// let extractor = Extractor::new(llm).chunk_bytes(500);
///
/// // The first run records each finished chunk (a real program keeps them on disk).
/// let finished = Mutex::new(Vec::new());
/// let source = DocumentSource::reader(std::io::Cursor::new(book.as_bytes()))
///     .on_chunk(|chunk, items, _done, _total| {
///         finished.lock().unwrap().push(DoneChunk::new(chunk, items));
///     });
/// let first = extractor.extract_document::<Person>(source).await?;
///
/// // The next run asks none of them again.
/// let done = finished.into_inner().unwrap();
/// let again = extractor
///     .extract_document::<Person>(DocumentSource::from(&book).resume(done))
///     .await?;
/// assert!(again.chunks.iter().all(|chunk| chunk.resumed));
/// assert_eq!(again.items, first.items);
/// # Ok::<(), llm_extract::document::ReadError>(())
/// # }).unwrap();
/// ```
pub struct DocumentSource<'a> {
    pub(crate) text: Text<'a>,
    pub(crate) done: Vec<DoneChunk>,
    pub(crate) on_chunk: Option<OnChunk<'a>>,
}

impl<'a> DocumentSource<'a> {
    /// A document held in memory.
    pub fn text(text: impl Into<Cow<'a, str>>) -> Self {
        DocumentSource::new(Text::Memory(text.into()))
    }

    /// A document read from `reader` (a [`std::fs::File`], a [`std::io::Cursor`]) instead of held in
    /// memory: the same chunks, items and spans as the whole text gives, in memory bounded by the chunk
    /// size. The document is read from its start several times: once per pass to count its chunks,
    /// once per pass to extract them, and with [`Extractor::chunk_tokens`](crate::extract::Extractor::chunk_tokens)
    /// on a backend that counts tokens once per fitting round. Reads block the task that polls the
    /// extraction (briefly, for a file): copy a slow source (a pipe, a socket) to a file first. The
    /// extraction's error is the document's: not UTF-8 (at the offset of the first invalid byte), or
    /// not readable.
    pub fn reader(reader: impl Read + Seek + Send + 'a) -> Self {
        DocumentSource::new(Text::Reader(Box::new(reader)))
    }

    fn new(text: Text<'a>) -> Self {
        DocumentSource {
            text,
            done: Vec::new(),
            on_chunk: None,
        }
    }

    /// Resumes an earlier run: the chunks in `done` (same pass, same byte range; the same document split
    /// with the same settings gives the same chunks) are not asked again, their items are taken as they
    /// were and their [`ChunkReport::resumed`] is set.
    pub fn resume(mut self, done: Vec<DoneChunk>) -> Self {
        self.done = done;
        self
    }

    /// Calls `on_chunk(chunk, items, done, total)` as each chunk finishes (in the order they finish):
    /// its report, its items before the merge (spans at document offsets), how many chunks have
    /// finished and how many there are. What a progress bar needs, and what a caller records
    /// ([`DoneChunk::new`]) to [resume](DocumentSource::resume) a later run.
    pub fn on_chunk(
        mut self,
        on_chunk: impl FnMut(&ChunkReport, &[Grounded<Value>], usize, usize) + Send + 'a,
    ) -> Self {
        self.on_chunk = Some(Box::new(on_chunk));
        self
    }
}

impl std::fmt::Debug for DocumentSource<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let text = match &self.text {
            Text::Memory(text) => format!("{} bytes in memory", text.len()),
            Text::Reader(_) => "a reader".to_owned(),
        };
        f.debug_struct("DocumentSource")
            .field("text", &text)
            .field("done", &self.done.len())
            .field("on_chunk", &self.on_chunk.is_some())
            .finish()
    }
}

impl<'a> From<&'a str> for DocumentSource<'a> {
    fn from(text: &'a str) -> Self {
        DocumentSource::text(text)
    }
}

impl<'a> From<&'a String> for DocumentSource<'a> {
    fn from(text: &'a String) -> Self {
        DocumentSource::text(text.as_str())
    }
}

impl From<String> for DocumentSource<'_> {
    fn from(text: String) -> Self {
        DocumentSource::text(text)
    }
}

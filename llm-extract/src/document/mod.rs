//! Documents as users have them, read to text for extraction: `pdf` reads a PDF's text layer page
//! by page (feature `pdf`) into [`Pages`], whose [`Pages::locate`] names the page of each grounded
//! [`Span`](crate::ground::Span) and its offsets within that page's text ([`PageSpan`]); `html`
//! reads a web page's main text (feature `html`), keeping the nearest heading of each span;
//! `render` draws a PDF's pages as PNG images (feature `pdf-render`), for a scan sent to a backend
//! that reads images. A long text is split into chunks that fit a model's context by [`chunk`]
//! ([`Chunker`]: at page breaks, paragraphs, sentences), and [`read`] gives the same chunks from a
//! text read piece by piece ([`ChunkReader`], [`TextReader`]) in memory bounded by the chunk size.
//!
//! This layer sits above [`ground`](crate::ground) (it maps its spans) and below the backends and
//! the extraction loop, which take the text it produces like any other
//! ([`Extractor::extract_pages`](crate::Extractor::extract_pages) keeps the pages).

pub mod chunk;
#[cfg(feature = "html")]
#[cfg_attr(docsrs, doc(cfg(feature = "html")))]
pub mod html;
mod pages;
#[cfg(feature = "pdf")]
#[cfg_attr(docsrs, doc(cfg(feature = "pdf")))]
pub mod pdf;
pub mod read;
#[cfg(feature = "pdf-render")]
#[cfg_attr(docsrs, doc(cfg(feature = "pdf-render")))]
pub mod render;

pub use chunk::{Chunk, Chunker, MIN_CHUNK_BYTES};
pub use pages::{PageSpan, Pages, PAGE_BREAK};
pub use read::{ChunkBuf, ChunkReader, ReadError, TextReader};

//! Reading a text piece by piece: UTF-8 decoded across reads, and split into the same chunks as the
//! whole text, keeping only the current chunk, its overlap and one read ahead in memory.
//!
//! [`TextReader`] decodes what a [`Read`] gives, a char cut between two reads joined again, and says
//! at which byte of the text an invalid sequence starts (the offset [`std::str::from_utf8`] reports
//! for the whole text). [`ChunkReader`] feeds it to the step of [`Chunker::split`] (one function for
//! both), with byte and char offsets kept by running counters: the chunks are
//! equal to those of the whole text (tested with random texts and read sizes).

use super::chunk::{Chunk, Chunker};
use std::io::Read;
use std::ops::Range;

/// How many bytes one read asks for.
const READ_BYTES: usize = 64 * 1024;

/// Why a text could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReadError {
    /// The text is not UTF-8: `offset` is the byte where the first invalid sequence starts (a
    /// sequence cut by the end of the text counts as invalid).
    #[error("the text is not UTF-8 (invalid byte at offset {offset}); convert it first, e.g. with iconv")]
    NotUtf8 {
        /// The first invalid byte.
        offset: usize,
    },
    /// Reading failed.
    #[error("cannot read the text at byte {offset}: {source}")]
    Io {
        /// How many bytes had been read.
        offset: usize,
        /// What the reader said.
        #[source]
        source: std::io::Error,
    },
}

/// Decodes a [`Read`] as UTF-8, piece by piece.
///
/// ```
/// use llm_extract::document::TextReader;
///
/// let mut reader = TextReader::new("naïve café".as_bytes());
/// let mut text = String::new();
/// while reader.read_into(&mut text)? > 0 {}
/// assert_eq!(text, "naïve café");
///
/// let mut bad = TextReader::new(&b"ab\xffcd"[..]);
/// let error = bad.read_into(&mut String::new()).unwrap_err();
/// assert_eq!(error.to_string(), "the text is not UTF-8 (invalid byte at offset 2); convert it first, e.g. with iconv");
/// # Ok::<(), llm_extract::document::ReadError>(())
/// ```
#[derive(Debug)]
pub struct TextReader<R> {
    inner: R,
    /// Read buffer; its first `pending` bytes are the start of a char the last read cut.
    buffer: Vec<u8>,
    pending: usize,
    /// Bytes decoded so far.
    offset: usize,
}

impl<R: Read> TextReader<R> {
    /// A reader of the text `inner` gives.
    pub fn new(inner: R) -> Self {
        TextReader {
            inner,
            buffer: vec![0; READ_BYTES + 4],
            pending: 0,
            offset: 0,
        }
    }

    /// Reads once and appends what it decoded to `text`: how many bytes that was, `0` at the end of
    /// the text. A read may decode nothing but still not be the last (a char cut in two).
    pub fn read_into(&mut self, text: &mut String) -> Result<usize, ReadError> {
        loop {
            let free = self
                .buffer
                .get_mut(self.pending..self.pending + READ_BYTES)
                .unwrap_or_default();
            let read = match self.inner.read(free) {
                Ok(read) => read,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(source) => {
                    return Err(ReadError::Io {
                        offset: self.offset + self.pending,
                        source,
                    })
                }
            };
            if read == 0 {
                return match self.pending {
                    0 => Ok(0),
                    _ => Err(ReadError::NotUtf8 {
                        offset: self.offset,
                    }),
                };
            }
            let bytes = self.buffer.get(..self.pending + read).unwrap_or_default();
            let valid = match std::str::from_utf8(bytes) {
                Ok(all) => all.len(),
                Err(e) if e.error_len().is_some() => {
                    return Err(ReadError::NotUtf8 {
                        offset: self.offset + e.valid_up_to(),
                    })
                }
                Err(e) => e.valid_up_to(),
            };
            let decoded = bytes
                .get(..valid)
                .and_then(|b| std::str::from_utf8(b).ok())
                .unwrap_or_default();
            text.push_str(decoded);
            // The cut char's first bytes (at most 3) wait for the next read.
            let end = self.pending + read;
            self.buffer.copy_within(valid..end, 0);
            self.pending = end - valid;
            self.offset += valid;
            if valid > 0 {
                return Ok(valid);
            }
        }
    }

    /// The reader back.
    pub fn into_inner(self) -> R {
        self.inner
    }
}

/// A chunk that owns its text: what [`ChunkReader`] yields.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ChunkBuf {
    /// Its position among the chunks, from 0.
    pub index: usize,
    /// The chunk's text.
    pub text: String,
    /// Its byte range in the whole text.
    pub bytes: Range<usize>,
    /// Its char range in the whole text.
    pub chars: Range<usize>,
}

impl ChunkBuf {
    /// The chunk, borrowed.
    pub fn as_chunk(&self) -> Chunk<'_> {
        Chunk {
            index: self.index,
            text: &self.text,
            bytes: self.bytes.clone(),
            chars: self.chars.clone(),
        }
    }
}

impl From<Chunk<'_>> for ChunkBuf {
    fn from(chunk: Chunk<'_>) -> Self {
        ChunkBuf {
            index: chunk.index,
            text: chunk.text.to_owned(),
            bytes: chunk.bytes,
            chars: chunk.chars,
        }
    }
}

/// The chunks of a text read piece by piece, equal to what [`Chunker::split`] makes of the whole text;
/// in memory at any time: the current chunk, what follows it up to [`Chunker::max_bytes`] and one read
/// (64 KiB). After an error it yields nothing more.
///
/// ```
/// use llm_extract::document::{ChunkReader, Chunker};
///
/// let text = "First paragraph. It has two sentences.\n\nSecond paragraph, a little longer than that.";
/// let chunker = Chunker::new(60).overlap(0);
/// let read: Vec<_> = ChunkReader::new(text.as_bytes(), chunker).collect::<Result<_, _>>()?;
/// let whole = chunker.split(text);
/// assert_eq!(read.len(), whole.len());
/// assert!(read.iter().zip(&whole).all(|(r, w)| r.as_chunk() == *w));
/// # Ok::<(), llm_extract::document::ReadError>(())
/// ```
#[derive(Debug)]
pub struct ChunkReader<R> {
    reader: TextReader<R>,
    chunker: Chunker,
    /// The text from byte `bytes` (char `chars`) of the whole text: the next chunk starts here.
    window: String,
    bytes: usize,
    chars: usize,
    index: usize,
    ended: bool,
    over: bool,
}

impl<R: Read> ChunkReader<R> {
    /// The chunks `chunker` cuts the text `reader` gives into.
    pub fn new(reader: R, chunker: Chunker) -> Self {
        ChunkReader {
            reader: TextReader::new(reader),
            chunker,
            window: String::new(),
            bytes: 0,
            chars: 0,
            index: 0,
            ended: false,
            over: false,
        }
    }

    /// The reader back.
    pub fn into_inner(self) -> R {
        self.reader.into_inner()
    }

    fn next_chunk(&mut self) -> Result<Option<ChunkBuf>, ReadError> {
        while !self.ended && self.window.len() < self.chunker.window() {
            self.ended = self.reader.read_into(&mut self.window)? == 0;
        }
        if self.window.is_empty() {
            return Ok(None);
        }
        let (end, next) = self.chunker.step(&self.window, self.index == 0);
        let text = self.window.get(..end).unwrap_or_default().to_owned();
        let len = text.chars().count();
        let chunk = ChunkBuf {
            index: self.index,
            bytes: self.bytes..self.bytes + end,
            chars: self.chars..self.chars + len,
            text,
        };
        self.index += 1;
        if end == self.window.len() {
            // The step only ends a chunk at the end of what it sees when that is the end of the text.
            self.window.clear();
        } else {
            self.chars += self.window.get(..next).map_or(0, |s| s.chars().count());
            self.bytes += next;
            self.window.drain(..next);
        }
        Ok(Some(chunk))
    }
}

impl<R: Read> Iterator for ChunkReader<R> {
    type Item = Result<ChunkBuf, ReadError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.over {
            return None;
        }
        let next = self.next_chunk().transpose();
        self.over = !matches!(next, Some(Ok(_)));
        next
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A reader that gives at most `step` bytes a read.
    struct Trickle<'a> {
        bytes: &'a [u8],
        step: usize,
    }

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = self.step.min(buf.len()).min(self.bytes.len());
            buf[..n].copy_from_slice(&self.bytes[..n]);
            self.bytes = &self.bytes[n..];
            Ok(n)
        }
    }

    fn read_chunks(text: &str, chunker: Chunker, step: usize) -> Vec<ChunkBuf> {
        let trickle = Trickle {
            bytes: text.as_bytes(),
            step,
        };
        ChunkReader::new(trickle, chunker)
            .collect::<Result<_, _>>()
            .unwrap()
    }

    fn whole_chunks(text: &str, chunker: Chunker) -> Vec<ChunkBuf> {
        chunker
            .split(text)
            .into_iter()
            .map(ChunkBuf::from)
            .collect()
    }

    /// Text made of words, sentence ends, CRLF and LF paragraph breaks, CJK, emoji and NUL bytes.
    fn text() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            Just("word ".to_owned()),
            Just("Holmes. ".to_owned()),
            Just("end!\r\n\r\n".to_owned()),
            Just("para\n \n".to_owned()),
            Just("語。".to_owned()),
            Just("é😀 ".to_owned()),
            Just("\0".to_owned()),
            Just("\r\n".to_owned()),
            "[a-z]{1,30}",
        ];
        proptest::collection::vec(piece, 0..400).prop_map(|pieces| pieces.concat())
    }

    proptest! {
        #[test]
        fn read_chunks_equal_whole_chunks(
            text in text(),
            max in 64usize..400,
            overlap in 0usize..100,
            first in proptest::option::of(0usize..400),
            step in 1usize..200,
        ) {
            let mut chunker = Chunker::new(max).overlap(overlap);
            if let Some(first) = first {
                chunker = chunker.first_chunk(first);
            }
            prop_assert_eq!(read_chunks(&text, chunker, step), whole_chunks(&text, chunker));
        }
    }

    #[test]
    fn a_large_text_read_in_odd_pieces_is_split_as_a_whole() {
        let text = "Sherlock Holmes smoked. Ça va? 語り。\r\n\r\n\0".repeat(5000);
        let chunker = Chunker::new(6000);
        assert_eq!(
            read_chunks(&text, chunker, 7777),
            whole_chunks(&text, chunker)
        );
        assert_eq!(
            read_chunks(&text, chunker, READ_BYTES * 3),
            whole_chunks(&text, chunker)
        );
    }

    #[test]
    fn invalid_utf8_is_reported_at_the_offset_of_the_whole_text() {
        for bytes in [
            &b"abc\xffdef"[..],
            b"abc\xe8\xaa",
            b"\xe8\xaa\x9e\xe8",
            b"ok\xc3\x28",
        ] {
            let expected = std::str::from_utf8(bytes).unwrap_err().valid_up_to();
            for step in 1..5 {
                let trickle = Trickle { bytes, step };
                let mut reader = TextReader::new(trickle);
                let mut text = String::new();
                let error = loop {
                    match reader.read_into(&mut text) {
                        Ok(0) => panic!("{bytes:?} read whole"),
                        Ok(_) => {}
                        Err(e) => break e,
                    }
                };
                assert!(
                    matches!(error, ReadError::NotUtf8 { offset } if offset == expected),
                    "{bytes:?} by {step}: {error}"
                );
            }
        }
        let chunks: Vec<_> = ChunkReader::new(&b"ab\xff"[..], Chunker::new(64)).collect();
        assert_eq!(chunks.len(), 1, "the error, then nothing");
        assert!(chunks[0].is_err());
    }

    #[test]
    fn empty_and_blank_texts() {
        assert!(read_chunks("", Chunker::new(100), 3).is_empty());
        assert_eq!(read_chunks("  \n ", Chunker::new(100), 1).len(), 1);
    }
}

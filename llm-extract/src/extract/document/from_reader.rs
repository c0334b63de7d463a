//! Long documents read from a file (any [`Read`] + [`Seek`], given as [`DocumentSource::reader`])
//! rather than held in memory: the same chunks, items and spans as [`Extractor::extract_document`] on
//! the whole text, with memory bounded by the chunk size rather than the document's.
//!
//! The document is read from the start several times: with [`Extractor::chunk_tokens`] on a backend
//! that counts tokens, once per fitting round of each pass (as the in-memory split tokenizes the whole
//! document per round); once per pass to count its chunks; once per pass to extract them. Each reading
//! keeps only a [`ChunkReader`]'s window (a chunk, what follows it up to the chunk size, one read
//! ahead), plus the chunks in flight ([`Extractor::concurrency`]). What grows with the document is what
//! was found: each chunk's items before the merge and its [`ChunkReport`].
//!
//! Reads block the task that polls the extraction (briefly, for a file): a slow source (a pipe, a
//! socket) should be copied to a file first, which is also what makes it readable more than once. The
//! `llm-extract doc` command does this with standard input.
//!
//! [`DocumentSource::reader`]: crate::extract::DocumentSource::reader

use crate::document::{ChunkBuf, ChunkReader, Chunker, ReadError, TextReader};
use crate::extract::document::document_source::ReadSeek;
use crate::extract::document::items::{Jobs, TOKEN_SAMPLE_BYTES};
use crate::extract::Extractor;
use crate::llm::Llm;
use std::io::{Read, Seek};

impl<L: Llm> Extractor<L> {
    /// Every chunk of every pass of the document `reader` reads, read as each is taken: how many there
    /// are (the document is read once per pass to count them), and the chunks.
    pub(crate) fn read_jobs<'a>(
        &'a self,
        mut reader: Box<dyn ReadSeek + Send + 'a>,
    ) -> Result<(usize, Jobs<'a>), ReadError> {
        let plan = self.plan(&mut reader)?;
        let total = plan.iter().map(|(_, _, chunks)| chunks).sum();
        let jobs = Passes {
            reader: Some(reader),
            chunks: None,
            plan: plan.into_iter(),
            pass: 0,
            over: false,
        };
        Ok((total, Box::new(jobs)))
    }

    /// Each pass's chunker and how many chunks it makes of the document.
    fn plan<R: Read + Seek>(
        &self,
        reader: &mut R,
    ) -> Result<Vec<(u32, Chunker, usize)>, ReadError> {
        let sample = match self.config.document.chunk_tokens {
            Some(_) => sample(reader)?,
            None => String::new(),
        };
        (0..self.config.document.passes.max(1))
            .map(|pass| {
                let chunker = self.fit(pass, &sample, |chunker, each| {
                    for chunk in ChunkReader::new(rewound(reader)?, *chunker) {
                        each(&chunk?.text);
                    }
                    Ok(())
                })?;
                let mut chunks = 0;
                for chunk in ChunkReader::new(rewound(reader)?, chunker) {
                    chunk?;
                    chunks += 1;
                }
                Ok((pass, chunker, chunks))
            })
            .collect()
    }
}

/// `reader`, moved back to its start.
fn rewound<R: Seek>(reader: &mut R) -> Result<&mut R, ReadError> {
    reader
        .rewind()
        .map_err(|source| ReadError::Io { offset: 0, source })?;
    Ok(reader)
}

/// The document's first [`TOKEN_SAMPLE_BYTES`] (cut back to a char boundary), as the in-memory split
/// samples it.
fn sample<R: Read + Seek>(reader: &mut R) -> Result<String, ReadError> {
    let mut text = TextReader::new(rewound(reader)?);
    let mut sample = String::new();
    while sample.len() < TOKEN_SAMPLE_BYTES && text.read_into(&mut sample)? > 0 {}
    let mut end = sample.len().min(TOKEN_SAMPLE_BYTES);
    while !sample.is_char_boundary(end) {
        end -= 1;
    }
    sample.truncate(end);
    Ok(sample)
}

/// Every chunk of every pass, read from the start of the document for each pass.
struct Passes<R> {
    /// The document between passes.
    reader: Option<R>,
    /// The current pass's chunks.
    chunks: Option<ChunkReader<R>>,
    plan: std::vec::IntoIter<(u32, Chunker, usize)>,
    pass: u32,
    over: bool,
}

impl<R: Read + Seek> Iterator for Passes<R> {
    type Item = Result<(u32, ChunkBuf), ReadError>;

    fn next(&mut self) -> Option<Self::Item> {
        while !self.over {
            if let Some(chunks) = &mut self.chunks {
                match chunks.next() {
                    Some(Ok(chunk)) => return Some(Ok((self.pass, chunk))),
                    Some(Err(e)) => {
                        self.over = true;
                        return Some(Err(e));
                    }
                    None => self.reader = self.chunks.take().map(ChunkReader::into_inner),
                }
            }
            let Some((pass, chunker, _)) = self.plan.next() else {
                self.over = true;
                break;
            };
            let mut reader = self.reader.take()?;
            if let Err(e) = rewound(&mut reader) {
                self.over = true;
                return Some(Err(e));
            }
            self.pass = pass;
            self.chunks = Some(ChunkReader::new(reader, chunker));
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extract::{Document, DocumentSource};
    use crate::llm::{from_fn, ChatRequest, ChatResponse, ChatStream, LlmError};
    use crate::schema::{Dialect, SchemaSet};
    use futures_util::future::BoxFuture;
    use serde_json::json;
    use serde_json::Value;
    use std::io::Cursor;

    /// A backend that counts a token per 4 bytes, and three more per `語`: so that `chunk_tokens`
    /// fits sizes by rounds, as with the embedded engine.
    struct Counting<L>(L);

    impl<L: Llm> Llm for Counting<L> {
        fn dialect(&self) -> Dialect {
            self.0.dialect()
        }
        fn chat(&self, request: ChatRequest) -> BoxFuture<'_, Result<ChatResponse, LlmError>> {
            self.0.chat(request)
        }
        fn chat_stream(&self, request: ChatRequest) -> BoxFuture<'_, Result<ChatStream, LlmError>> {
            self.0.chat_stream(request)
        }
        fn count_tokens(&self, text: &str) -> Option<usize> {
            Some(text.len() / 4 + text.matches('語').count() * 3)
        }
    }

    /// A stand-in model that names the people it knows in its chunk.
    fn reader_llm() -> impl Llm {
        let llm = from_fn(|request: ChatRequest| {
            let text = request
                .messages
                .last()
                .map(|m| m.content.clone())
                .unwrap_or_default();
            let names: Vec<String> = ["Sherlock Holmes", "Dr. Watson", "Irene Adler", "語り手"]
                .into_iter()
                .filter(|name| text.contains(name))
                .map(|name| json!({ "name": name }).to_string())
                .collect();
            async move {
                Ok(ChatResponse::new(format!(
                    r#"{{"items": [{}]}}"#,
                    names.join(",")
                )))
            }
        });
        Counting(llm)
    }

    fn schema() -> SchemaSet {
        SchemaSet::new(
            "Person",
            json!({"type": "object", "properties": {"name": {"type": "string", "x-grounded": true, "x-key": true}},
                   "required": ["name"], "additionalProperties": false}),
        )
    }

    #[tokio::test]
    async fn a_read_document_gives_the_items_spans_and_chunks_of_the_whole_text() {
        let mut book = String::new();
        for i in 0..300 {
            book.push_str(match i % 5 {
                0 => "Sherlock Holmes lit his pipe. ",
                1 => "Dr. Watson wrote it all down.\r\n\r\n",
                2 => "語り手は語りました。語り手。",
                3 => "Irene Adler\0 smiled; the café was naïve. ",
                _ => "Nothing happened here at all, for a long while.\n\n",
            });
        }
        let set = schema();
        for (passes, tokens) in [(1, None), (2, None), (3, Some(300))] {
            let mut extractor = Extractor::new(reader_llm())
                .chunk_bytes(700)
                .passes(passes)
                .concurrency(3);
            if let Some(tokens) = tokens {
                extractor = extractor.chunk_tokens(tokens);
            }
            let whole = extractor
                .with_schema(&set)
                .extract_document(&book)
                .await
                .unwrap();
            let mut totals = Vec::new();
            let source = DocumentSource::reader(Cursor::new(book.as_bytes()))
                .on_chunk(|_, _, _, total| totals.push(total));
            let read = extractor
                .with_schema(&set)
                .extract_document(source)
                .await
                .unwrap();
            assert_eq!(
                read.items, whole.items,
                "{passes} passes, {tokens:?} tokens"
            );
            assert!(read.items.len() == 4 && read.items[0].spans.len() > 10);
            let ranges = |doc: &Document<Value>| {
                doc.chunks
                    .iter()
                    .map(|c| (c.pass, c.index, c.bytes.clone(), c.chars.clone(), c.items))
                    .collect::<Vec<_>>()
            };
            assert_eq!(ranges(&read), ranges(&whole));
            assert_eq!(totals.len(), whole.chunks.len());
            assert!(totals.iter().all(|&t| t == whole.chunks.len()));
            assert_eq!(read.found, whole.found);
        }
    }

    #[tokio::test]
    async fn a_document_that_is_not_utf8_is_an_error_at_its_offset() {
        let mut bytes = b"Sherlock Holmes. ".repeat(100);
        bytes.insert(1000, 0xff);
        let set = schema();
        let error = Extractor::new(reader_llm())
            .with_schema(&set)
            .extract_document(DocumentSource::reader(Cursor::new(bytes)))
            .await
            .unwrap_err();
        assert!(
            matches!(error, ReadError::NotUtf8 { offset: 1000 }),
            "{error}"
        );
    }
}

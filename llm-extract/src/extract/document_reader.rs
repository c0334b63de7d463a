//! Long documents read from a file (any [`Read`] + [`Seek`]) rather than held in memory: the same
//! chunks, items and spans as [`Extractor::extract_document`] on the whole text, with memory bounded
//! by the chunk size rather than the document's.
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

use super::document::{typed, ChunkReport, Document, DoneChunk, TOKEN_SAMPLE_BYTES};
use super::Extractor;
use crate::check::Checks;
use crate::ground::{ChunkBuf, ChunkReader, Chunker, Grounded, ReadError, TextReader};
use crate::llm::Llm;
use crate::schema::SchemaSet;
use crate::Extract;
use serde_json::Value;
use std::io::{Read, Seek};

impl<L: Llm> Extractor<L> {
    /// [`Extractor::extract_document`] on a document read from `reader` (a [`std::fs::File`], a
    /// [`std::io::Cursor`]) instead of held in memory: the same items and spans, in memory bounded by the
    /// chunk size. The document is read from its start several times: once per pass to count its chunks,
    /// once per pass to extract them, and with [`Extractor::chunk_tokens`] on a backend that counts tokens
    /// once per fitting round. Reads block the task that polls the extraction (briefly, for a file): copy
    /// a slow source (a pipe, a socket) to a file first. An error is the document's: not UTF-8 (at the offset
    /// of the first invalid byte), or not readable.
    ///
    /// ```
    /// use llm_extract::llm::{from_fn, ChatRequest, ChatResponse};
    /// use llm_extract::extract::Extractor;
    /// use llm_extract::Extract;
    ///
    /// #[derive(Extract, serde::Deserialize, Debug, PartialEq)]
    /// struct Person {
    ///     #[extract(grounded, key)]
    ///     name: String,
    /// }
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let llm = from_fn(|request: ChatRequest| {
    ///     let text = request.messages.last().map(|m| m.content.clone()).unwrap_or_default();
    ///     let names: Vec<String> = ["Holmes", "Watson"]
    ///         .into_iter()
    ///         .filter(|name| text.contains(name))
    ///         .map(|name| format!(r#"{{"name": "{name}"}}"#))
    ///         .collect();
    ///     async move { Ok(ChatResponse::new(format!(r#"{{"items": [{}]}}"#, names.join(",")))) }
    /// });
    /// let book = "Holmes sat by the fire. Watson read the paper.\n\n".repeat(200);
    /// let extractor = Extractor::new(llm).chunk_bytes(1000);
    /// let read = extractor
    ///     .extract_document_reader::<Person, _>(std::io::Cursor::new(book.as_bytes()))
    ///     .await?;
    /// let whole = extractor.extract_document::<Person>(&book).await;
    /// assert_eq!(read.items, whole.items);
    /// # Ok::<(), llm_extract::ground::ReadError>(())
    /// # }).unwrap();
    /// ```
    pub async fn extract_document_reader<T: Extract, R: Read + Seek + Send>(
        &self,
        reader: R,
    ) -> Result<Document<T>, ReadError> {
        let checks = super::target::with_typed::<T>(self.checks.clone());
        self.values_reader(T::schema(), checks, reader, Vec::new(), |_, _, _, _| {})
            .await
            .map(typed)
    }

    /// [`Extractor::extract_document_values_resumed`] on a document read from `reader`: see
    /// [`Extractor::extract_document_reader`]. The chunks in `done` are not asked again; `on_chunk`
    /// gets each finished chunk, its items, how many chunks are done and how many there are.
    pub async fn extract_document_values_reader<R: Read + Seek + Send>(
        &self,
        schema: &SchemaSet,
        reader: R,
        done: Vec<DoneChunk>,
        on_chunk: impl FnMut(&ChunkReport, &[Grounded<Value>], usize, usize),
    ) -> Result<Document<Value>, ReadError> {
        self.values_reader(schema, self.checks.clone(), reader, done, on_chunk)
            .await
    }

    /// [`Extractor::extract_document_values_reader`] with `checks` on each item.
    async fn values_reader<R: Read + Seek + Send>(
        &self,
        schema: &SchemaSet,
        checks: Checks,
        mut reader: R,
        done: Vec<DoneChunk>,
        on_chunk: impl FnMut(&ChunkReport, &[Grounded<Value>], usize, usize),
    ) -> Result<Document<Value>, ReadError> {
        let plan = self.plan(&mut reader)?;
        let total = plan.iter().map(|(_, _, chunks)| chunks).sum();
        let jobs = Passes {
            reader: Some(reader),
            chunks: None,
            plan: plan.into_iter(),
            pass: 0,
            over: false,
        };
        let finished = self.run_jobs(schema, checks, jobs, done);
        self.gather(schema, total, finished, on_chunk).await
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
    use crate::llm::{from_fn, ChatRequest, ChatResponse, ChatStream, LlmError};
    use crate::schema::Dialect;
    use futures_util::future::BoxFuture;
    use serde_json::json;
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
            let whole = extractor.extract_document_values(&set, &book).await;
            let mut totals = Vec::new();
            let read = extractor
                .extract_document_values_reader(
                    &set,
                    Cursor::new(book.as_bytes()),
                    Vec::new(),
                    |_, _, _, total| totals.push(total),
                )
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
        let error = Extractor::new(reader_llm())
            .extract_document_values_reader(
                &schema(),
                Cursor::new(bytes),
                Vec::new(),
                |_, _, _, _| {},
            )
            .await
            .unwrap_err();
        assert!(
            matches!(error, ReadError::NotUtf8 { offset: 1000 }),
            "{error}"
        );
    }
}

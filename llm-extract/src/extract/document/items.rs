//! Long documents: split into chunks, each chunk extracted and grounded, the spans mapped back to the
//! document, the items of every chunk and pass merged by identity.
//!
//! 1. The document is split by [`Chunker`] into chunks of at most [`Extractor::chunk_bytes`] bytes,
//!    on paragraph, then sentence boundaries, overlapping by [`Extractor::chunk_overlap`] bytes.
//! 2. Each chunk is one grounded extraction (see [`Extractor::extract_grounded`]): the chunk is the
//!    text, spans are found in it, ungrounded values are re-asked. Up to
//!    [`Extractor::concurrency`] chunks run at once.
//! 3. With [`Extractor::passes`] above 1, the document is read again with the chunk boundaries moved
//!    (the first chunk of pass `k` is `k / passes` of the chunk size), so a value cut by a boundary in
//!    one pass is whole in another.
//! 4. Spans are shifted to document offsets and the items merged ([`Merger`]): in pass order, then
//!    chunk order; copies of an item (same key, or the same value without key fields) become one item
//!    whose spans accumulate. The merged items are returned in document order (by their first span).
//!    With confidence on, each value keeps the confidence it had in its chunk: a merged item's property,
//!    the copy's the merge kept it from ([`Document::confidence`]).
//!
//! A chunk that fails (backend error, nothing valid after the repairs) does not stop the document: its
//! error and cost are in its [`ChunkReport`] and the other chunks' items are returned.
//!
//! The document comes from a [`DocumentSource`]: a text in memory, or a reader for a document too large
//! to hold (read in `from_reader.rs`: the same chunks, items and spans), with the chunks an earlier
//! run finished and a callback as each chunk finishes.

use crate::check::{Checks, Issue};
use crate::document::{Chunk, ChunkBuf, Chunker, ReadError, MIN_CHUNK_BYTES};
use crate::extract::confidence::logprobs::{self as confidence, Copied};
use crate::extract::document::chunk_report::{ChunkReport, DoneChunk};
use crate::extract::document::document_source::{DocumentSource, OnChunk, Text};
use crate::extract::error::ExtractError;
use crate::extract::setup::config::Input;
use crate::extract::setup::target::{with_typed, Runtime};
use crate::extract::Extract;
use crate::extract::Extractor;
use crate::ground::{Conflict, Grounded, Merger, Source};
use crate::llm::{Llm, Usage};
use crate::parse::{self, Skipped};
use crate::report::{Extraction, Report};
use crate::schema::SchemaSet;
use futures_util::future::{self, Either, FutureExt};
use futures_util::stream::BoxStream;
use futures_util::StreamExt;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::convert::Infallible;
use std::ops::Range;

/// Bytes per token assumed when a chunk size in tokens must become bytes without the model's tokenizer
/// (a server): English prose runs 3.5 to 4.5 bytes per token; 3 leaves room for names, numbers and
/// other scripts.
pub const BYTES_PER_TOKEN: usize = 3;

/// How much of a document is tokenized to learn its bytes per token (see [`Extractor::chunk_tokens`]).
pub(crate) const TOKEN_SAMPLE_BYTES: usize = 64 * 1024;

/// How many times a split in tokens is made again smaller, in proportion to the worst chunk's excess,
/// before the size is bisected instead.
const FIT_ROUNDS: usize = 6;

/// The bisection of a chunk size stops within a sixteenth of the largest size found to fit.
const BISECT_PRECISION: usize = 16;

/// The largest char boundary of `text` at or below `at`.
fn floor_char_boundary(text: &str, at: usize) -> usize {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// What a document extraction found and what each chunk did.
#[derive(Debug)]
#[non_exhaustive]
pub struct Document<T> {
    /// The merged items in document order, each with its spans in the whole document.
    pub items: Vec<Grounded<T>>,
    /// Every chunk of every pass, in pass then chunk order.
    pub chunks: Vec<ChunkReport>,
    /// Per pass: chunks, failures, items and how many were new.
    pub passes: Vec<PassReport>,
    /// Copies of one item that disagreed on a property: what was kept and what was set aside.
    pub conflicts: Vec<Conflict>,
    /// Merged items that `T`'s `Deserialize` refused (typed extraction only).
    pub rejected: Vec<Skipped>,
    /// Items the chunks returned before the merge.
    pub found: usize,
    /// The tokens every request of every chunk used together.
    pub usage: Usage,
    /// The confidence of each leaf value of the merged items, by JSON pointer from the item's position
    /// in [`Document::items`] (`/0/name`), in `[0, 1]` (see
    /// [`Extractor::confidence`]). A value keeps the confidence it had in the chunk it was taken from:
    /// a merged item's property, that of the first copy (in pass, then chunk order) whose value the
    /// merge kept, the first non-empty one. Empty unless confidence was asked for. Each chunk's own, by
    /// its items, is in its [`ChunkReport::report`].
    pub confidence: BTreeMap<String, f32>,
    /// Confidence was asked for and a chunk's backend gave no token log-probabilities.
    pub no_logprobs: bool,
    /// Soft issues on the merged items: with [`Extractor::min_confidence`], each value under it, at its
    /// item's position in [`Document::items`] ([`Issue::item`]) and the path into the item. The checks'
    /// soft issues are in each chunk's report, at the chunk's items.
    pub issues: Vec<Issue>,
}

impl<T> Document<T> {
    /// The chunks that failed.
    pub fn failed(&self) -> impl Iterator<Item = &ChunkReport> {
        self.chunks.iter().filter(|chunk| chunk.error.is_some())
    }

    /// [`Document::confidence`] split by item: for each of [`Document::items`], in order, the
    /// confidence of its leaves by JSON pointer into the item (`/name`).
    pub fn confidence_by_item(&self) -> Vec<BTreeMap<String, f32>> {
        let mut items = vec![BTreeMap::new(); self.items.len()];
        for (index, leaves) in confidence::by_item(&self.confidence) {
            if let Some(item) = items.get_mut(index) {
                *item = leaves.into_iter().collect();
            }
        }
        items
    }
}

/// What [`Extractor::extract_document_stream`] yields.
#[derive(Debug)]
#[non_exhaustive]
pub enum DocumentEvent<T> {
    /// A chunk finished.
    Chunk {
        /// Its pass, from 0.
        pass: u32,
        /// Its position in its pass, from 0.
        index: usize,
        /// Its byte range in the document.
        bytes: Range<usize>,
        /// Whether it failed (its error is in the final [`Document::chunks`]).
        failed: bool,
        /// How many chunks have finished, this one included.
        done: usize,
        /// How many chunks there are.
        total: usize,
        /// The items it found that no chunk finished before it had found, with spans at document
        /// offsets. Copies found later merge into the final document's items.
        new: Vec<Grounded<T>>,
        /// The confidence of the leaves of `new`, as this chunk wrote them, by JSON pointer from the
        /// item's position in `new` (`/0/name`); empty unless confidence was asked for. The final
        /// document's may differ where a later copy gave a value an item lacked.
        confidence: BTreeMap<String, f32>,
    },
    /// Every chunk finished: the merged document, as [`Extractor::extract_document`] returns it.
    Finished(Document<T>),
}

/// The chunks of a document, each with its pass, read or copied as it is taken; the first error (reading
/// a document) ends them.
pub(crate) type Jobs<'a> = Box<dyn Iterator<Item = Result<(u32, ChunkBuf), ReadError>> + Send + 'a>;

/// The state of a document stream between events.
struct Streaming<'a> {
    /// The document and the chunks given back, until the first event splits it.
    start: Option<(Text<'a>, Vec<DoneChunk>, Checks)>,
    finished: Option<BoxStream<'a, Result<Finished, ReadError>>>,
    on_chunk: Option<OnChunk<'a>>,
    merger: Merger,
    seen: HashSet<String>,
    done: Vec<(ChunkReport, Vec<Grounded<Value>>)>,
    total: usize,
    over: bool,
}

/// The typed form of a document of validated JSON: the merged items `T`'s `Deserialize` refuses are
/// set aside in [`Document::rejected`].
pub(crate) fn typed<T: DeserializeOwned>(values: Document<Value>) -> Document<T> {
    let mut items = Vec::with_capacity(values.items.len());
    let mut rejected = Vec::new();
    // Where each item ends up (`None`: refused), for its confidence and issues.
    let mut moved = Vec::with_capacity(values.items.len());
    for (line, item) in values.items.into_iter().enumerate() {
        match parse::typed_item::<T>(&item.value, line + 1) {
            Ok(value) => {
                moved.push(Some(items.len()));
                items.push(Grounded::new(value, item.spans));
            }
            Err(skipped) => {
                moved.push(None);
                rejected.push(skipped);
            }
        }
    }
    let mut confidence = values.confidence;
    confidence::renumber(&mut confidence, &moved);
    let issues = values
        .issues
        .into_iter()
        .filter_map(|mut issue| {
            issue.item = moved.get(issue.item?).copied().flatten();
            issue.item.map(|_| issue)
        })
        .collect();
    Document {
        items,
        chunks: values.chunks,
        passes: values.passes,
        conflicts: values.conflicts,
        rejected,
        found: values.found,
        usage: values.usage,
        confidence,
        no_logprobs: values.no_logprobs,
        issues,
    }
}

/// The totals of one pass.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct PassReport {
    /// The pass, from 0.
    pub pass: u32,
    /// Its chunks.
    pub chunks: usize,
    /// Its chunks that failed.
    pub failed: usize,
    /// The items its chunks returned.
    pub items: usize,
    /// The items that were not copies of an item of an earlier chunk or pass.
    pub new_items: usize,
    /// Its requests, summed.
    pub attempts: usize,
    /// The tokens it used.
    pub usage: Usage,
}

impl<L: Llm> Extractor<L> {
    /// The chunks pass `pass` splits `document` into.
    pub fn chunks<'d>(&self, document: &'d str, pass: u32) -> Vec<Chunk<'d>> {
        let sample = document
            .get(..floor_char_boundary(document, TOKEN_SAMPLE_BYTES))
            .unwrap_or_default();
        let fitted = self.fit(pass, sample, |chunker, each| {
            chunker
                .split(document)
                .iter()
                .for_each(|chunk| each(chunk.text));
            Ok::<_, Infallible>(())
        });
        match fitted {
            Ok(chunker) => chunker.split(document),
            Err(never) => match never {},
        }
    }

    /// The chunker of pass `pass`. Its size is [`Extractor::chunk_bytes`], or with
    /// [`Extractor::chunk_tokens`] what fits that many tokens: `sample` (the document's first
    /// [`TOKEN_SAMPLE_BYTES`]) gives the bytes per token of this document and model; `visit(chunker,
    /// each)` must call `each` on the text of every chunk `chunker` makes of the document, so that a
    /// size whose chunks still have too many tokens is made smaller. The in-memory and the read
    /// documents share this, so both are split alike.
    pub(crate) fn fit<E>(
        &self,
        pass: u32,
        sample: &str,
        mut visit: impl FnMut(&Chunker, &mut dyn FnMut(&str)) -> Result<(), E>,
    ) -> Result<Chunker, E> {
        let settings = self.config.document;
        let Some(tokens) = settings.chunk_tokens else {
            return Ok(self.chunker(pass, settings.chunk_bytes));
        };
        let Some(sample_tokens) = self.llm().count_tokens(sample) else {
            return Ok(self.chunker(pass, tokens.saturating_mul(BYTES_PER_TOKEN)));
        };
        // Bytes per token of this document and model, with a tenth to spare. Where a chunk still has too
        // many tokens (the document is denser further on), the whole split is made again, smaller by the
        // worst chunk's excess, a few times (each shrinks the size by a twentieth or more). Should that
        // not reach a size that fits (tokens not in proportion to bytes), the size is bisected between
        // the smallest chunk and the smallest size seen too large: the size kept is one whose every
        // chunk was counted and fits.
        let per_token = sample.len() as f64 / sample_tokens.max(1) as f64;
        let mut max_bytes = ((tokens as f64 * per_token * 0.9) as usize).max(MIN_CHUNK_BYTES);
        let mut too_large = usize::MAX;
        let mut worst = 0.0;
        for _ in 0..FIT_ROUNDS {
            worst = self.worst_share(pass, max_bytes, tokens, &mut visit)?;
            if worst <= 1.0 {
                return Ok(self.chunker(pass, max_bytes));
            }
            too_large = too_large.min(max_bytes);
            if max_bytes == MIN_CHUNK_BYTES {
                break;
            }
            let smaller = (max_bytes as f64 / worst * 0.95) as usize;
            max_bytes = smaller.clamp(MIN_CHUNK_BYTES, max_bytes - 1);
        }
        let mut fits = MIN_CHUNK_BYTES;
        let smallest = if too_large == fits {
            worst
        } else {
            self.worst_share(pass, fits, tokens, &mut visit)?
        };
        if smallest > 1.0 {
            tracing::warn!(
                "no chunk size fits chunk_tokens = {tokens}: chunks of {fits} bytes (the smallest) \
                 still have up to {:.0} tokens; raise chunk_tokens",
                smallest * tokens as f64
            );
            return Ok(self.chunker(pass, fits));
        }
        while too_large - fits > (fits / BISECT_PRECISION).max(1) {
            let middle = fits + (too_large - fits) / 2;
            if self.worst_share(pass, middle, tokens, &mut visit)? <= 1.0 {
                fits = middle;
            } else {
                too_large = middle;
            }
        }
        Ok(self.chunker(pass, fits))
    }

    /// The most tokens a chunk of pass `pass`, split at `max_bytes`, has, as a share of `tokens`.
    fn worst_share<E>(
        &self,
        pass: u32,
        max_bytes: usize,
        tokens: usize,
        visit: &mut impl FnMut(&Chunker, &mut dyn FnMut(&str)) -> Result<(), E>,
    ) -> Result<f64, E> {
        let chunker = self.chunker(pass, max_bytes);
        let mut worst = 0.0_f64;
        visit(&chunker, &mut |text| {
            let share = self.llm().count_tokens(text).unwrap_or(0) as f64 / tokens as f64;
            worst = worst.max(share);
        })?;
        Ok(worst)
    }

    /// Pass `pass`'s chunker, for chunks of at most `max_bytes` bytes.
    fn chunker(&self, pass: u32, max_bytes: usize) -> Chunker {
        let settings = self.config.document;
        let mut chunker = Chunker::new(max_bytes);
        if let Some(overlap) = settings.overlap {
            chunker = chunker.overlap(overlap);
        }
        if pass > 0 {
            let share = chunker.max_bytes() as u64 * u64::from(pass % settings.passes.max(1))
                / u64::from(settings.passes.max(1));
            chunker = chunker.first_chunk(usize::try_from(share).unwrap_or(usize::MAX));
        }
        chunker
    }

    /// Every item of `T` in a document of any length, chunked, grounded and merged: chunks on paragraph
    /// then sentence boundaries, up to [`Extractor::concurrency`] at once, [`Extractor::passes`] readings
    /// with the boundaries moved, copies merged by their `#[extract(key)]` fields; a failed chunk is
    /// reported in [`Document::chunks`], never fatal.
    ///
    /// The document is a [`DocumentSource`]: a `&str` or a `String`, or
    /// [`DocumentSource::reader`] for one read from a file, with [`DocumentSource::resume`] and
    /// [`DocumentSource::on_chunk`]. The error is only ever a reader's (a document not UTF-8, or not
    /// readable): a text in memory never fails.
    ///
    /// ```
    /// use llm_extract::llm::{from_fn, ChatRequest, ChatResponse};
    /// use llm_extract::extract::Extractor;
    /// use llm_extract::Extract;
    ///
    /// #[derive(Extract, serde::Deserialize, Debug)]
    /// struct Person {
    ///     #[extract(grounded, key)]
    ///     name: String,
    /// }
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// // A stand-in model that lists the names it knows in its chunk.
    /// let llm = from_fn(|request: ChatRequest| {
    ///     let text = request.messages.last().map(|m| m.content.clone()).unwrap_or_default();
    ///     let names: Vec<String> = ["Holmes", "Watson", "Lestrade"]
    ///         .into_iter()
    ///         .filter(|name| text.contains(name))
    ///         .map(|name| format!(r#"{{"name": "{name}"}}"#))
    ///         .collect();
    ///     async move { Ok(ChatResponse::new(format!(r#"{{"items": [{}]}}"#, names.join(",")))) }
    /// });
    /// let book = "Holmes sat by the fire. Watson read the paper.\n\n".repeat(200);
    /// let doc = Extractor::new(llm).chunk_bytes(1000).extract_document::<Person>(&book).await?;
    /// assert!(doc.chunks.len() > 5);
    /// let names: Vec<&str> = doc.items.iter().map(|p| p.value.name.as_str()).collect();
    /// assert_eq!(names, ["Holmes", "Watson"]);
    /// // One span per chunk: where each chunk's copy of the item was found.
    /// assert_eq!(doc.items[0].spans.len(), doc.chunks.len());
    /// # Ok::<(), llm_extract::document::ReadError>(())
    /// # }).unwrap();
    /// ```
    pub async fn extract_document<'d, T: Extract>(
        &self,
        source: impl Into<DocumentSource<'d>>,
    ) -> Result<Document<T>, ReadError> {
        let checks = with_typed::<T>(self.checks.clone());
        self.document(T::schema(), checks, source.into()).await
    }

    /// [`Extractor::extract_document`] as a stream: an event as each chunk finishes (in the order they
    /// finish), with the items it found that no chunk finished before it had found, then the merged
    /// [`Document`]. A reader's error ends the stream. Dropping the stream cancels the chunks still
    /// running.
    ///
    /// ```
    /// use futures_util::StreamExt;
    /// use llm_extract::extract::{DocumentEvent, Extractor};
    /// use llm_extract::llm::{from_fn, ChatRequest, ChatResponse};
    /// use llm_extract::Extract;
    ///
    /// #[derive(Extract, serde::Deserialize, Debug)]
    /// struct Person {
    ///     #[extract(grounded, key)]
    ///     name: String,
    /// }
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let llm = from_fn(|request: ChatRequest| {
    ///     let text = request.messages.last().map(|m| m.content.clone()).unwrap_or_default();
    ///     let name = if text.contains("Watson") { "Watson" } else { "Holmes" };
    ///     async move { Ok(ChatResponse::new(format!(r#"{{"items": [{{"name": "{name}"}}]}}"#))) }
    /// });
    /// let book = format!("{}{}", "Holmes smoked.\n\n".repeat(100), "Watson wrote.\n\n".repeat(100));
    /// let extractor = Extractor::new(llm).chunk_bytes(500);
    /// let mut events = extractor.extract_document_stream::<Person>(&book);
    /// let mut first_seen = Vec::new();
    /// while let Some(event) = events.next().await {
    ///     match event? {
    ///         DocumentEvent::Chunk { new, .. } => {
    ///             first_seen.extend(new.into_iter().map(|p| p.value.name));
    ///         }
    ///         DocumentEvent::Finished(doc) => assert_eq!(doc.items.len(), 2),
    ///         _ => {}
    ///     }
    /// }
    /// assert_eq!(first_seen, ["Holmes", "Watson"]);
    /// # Ok::<(), llm_extract::document::ReadError>(())
    /// # }).unwrap();
    /// ```
    pub fn extract_document_stream<'a, T: Extract>(
        &'a self,
        source: impl Into<DocumentSource<'a>>,
    ) -> BoxStream<'a, Result<DocumentEvent<T>, ReadError>> {
        let checks = with_typed::<T>(self.checks.clone());
        self.document_stream(T::schema(), checks, source.into())
    }

    /// Every item of `schema` in the document of `source`, `checks` run on each, as `O`.
    pub(crate) async fn document<O: DeserializeOwned>(
        &self,
        schema: &SchemaSet,
        checks: Checks,
        source: DocumentSource<'_>,
    ) -> Result<Document<O>, ReadError> {
        let finished = self.finished(schema, checks, source).await?;
        Ok(self.merged(schema, finished))
    }

    /// Every chunk of every pass of the document of `source`, extracted (or given back), with its
    /// items at document offsets, in pass then chunk order.
    pub(crate) async fn finished(
        &self,
        schema: &SchemaSet,
        checks: Checks,
        source: DocumentSource<'_>,
    ) -> Result<Vec<Finished>, ReadError> {
        let DocumentSource {
            text,
            done,
            mut on_chunk,
        } = source;
        let (total, jobs) = self.jobs(text)?;
        let mut finished = std::pin::pin!(self.run_jobs(schema, checks, jobs, done));
        let mut finished_chunks = Vec::with_capacity(total);
        while let Some(next) = finished.next().await {
            let (report, items) = next?;
            if let Some(on_chunk) = &mut on_chunk {
                on_chunk(&report, &items, finished_chunks.len() + 1, total);
            }
            finished_chunks.push((report, items));
        }
        finished_chunks.sort_by_key(|(report, _)| (report.pass, report.index));
        Ok(finished_chunks)
    }

    /// [`Extractor::document`] as a stream of events.
    pub(crate) fn document_stream<'a, O: DeserializeOwned + Send + 'a>(
        &'a self,
        schema: &'a SchemaSet,
        checks: Checks,
        source: DocumentSource<'a>,
    ) -> BoxStream<'a, Result<DocumentEvent<O>, ReadError>> {
        let DocumentSource {
            text,
            done,
            on_chunk,
        } = source;
        let state = Streaming {
            start: Some((text, done, checks)),
            finished: None,
            on_chunk,
            merger: Merger::new(schema.generic()),
            seen: HashSet::new(),
            done: Vec::new(),
            total: 0,
            over: false,
        };
        futures_util::stream::unfold(state, move |mut state| async move {
            if state.over {
                return None;
            }
            // The document is split (and a reader read) once the stream is first polled.
            if let Some((text, done, checks)) = state.start.take() {
                match self.jobs(text) {
                    Ok((total, jobs)) => {
                        state.total = total;
                        state.finished = Some(self.run_jobs(schema, checks, jobs, done).boxed());
                    }
                    Err(e) => {
                        state.over = true;
                        return Some((Err(e), state));
                    }
                }
            }
            let next = match &mut state.finished {
                Some(finished) => finished.next().await,
                None => None,
            };
            match next {
                Some(Ok((report, items))) => {
                    let mut new = Vec::new();
                    let mut leaves = confidence::by_item(&report.report.confidence);
                    let mut new_confidence = BTreeMap::new();
                    for (line, item) in items.iter().enumerate() {
                        if state.seen.insert(state.merger.identity(&item.value)) {
                            if let Ok(value) = parse::typed_item::<O>(&item.value, line + 1) {
                                for (pointer, value) in leaves.remove(&line).unwrap_or_default() {
                                    new_confidence
                                        .insert(format!("/{}{pointer}", new.len()), value);
                                }
                                new.push(Grounded::new(value, item.spans.clone()));
                            }
                        }
                    }
                    let done = state.done.len() + 1;
                    if let Some(on_chunk) = &mut state.on_chunk {
                        on_chunk(&report, &items, done, state.total);
                    }
                    let event = DocumentEvent::Chunk {
                        pass: report.pass,
                        index: report.index,
                        bytes: report.bytes.clone(),
                        failed: report.error.is_some(),
                        done,
                        total: state.total,
                        new,
                        confidence: new_confidence,
                    };
                    state.done.push((report, items));
                    Some((Ok(event), state))
                }
                Some(Err(e)) => {
                    state.over = true;
                    Some((Err(e), state))
                }
                None => {
                    state.over = true;
                    let mut done = std::mem::take(&mut state.done);
                    done.sort_by_key(|(report, _)| (report.pass, report.index));
                    let document = self.merged(schema, done);
                    Some((Ok(DocumentEvent::Finished(document)), state))
                }
            }
        })
        .boxed()
    }

    /// Every chunk of every pass of `text`, each taken only as it starts (a text in memory is copied
    /// chunk by chunk, a reader read): how many there are, and the chunks.
    fn jobs<'a>(&'a self, text: Text<'a>) -> Result<(usize, Jobs<'a>), ReadError> {
        let document = match text {
            Text::Memory(document) => document,
            Text::Reader(reader) => return self.read_jobs(reader),
        };
        let passes = self.config.document.passes.max(1);
        let chunks: Vec<(u32, usize, Range<usize>, Range<usize>)> = (0..passes)
            .flat_map(|pass| {
                self.chunks(&document, pass)
                    .into_iter()
                    .map(move |chunk| (pass, chunk.index, chunk.bytes, chunk.chars))
            })
            .collect();
        let total = chunks.len();
        let jobs = chunks.into_iter().map(move |(pass, index, bytes, chars)| {
            let text = document.get(bytes.clone()).unwrap_or_default().to_owned();
            Ok((
                pass,
                ChunkBuf {
                    index,
                    text,
                    bytes,
                    chars,
                },
            ))
        });
        Ok((total, Box::new(jobs)))
    }

    /// The document the finished chunks `done` (in pass, then chunk order) make: their items merged,
    /// as `O`, with the merged items' confidence and its doubts under [`Extractor::min_confidence`].
    fn merged<O: DeserializeOwned>(
        &self,
        schema: &SchemaSet,
        done: Vec<(ChunkReport, Vec<Grounded<Value>>)>,
    ) -> Document<O> {
        let passes = self.config.document.passes.max(1);
        let mut document = assemble(schema, done, passes);
        if let Some(threshold) = self.config.min_confidence {
            document.issues = confidence::doubts(&document.confidence, threshold, true);
        }
        typed(document)
    }

    /// Extracts the chunks `jobs` gives (taken from it only as there is room: at most
    /// [`Extractor::concurrency`] at once), giving back those `done` holds. An error from `jobs` is
    /// passed on, after which `jobs` gives nothing more.
    fn run_jobs<'a>(
        &'a self,
        schema: &'a SchemaSet,
        checks: Checks,
        jobs: Jobs<'a>,
        done: Vec<DoneChunk>,
    ) -> impl futures_core::Stream<Item = Result<Finished, ReadError>> + Send + 'a {
        let mut done: HashMap<(u32, usize, usize), DoneChunk> = done
            .into_iter()
            .map(|chunk| ((chunk.pass, chunk.bytes.start, chunk.bytes.end), chunk))
            .collect();
        let runs = jobs.map(move |job| {
            let (pass, chunk) = match job {
                Ok(job) => job,
                Err(e) => return Either::Left(future::ready(Err(e))),
            };
            match done.remove(&(pass, chunk.bytes.start, chunk.bytes.end)) {
                Some(earlier) => Either::Left(future::ready(Ok(resume(pass, &chunk, earlier)))),
                None => Either::Right(
                    self.chunk(schema, checks.clone(), pass, chunk)
                        .map(|(pass, chunk, result)| Ok(settle(pass, chunk, result))),
                ),
            }
        });
        futures_util::stream::iter(runs).buffer_unordered(self.config.document.concurrency.max(1))
    }
}

/// A finished chunk: its report and its items, spans at document offsets.
pub(crate) type Finished = (ChunkReport, Vec<Grounded<Value>>);

impl<L: Llm> Extractor<L> {
    /// Extracts one chunk, grounded in its own text.
    async fn chunk(
        &self,
        schema: &SchemaSet,
        checks: Checks,
        pass: u32,
        chunk: ChunkBuf,
    ) -> (u32, ChunkBuf, ChunkResult) {
        let source = Source::new(&chunk.text);
        let input = Input::text(&chunk.text);
        let checks = checks.in_context(|| input.vars().cloned());
        let result = self
            .grounded_in(Runtime::checked(schema, checks), &source, input)
            .await;
        (pass, chunk, result)
    }
}

type ChunkResult = Result<Extraction<Vec<Grounded<Value>>>, ExtractError>;

/// A finished chunk's report, and its items with spans shifted to document offsets.
fn settle(pass: u32, chunk: ChunkBuf, result: ChunkResult) -> Finished {
    let (items, report, error) = match result {
        Ok(extraction) => (extraction.value, extraction.report, None),
        Err(error) => (Vec::new(), error.report().clone(), Some(error)),
    };
    let items: Vec<Grounded<Value>> = items
        .into_iter()
        .map(|item| Grounded {
            spans: item
                .spans
                .into_iter()
                .map(|span| span.shifted(chunk.bytes.start, chunk.chars.start))
                .collect(),
            value: item.value,
        })
        .collect();
    let report = ChunkReport {
        pass,
        index: chunk.index,
        bytes: chunk.bytes,
        chars: chunk.chars,
        items: items.len(),
        report,
        error,
        resumed: false,
    };
    (report, items)
}

/// A chunk an earlier run finished, as if it had just finished.
fn resume(pass: u32, chunk: &ChunkBuf, done: DoneChunk) -> Finished {
    let items: Vec<Grounded<Value>> = done
        .items
        .into_iter()
        .map(|(value, spans)| Grounded::new(value, spans))
        .collect();
    let report = Report {
        usage: done.usage,
        confidence: done.confidence,
        ..Report::default()
    };
    let report = ChunkReport {
        pass,
        index: chunk.index,
        bytes: chunk.bytes.clone(),
        chars: chunk.chars.clone(),
        items: items.len(),
        report,
        error: None,
        resumed: true,
    };
    (report, items)
}

/// Merges the items and sums the reports, in pass then chunk order.
pub(crate) fn assemble(
    schema: &SchemaSet,
    done: Vec<(ChunkReport, Vec<Grounded<Value>>)>,
    passes: u32,
) -> Document<Value> {
    let mut merger = Merger::new(schema.generic());
    let mut pass_reports: Vec<PassReport> = (0..passes)
        .map(|pass| PassReport {
            pass,
            ..PassReport::default()
        })
        .collect();
    let mut chunks = Vec::with_capacity(done.len());
    let mut usage = Usage::default();
    let mut found = 0;
    // The merged item of each identity, and the copies whose confidence the merged items take theirs from.
    let mut at: HashMap<String, usize> = HashMap::new();
    let mut copies = Vec::new();
    let mut no_logprobs = false;
    for (chunk, items) in done {
        let mut new_items = 0;
        let mut leaves = confidence::by_item(&chunk.report.confidence);
        no_logprobs |= chunk.report.no_logprobs;
        for (line, item) in items.into_iter().enumerate() {
            let identity = merger.identity(&item.value);
            let position = *at.entry(identity).or_insert(merger.len());
            if let Some(leaves) = leaves.remove(&line) {
                copies.push(Copied {
                    at: position,
                    json: item.value.clone(),
                    leaves,
                });
            }
            new_items += usize::from(merger.add(item.value, item.spans));
        }
        found += chunk.items;
        usage += chunk.report.usage;
        if let Some(totals) = pass_reports.get_mut(chunk.pass as usize) {
            totals.chunks += 1;
            totals.failed += usize::from(chunk.error.is_some());
            totals.items += chunk.items;
            totals.new_items += new_items;
            totals.attempts += chunk.report.attempts.len();
            totals.usage += chunk.report.usage;
        }
        chunks.push(chunk);
    }
    let (merged, conflicts) = merger.finish();
    let kept: Vec<&Value> = merged.iter().map(|(value, _)| value).collect();
    let mut confidence = confidence::merged(copies, &kept);
    let mut items: Vec<(usize, Grounded<Value>)> = merged
        .into_iter()
        .map(|(value, spans)| Grounded::new(value, spans))
        .enumerate()
        .collect();
    // Document order: by the first span found; items with none keep their place at the end.
    items.sort_by_key(|(_, item)| {
        item.spans
            .iter()
            .filter(|span| span.kind.is_found())
            .map(|span| span.bytes.start)
            .min()
            .unwrap_or(usize::MAX)
    });
    let mut moved = vec![None; items.len()];
    for (position, (merged_at, _)) in items.iter().enumerate() {
        if let Some(slot) = moved.get_mut(*merged_at) {
            *slot = Some(position);
        }
    }
    confidence::renumber(&mut confidence, &moved);
    let items = items.into_iter().map(|(_, item)| item).collect();
    Document {
        items,
        chunks,
        passes: pass_reports,
        conflicts,
        rejected: Vec::new(),
        found,
        usage,
        confidence,
        no_logprobs,
        issues: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::{from_fn, ChatRequest, ChatResponse, ChatStream, LlmError};
    use crate::schema::Dialect;
    use futures_util::future::BoxFuture;
    use std::sync::{Arc, Mutex};

    /// A backend whose every text costs 90 tokens and one more per 40 bytes: far from the proportion
    /// of tokens to bytes a chunk size in rounds assumes.
    struct Offset<L>(L);

    fn tokens_of(text: &str) -> usize {
        90 + text.len() / 40
    }

    fn offset() -> Offset<impl Llm> {
        Offset(from_fn(|_| async {
            Ok(ChatResponse::new("{\"items\": []}"))
        }))
    }

    impl<L: Llm> Llm for Offset<L> {
        fn dialect(&self) -> Dialect {
            self.0.dialect()
        }
        fn chat_stream(&self, request: ChatRequest) -> BoxFuture<'_, Result<ChatStream, LlmError>> {
            self.0.chat_stream(request)
        }
        fn count_tokens(&self, text: &str) -> Option<usize> {
            Some(tokens_of(text))
        }
    }

    fn prose() -> String {
        "The hound was heard on the moor again tonight. ".repeat(2_000)
    }

    #[test]
    fn chunks_in_tokens_fit_when_tokens_are_not_in_proportion_to_bytes() {
        let document = prose();
        for pass in 0..2 {
            let extractor = Extractor::new(offset()).chunk_tokens(100).passes(2);
            let chunks = extractor.chunks(&document, pass);
            let worst = chunks.iter().map(|chunk| tokens_of(chunk.text)).max();
            assert!(worst.is_some_and(|tokens| tokens <= 100), "{worst:?}");
            // Not needlessly small: a chunk fits 400 bytes; the bisection stops within a sixteenth.
            let largest = chunks.iter().map(|chunk| chunk.text.len()).max();
            assert!(largest.is_some_and(|bytes| bytes > 300), "{largest:?}");
            assert_eq!(
                chunks.last().map(|chunk| chunk.bytes.end),
                Some(document.len())
            );
        }
    }

    /// Records the messages of the warnings it is sent.
    struct Warnings(Arc<Mutex<Vec<String>>>);

    struct Message(String);

    impl tracing::field::Visit for Message {
        fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
            if field.name() == "message" {
                self.0 = format!("{value:?}");
            }
        }
    }

    impl tracing::Subscriber for Warnings {
        fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
            true
        }
        fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
            tracing::span::Id::from_u64(1)
        }
        fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
        fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
        fn event(&self, event: &tracing::Event<'_>) {
            if *event.metadata().level() == tracing::Level::WARN {
                let mut message = Message(String::new());
                event.record(&mut message);
                if let Ok(mut warnings) = self.0.lock() {
                    warnings.push(message.0);
                }
            }
        }
        fn enter(&self, _: &tracing::span::Id) {}
        fn exit(&self, _: &tracing::span::Id) {}
    }

    #[test]
    fn a_token_size_no_chunk_fits_is_a_warning() {
        let document = prose();
        let warnings = Arc::new(Mutex::new(Vec::new()));
        let subscriber = Warnings(warnings.clone());
        let chunks = tracing::subscriber::with_default(subscriber, || {
            Extractor::new(offset())
                .chunk_tokens(50)
                .chunks(&document, 0)
        });
        assert!(chunks
            .iter()
            .all(|chunk| chunk.text.len() <= MIN_CHUNK_BYTES));
        let warnings = warnings.lock().unwrap();
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(
            warnings[0].contains("chunk_tokens = 50") && warnings[0].contains("91 tokens"),
            "{}",
            warnings[0]
        );
    }
}

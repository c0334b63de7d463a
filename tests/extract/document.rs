//! Long documents: chunks, spans in the whole document, merge, passes, failures, concurrency.
//!
//! The model is a stand-in written here (`from_fn`): it reads the chunk it was sent and names the
//! people it knows that occur whole in it, the way a model answers. That makes every check exact.

use llm_extract::extract::{Document, Extractor};
use llm_extract::ground::MatchKind;
use llm_extract::llm::{from_fn, ChatRequest, ChatResponse, Role};
use llm_extract::{Extract, Llm, LlmError, Schema};
use serde::Deserialize;
use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

const STORY: &str = include_str!("../data/a-case-of-identity.txt");

/// Names as the story writes them.
const PEOPLE: &[&str] = &[
    "Sherlock Holmes",
    "Miss Mary Sutherland",
    "Mr. Hosmer Angel",
    "Mr. Windibank",
    "James Windibank",
    "Etherege",
    "Mr. Hardy",
];

#[derive(Extract, Deserialize, Debug, Clone, PartialEq)]
struct Person {
    /// The person's name as the text writes it.
    #[extract(grounded, key)]
    name: String,
}

/// The chunk a request asks about: its first user message.
fn chunk_of(request: &ChatRequest) -> String {
    request
        .messages
        .iter()
        .find(|m| m.role == Role::User)
        .map(|m| m.content.clone())
        .unwrap_or_default()
}

/// Names every known person whose name occurs whole in the chunk, in the list shape.
fn answer(chunk: &str) -> String {
    let items: Vec<String> = PEOPLE
        .iter()
        .filter(|name| chunk.contains(*name))
        .map(|name| serde_json::json!({ "name": name }).to_string())
        .collect();
    format!(r#"{{"items": [{}]}}"#, items.join(","))
}

fn reader() -> impl Llm {
    from_fn(|request: ChatRequest| {
        let text = answer(&chunk_of(&request));
        async move { Ok(ChatResponse::new(text)) }
    })
}

fn check_spans(doc: &Document<Person>, text: &str) {
    for item in &doc.items {
        assert!(!item.spans.is_empty(), "{:?}", item.value);
        for span in &item.spans {
            assert_eq!(span.kind, MatchKind::Exact);
            assert_eq!(&text[span.bytes.clone()], item.value.name);
            let by_chars: String = text
                .chars()
                .skip(span.chars.start)
                .take(span.chars.len())
                .collect();
            assert_eq!(by_chars, item.value.name);
        }
    }
}

#[tokio::test]
async fn a_story_in_chunks_gives_each_person_once_with_document_spans() {
    let doc = Extractor::new(reader())
        .chunk_bytes(3000)
        .extract_document::<Person>(STORY)
        .await
        .unwrap();
    assert!(doc.chunks.len() >= 13, "{} chunks", doc.chunks.len());
    assert!(doc.chunks.iter().all(|c| c.error.is_none()));
    // Chunks cover the document, in order, overlapping.
    assert_eq!(doc.chunks[0].bytes.start, 0);
    assert_eq!(doc.chunks.last().map(|c| c.bytes.end), Some(STORY.len()));
    for pair in doc.chunks.windows(2) {
        assert!(pair[1].bytes.start <= pair[0].bytes.end);
        assert!(pair[1].bytes.start > pair[0].bytes.start);
    }
    let names: Vec<&str> = doc.items.iter().map(|p| p.value.name.as_str()).collect();
    let unique: HashSet<&str> = names.iter().copied().collect();
    assert_eq!(unique.len(), names.len(), "no item twice: {names:?}");
    for name in PEOPLE {
        assert!(names.contains(name), "{name} missing from {names:?}");
    }
    assert!(doc.found > doc.items.len(), "copies were merged");
    check_spans(&doc, STORY);
    // Document order: by first mention.
    let firsts: Vec<usize> = doc.items.iter().map(|p| p.spans[0].bytes.start).collect();
    assert!(firsts.windows(2).all(|w| w[0] <= w[1]));
    assert_eq!(doc.passes.len(), 1);
    assert_eq!(doc.passes[0].chunks, doc.chunks.len());
}

#[tokio::test]
async fn a_failed_chunk_is_reported_and_the_others_are_kept() {
    let llm = from_fn(|request: ChatRequest| {
        let chunk = chunk_of(&request);
        let fail = chunk.contains("Hosmer Angel");
        let text = answer(&chunk);
        async move {
            if fail {
                Err(LlmError::Other {
                    message: "the server went away".into(),
                })
            } else {
                Ok(ChatResponse::new(text).with_usage(100, 10))
            }
        }
    });
    let doc = Extractor::new(llm)
        .chunk_bytes(3000)
        .extract_document::<Person>(STORY)
        .await
        .unwrap();
    let failed: Vec<_> = doc.failed().collect();
    assert!(!failed.is_empty());
    for chunk in &failed {
        assert!(chunk
            .error
            .as_ref()
            .unwrap()
            .to_string()
            .contains("went away"));
        assert_eq!(chunk.items, 0);
        assert!(!chunk.report.attempts.is_empty());
    }
    assert!(doc.items.iter().any(|p| p.value.name == "Sherlock Holmes"));
    assert_eq!(doc.passes[0].failed, failed.len());
    let ok = doc.chunks.len() - failed.len();
    assert_eq!(doc.usage.total(), 110 * ok as u64);
}

#[tokio::test]
async fn a_second_pass_finds_what_a_boundary_cut() {
    // 180 bytes of filler, then the name across where pass 0 cuts (at 200 bytes, no overlap).
    let filler = "x".repeat(190);
    let text = format!("{filler} Sherlock Holmes {}", "y".repeat(150));
    let one = Extractor::new(reader())
        .chunk_bytes(200)
        .chunk_overlap(0)
        .extract_document::<Person>(&text)
        .await
        .unwrap();
    assert!(one.items.is_empty(), "{:?}", one.items);
    let two = Extractor::new(reader())
        .chunk_bytes(200)
        .chunk_overlap(0)
        .passes(2)
        .extract_document::<Person>(&text)
        .await
        .unwrap();
    assert_eq!(two.items.len(), 1);
    assert_eq!(two.passes.len(), 2);
    assert_eq!((two.passes[0].new_items, two.passes[1].new_items), (0, 1));
    assert_eq!(
        &text[two.items[0].spans[0].bytes.clone()],
        "Sherlock Holmes"
    );
}

#[tokio::test]
async fn chunks_run_concurrently_up_to_the_limit_with_the_same_result() {
    let running = Arc::new(AtomicUsize::new(0));
    let most = Arc::new(AtomicUsize::new(0));
    let (r, m) = (running.clone(), most.clone());
    let llm = from_fn(move |request: ChatRequest| {
        let (running, most) = (r.clone(), m.clone());
        let text = answer(&chunk_of(&request));
        async move {
            let now = running.fetch_add(1, Ordering::SeqCst) + 1;
            most.fetch_max(now, Ordering::SeqCst);
            for _ in 0..10 {
                tokio::task::yield_now().await;
            }
            running.fetch_sub(1, Ordering::SeqCst);
            Ok(ChatResponse::new(text))
        }
    });
    let parallel = Extractor::new(llm)
        .chunk_bytes(3000)
        .concurrency(3)
        .extract_document::<Person>(STORY)
        .await
        .unwrap();
    assert_eq!(most.load(Ordering::SeqCst), 3);
    let serial = Extractor::new(reader())
        .chunk_bytes(3000)
        .extract_document::<Person>(STORY)
        .await
        .unwrap();
    assert_eq!(parallel.items, serial.items);
}

#[tokio::test]
async fn empty_and_blank_documents() {
    let doc = Extractor::new(reader())
        .extract_document::<Person>("")
        .await
        .unwrap();
    assert!(doc.chunks.is_empty() && doc.items.is_empty());
    let doc = Extractor::new(reader())
        .extract_document::<Person>(" \r\n\t ")
        .await
        .unwrap();
    assert_eq!(doc.chunks.len(), 1);
    assert!(doc.items.is_empty());
    let doc = Extractor::new(reader())
        .extract_document::<Person>("Sherlock Holmes\0 and NUL bytes")
        .await
        .unwrap();
    assert_eq!(doc.items.len(), 1);
}

#[tokio::test]
async fn the_stream_form_yields_each_identity_once_as_chunks_finish_then_the_same_document() {
    use futures_util::StreamExt;
    use llm_extract::extract::DocumentEvent;

    let extractor = Extractor::new(reader()).chunk_bytes(2000).concurrency(3);
    let whole = extractor.extract_document::<Person>(STORY).await.unwrap();
    let mut first_seen = Vec::new();
    let mut chunk_events = 0;
    let mut finished = None;
    let mut events = extractor.extract_document_stream::<Person>(STORY);
    while let Some(event) = events.next().await {
        match event.unwrap() {
            DocumentEvent::Chunk {
                done, total, new, ..
            } => {
                chunk_events += 1;
                assert_eq!(done, chunk_events);
                assert_eq!(total, whole.chunks.len());
                for person in new {
                    assert!(!person.spans.is_empty());
                    first_seen.push(person.value.name);
                }
            }
            DocumentEvent::Finished(doc) => finished = Some(doc),
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(chunk_events, whole.chunks.len());
    let unique: HashSet<&String> = first_seen.iter().collect();
    assert_eq!(unique.len(), first_seen.len(), "{first_seen:?}");
    let doc = finished.expect("the last event is the document");
    let names = |d: &Document<Person>| -> Vec<String> {
        d.items.iter().map(|p| p.value.name.clone()).collect()
    };
    assert_eq!(names(&doc), names(&whole));
    assert_eq!(
        first_seen.iter().collect::<HashSet<_>>(),
        names(&doc).iter().collect::<HashSet<_>>()
    );
    check_spans(&doc, STORY);
}

#[tokio::test]
async fn dropping_the_document_stream_stops_asking() {
    use futures_util::StreamExt;

    let calls = Arc::new(AtomicUsize::new(0));
    let counted = calls.clone();
    let llm = from_fn(move |request: ChatRequest| {
        counted.fetch_add(1, Ordering::SeqCst);
        let text = answer(&chunk_of(&request));
        async move { Ok(ChatResponse::new(text)) }
    });
    let extractor = Extractor::new(llm).chunk_bytes(2000);
    {
        let mut events = extractor.extract_document_stream::<Person>(STORY);
        assert!(events.next().await.is_some());
    }
    tokio::task::yield_now().await;
    assert_eq!(
        calls.load(Ordering::SeqCst),
        1,
        "one chunk asked, the rest never"
    );
    assert!(extractor.chunks(STORY, 0).len() > 5);
}

#[tokio::test]
async fn a_resumed_run_asks_only_the_chunks_the_first_run_did_not_finish() {
    use llm_extract::extract::{DocumentSource, DoneChunk};

    let schema = Person::schema();
    // The first run: every chunk that names Windibank fails.
    let failing = from_fn(|request: ChatRequest| {
        let chunk = chunk_of(&request);
        async move {
            if chunk.contains("Windibank") {
                Err(LlmError::Other {
                    message: "connection reset".into(),
                })
            } else {
                Ok(ChatResponse::new(answer(&chunk)))
            }
        }
    });
    let mut saved = Vec::new();
    let first = Extractor::new(failing)
        .chunk_bytes(2000)
        .with_schema(schema)
        .extract_document(DocumentSource::text(STORY).on_chunk(|report, items, _, _| {
            if report.error.is_none() {
                saved.push(DoneChunk::new(report, items));
            }
        }))
        .await
        .unwrap();
    let failed = first.failed().count();
    assert!(failed > 0 && saved.len() + failed == first.chunks.len());
    let saved: Vec<DoneChunk> =
        serde_json::from_str(&serde_json::to_string(&saved).unwrap()).unwrap();

    // The second run asks only the failed chunks, and ends as a clean run does.
    let calls = Arc::new(AtomicUsize::new(0));
    let counted = calls.clone();
    let counting = from_fn(move |request: ChatRequest| {
        counted.fetch_add(1, Ordering::SeqCst);
        let text = answer(&chunk_of(&request));
        async move { Ok(ChatResponse::new(text)) }
    });
    let second = Extractor::new(counting)
        .chunk_bytes(2000)
        .with_schema(schema)
        .extract_document(DocumentSource::text(STORY).resume(saved))
        .await
        .unwrap();
    assert_eq!(calls.load(Ordering::SeqCst), failed);
    assert_eq!(second.failed().count(), 0);
    assert_eq!(
        second.chunks.iter().filter(|c| c.resumed).count(),
        second.chunks.len() - failed
    );
    let clean = Extractor::new(reader())
        .chunk_bytes(2000)
        .with_schema(schema)
        .extract_document(STORY)
        .await
        .unwrap();
    let shown = |d: &Document<serde_json::Value>| -> Vec<String> {
        d.items
            .iter()
            .map(|i| format!("{} {:?}", i.value, i.spans))
            .collect()
    };
    assert_eq!(shown(&second), shown(&clean));
    assert_eq!(second.usage, clean.usage);
}

/// A backend that counts tokens (one per word, a stand-in for a model's tokenizer).
struct Counting<L>(L);

impl<L: Llm> Llm for Counting<L> {
    fn dialect(&self) -> llm_extract::schema::Dialect {
        self.0.dialect()
    }
    fn chat_stream(
        &self,
        request: ChatRequest,
    ) -> llm_extract::llm::BoxFuture<'_, Result<llm_extract::llm::ChatStream, LlmError>> {
        self.0.chat_stream(request)
    }
    fn count_tokens(&self, text: &str) -> Option<usize> {
        Some(text.split_whitespace().count())
    }
}

/// The chunks cover the text in order: the first starts at 0, the last ends at the end, each starts
/// inside or at the end of the one before, and their texts are what their ranges say.
fn check_cover(chunks: &[llm_extract::document::Chunk<'_>], text: &str) {
    assert_eq!(chunks.first().map(|c| c.bytes.start), Some(0));
    assert_eq!(chunks.last().map(|c| c.bytes.end), Some(text.len()));
    for (i, pair) in chunks.windows(2).enumerate() {
        assert!(
            pair[1].bytes.start <= pair[0].bytes.end && pair[1].bytes.start > pair[0].bytes.start,
            "{:?} then {:?} of {}",
            pair[0].bytes,
            pair[1].bytes,
            text.len()
        );
        assert_eq!(pair[0].index, i);
    }
    for chunk in chunks {
        assert_eq!(&text[chunk.bytes.clone()], chunk.text);
        let by_chars: String = text
            .chars()
            .skip(chunk.chars.start)
            .take(chunk.chars.len())
            .collect();
        assert_eq!(by_chars, chunk.text);
    }
}

#[tokio::test]
async fn chunks_in_tokens_fit_the_backends_count_or_three_bytes_a_token() {
    let counted = Extractor::new(Counting(reader())).chunk_tokens(300);
    let chunks = counted.chunks(STORY, 0);
    assert!(chunks.len() > 5);
    for chunk in &chunks {
        assert!(
            chunk.text.split_whitespace().count() <= 300,
            "{}",
            chunk.text.len()
        );
    }
    check_cover(&chunks, STORY);
    // A second pass moves the boundaries and still fits.
    let second = Extractor::new(Counting(reader()))
        .chunk_tokens(300)
        .passes(2);
    let moved = second.chunks(STORY, 1);
    assert_ne!(
        moved.first().map(|c| c.bytes.end),
        chunks.first().map(|c| c.bytes.end)
    );
    assert!(moved
        .iter()
        .all(|c| c.text.split_whitespace().count() <= 300));
    check_cover(&moved, STORY);

    // A text whose first part is sparse and the rest dense: the sample's measure is wrong for the dense
    // part, whose chunks are split again.
    let uneven = format!(
        "{}{}",
        "word ".repeat(20_000),
        "a b c d e f g h ".repeat(10_000)
    );
    let chunks = counted.chunks(&uneven, 0);
    assert!(chunks
        .iter()
        .all(|c| c.text.split_whitespace().count() <= 300));
    check_cover(&chunks, &uneven);

    // A server: three bytes a token.
    let chunks = Extractor::new(reader()).chunk_tokens(300).chunks(STORY, 0);
    assert!(chunks.iter().all(|c| c.text.len() <= 900));
    check_cover(&chunks, STORY);
    let doc = counted.extract_document::<Person>(STORY).await.unwrap();
    check_spans(&doc, STORY);
    assert_eq!(doc.items.len(), PEOPLE.len());
}

/// What a document's chunks are and hold, to compare two readings of it.
fn shape(doc: &Document<Person>) -> Vec<String> {
    let chunks = doc.chunks.iter().map(|c| {
        format!(
            "{} {} {:?} {:?} {}",
            c.pass, c.index, c.bytes, c.chars, c.items
        )
    });
    let items = doc
        .items
        .iter()
        .map(|i| format!("{} {:?}", i.value.name, i.spans));
    chunks.chain(items).collect()
}

#[tokio::test]
async fn a_document_read_from_a_reader_is_the_document_in_memory() {
    use futures_util::StreamExt;
    use llm_extract::extract::{DocumentEvent, DocumentSource};
    use std::io::Cursor;

    for passes in [1, 2] {
        let extractor = Extractor::new(reader())
            .chunk_bytes(1500)
            .passes(passes)
            .concurrency(2);
        let whole = extractor.extract_document::<Person>(STORY).await.unwrap();
        let read = extractor
            .extract_document::<Person>(DocumentSource::reader(Cursor::new(STORY.as_bytes())))
            .await
            .unwrap();
        assert_eq!(shape(&read), shape(&whole), "{passes} passes");
        let owned = Person::extract_document(&reader(), STORY.to_owned()).await;
        assert_eq!(
            owned.unwrap().items.len(),
            Extractor::new(reader())
                .extract_document::<Person>(STORY)
                .await
                .unwrap()
                .items
                .len()
        );

        // The stream of a read document ends with the same document.
        let mut events = extractor.extract_document_stream::<Person>(DocumentSource::reader(
            Cursor::new(STORY.as_bytes()),
        ));
        let mut finished = None;
        while let Some(event) = events.next().await {
            if let DocumentEvent::Finished(doc) = event.unwrap() {
                finished = Some(doc);
            }
        }
        assert_eq!(shape(&finished.unwrap()), shape(&whole));
    }
}

#[tokio::test]
async fn a_reader_that_is_not_utf8_fails_the_document_and_its_stream() {
    use futures_util::StreamExt;
    use llm_extract::document::ReadError;
    use llm_extract::extract::DocumentSource;
    use std::io::Cursor;

    let mut bytes = STORY.as_bytes()[..3000].to_vec();
    bytes[2000] = 0xff;
    let extractor = Extractor::new(reader()).chunk_bytes(1000);
    let error = extractor
        .extract_document::<Person>(DocumentSource::reader(Cursor::new(bytes.clone())))
        .await
        .unwrap_err();
    assert!(
        matches!(error, ReadError::NotUtf8 { offset: 2000 }),
        "{error}"
    );
    let mut events =
        extractor.extract_document_stream::<Person>(DocumentSource::reader(Cursor::new(bytes)));
    let last = events.next().await.unwrap();
    assert!(matches!(last, Err(ReadError::NotUtf8 { offset: 2000 })));
    assert!(events.next().await.is_none());
}

#[tokio::test]
async fn a_resumed_read_document_asks_only_the_chunks_not_done() {
    use llm_extract::extract::{DocumentSource, DoneChunk};
    use std::io::Cursor;
    use std::sync::Mutex;

    let calls = Arc::new(AtomicUsize::new(0));
    let counted = calls.clone();
    let counting = from_fn(move |request: ChatRequest| {
        counted.fetch_add(1, Ordering::SeqCst);
        let text = answer(&chunk_of(&request));
        async move { Ok(ChatResponse::new(text)) }
    });
    let extractor = Extractor::new(counting).chunk_bytes(2000);
    let done = Mutex::new(Vec::new());
    let mut progress = Vec::new();
    let first = extractor
        .extract_document::<Person>(
            DocumentSource::reader(Cursor::new(STORY.as_bytes())).on_chunk(
                |report, items, finished, total| {
                    progress.push((finished, total));
                    // Only every other chunk is kept, as if the run had stopped half way.
                    if report.index % 2 == 0 {
                        done.lock().unwrap().push(DoneChunk::new(report, items));
                    }
                },
            ),
        )
        .await
        .unwrap();
    let chunks = first.chunks.len();
    assert_eq!(calls.load(Ordering::SeqCst), chunks);
    assert_eq!(progress.last(), Some(&(chunks, chunks)));
    let done = done.into_inner().unwrap();
    let kept = done.len();

    let again = extractor
        .extract_document::<Person>(
            DocumentSource::reader(Cursor::new(STORY.as_bytes())).resume(done),
        )
        .await
        .unwrap();
    assert_eq!(calls.load(Ordering::SeqCst), chunks + (chunks - kept));
    assert_eq!(again.chunks.iter().filter(|c| c.resumed).count(), kept);
    assert_eq!(shape(&again), shape(&first));
}

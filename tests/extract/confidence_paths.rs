//! Per-field confidence on every path: the items of `extract_stream` (typed and for a runtime schema;
//! also when the stream fails, or an answer stops at `max_items`), the final report of
//! `extract_partial`, and the merged items of a document (a value taken from a chunk keeps that chunk's
//! confidence, also when the chunk is resumed), with `min_confidence` turning doubtful values into soft
//! issues.
//!
//! The model is a stand-in (`from_fn`) whose answers come with a log-probability per token, as a
//! server that was asked for them sends them.

use futures_util::StreamExt;
use llm_extract::check::Severity;
use llm_extract::extract::{
    ConfidenceRule, DocumentEvent, DocumentSource, DoneChunk, Extractor, PartialEvent,
};
use llm_extract::llm::{from_fn, ChatRequest, ChatResponse, Finish, Llm, Role, TokenLogprob};
use llm_extract::schema::SchemaSet;
use llm_extract::{Extract, LlmError, Schema};
use serde::Deserialize;
use serde_json::json;
use std::future::ready;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// An answer written by tokens, each with its log-probability.
fn answer(tokens: &[(&str, f32)]) -> ChatResponse {
    let text: String = tokens.iter().map(|(t, _)| *t).collect();
    let logprobs = tokens
        .iter()
        .map(|(t, l)| TokenLogprob::new(t.as_bytes(), *l))
        .collect();
    ChatResponse::new(text).with_logprobs(logprobs)
}

fn close(a: f32, logprob: f64) -> bool {
    (f64::from(a) - logprob.exp()).abs() < 1e-5
}

fn person() -> SchemaSet {
    SchemaSet::new(
        "Person",
        json!({
            "type": "object",
            "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
            "required": ["name", "age"],
            "additionalProperties": false
        }),
    )
}

/// Two people, one per line: Ada written surely, Bob's name doubtfully.
fn two_people() -> ChatResponse {
    answer(&[
        ("{\"name\": \"", 0.0),
        ("Ada", -0.1),
        ("\", \"age\": ", 0.0),
        ("36", -0.2),
        ("}\n{\"name\": \"", 0.0),
        ("Bob", -1.5),
        ("\", \"age\": ", 0.0),
        ("7", -0.4),
        ("}\n", 0.0),
    ])
}

#[derive(Extract, Deserialize, Debug, Clone, PartialEq)]
struct Person {
    name: String,
    age: u32,
}

#[tokio::test]
async fn stream_items_have_their_confidence_in_the_report_and_doubts_as_soft_issues() {
    let llm = from_fn(|_| async { Ok(two_people()) });
    let extractor = Extractor::new(llm).min_confidence(0.5);
    let schema = person();
    let mut stream = extractor
        .with_schema(&schema)
        .extract_stream("Ada, 36. Bob, 7.");
    let mut items = Vec::new();
    while let Some(item) = stream.next().await {
        items.push(item.unwrap());
    }
    assert_eq!(items.len(), 2);
    let report = stream.report().unwrap();
    let keys: Vec<&str> = report.confidence.keys().map(String::as_str).collect();
    assert_eq!(keys, ["/0/age", "/0/name", "/1/age", "/1/name"]);
    assert!(close(report.confidence["/0/name"], -0.1));
    assert!(close(report.confidence["/1/name"], -1.5));
    let doubtful: Vec<(Option<usize>, &str, Severity)> = report
        .issues
        .iter()
        .map(|i| (i.item, i.path.as_str(), i.severity))
        .collect();
    assert_eq!(doubtful, [(Some(1), "/name", Severity::Soft)]);
}

#[tokio::test]
async fn typed_stream_items_have_their_confidence_in_the_report() {
    let llm = from_fn(|_| async { Ok(two_people()) });
    let extractor = Extractor::new(llm).confidence(ConfidenceRule::default());
    let mut stream = extractor.extract_stream::<Person>("Ada, 36. Bob, 7.");
    let mut names = Vec::new();
    while let Some(item) = stream.next().await {
        names.push(item.unwrap().name);
    }
    assert_eq!(names, ["Ada", "Bob"]);
    let report = stream.report().unwrap();
    assert!(close(report.confidence["/1/age"], -0.4));
    assert!(report.issues.is_empty());
}

#[tokio::test]
async fn a_partial_extraction_reports_the_confidence_of_the_complete_value() {
    let llm = from_fn(|_| async {
        Ok(answer(&[
            ("{\"name\": \"", 0.0),
            ("A", -0.1),
            ("da", -0.3),
            ("\", \"age\": ", 0.0),
            ("36", -2.0),
            ("}", 0.0),
        ]))
    });
    let extractor = Extractor::new(llm).min_confidence(0.5);
    let mut events = extractor.extract_partial::<Person>("Ada, 36.");
    let mut last = None;
    while let Some(event) = events.next().await {
        if let PartialEvent::Final { extraction, .. } = event.unwrap() {
            last = Some(extraction);
        }
    }
    let extraction = last.unwrap();
    let confidence = &extraction.report.confidence;
    assert!(close(confidence["/name"], -0.2), "{confidence:?}");
    assert!(close(confidence["/age"], -2.0), "{confidence:?}");
    assert_eq!(extraction.report.issues.len(), 1);
    assert_eq!(extraction.report.issues[0].path, "/age");
    // The stream's own report is the same.
    assert_eq!(&events.report().unwrap().confidence, confidence);
}

#[derive(Extract, Deserialize, Debug, Clone, PartialEq)]
struct Founder {
    #[extract(grounded, key)]
    name: String,
    company: Option<String>,
}

const FIRST: &str = "Lisa Su spoke first, and for a long while nobody in the room said a word.";
const SECOND: &str = "Then Lisa Su said AMD was hers; Jensen Huang agreed with every word.";

/// A model that knows Lisa Su in the first chunk (company unknown), and Lisa Su of AMD and Jensen
/// Huang in the second, each written with its own certainty.
fn founders() -> impl llm_extract::Llm {
    from_fn(|request: ChatRequest| {
        let chunk = request
            .messages
            .iter()
            .find(|m| m.role == Role::User)
            .map(|m| m.content.clone())
            .unwrap_or_default();
        let response = if chunk.contains("Jensen") {
            answer(&[
                ("{\"items\": [{\"name\": \"", 0.0),
                ("Lisa Su", -0.9),
                ("\", \"company\": \"", 0.0),
                ("AMD", -0.3),
                ("\"}, {\"name\": \"", 0.0),
                ("Jensen Huang", -0.05),
                ("\", \"company\": ", 0.0),
                ("null", -2.5),
                ("}]}", 0.0),
            ])
        } else {
            answer(&[
                ("{\"items\": [{\"name\": \"", 0.0),
                ("Lisa Su", -0.1),
                ("\", \"company\": ", 0.0),
                ("null", -0.7),
                ("}]}", 0.0),
            ])
        };
        async move { Ok(response) }
    })
}

fn document() -> String {
    format!("{FIRST}\n\n{SECOND}")
}

/// An extractor of [`founders`] that cuts [`document`] into its two paragraphs, one per chunk.
fn two_chunks() -> Extractor<impl llm_extract::Llm> {
    Extractor::new(founders()).chunk_bytes(100).chunk_overlap(0)
}

#[tokio::test]
async fn a_document_keeps_the_confidence_of_the_chunk_each_value_came_from() {
    let extractor = two_chunks().min_confidence(0.5);
    let text = document();
    assert_eq!(extractor.chunks(&text, 0).len(), 2);
    let doc = extractor.extract_document::<Founder>(&text).await.unwrap();
    let names: Vec<(&str, Option<&str>)> = doc
        .items
        .iter()
        .map(|f| (f.value.name.as_str(), f.value.company.as_deref()))
        .collect();
    assert_eq!(names, [("Lisa Su", Some("AMD")), ("Jensen Huang", None)]);
    let confidence = &doc.confidence;
    // Lisa Su's name from chunk 1, where she was first found; her company from chunk 2.
    assert!(close(confidence["/0/name"], -0.1), "{confidence:?}");
    assert!(close(confidence["/0/company"], -0.3), "{confidence:?}");
    // Jensen Huang only in chunk 2.
    assert!(close(confidence["/1/name"], -0.05), "{confidence:?}");
    assert!(close(confidence["/1/company"], -2.5), "{confidence:?}");
    let doubtful: Vec<(Option<usize>, &str)> = doc
        .issues
        .iter()
        .map(|i| (i.item, i.path.as_str()))
        .collect();
    assert_eq!(doubtful, [(Some(1), "/company")]);
    let by_item = doc.confidence_by_item();
    assert_eq!(by_item.len(), 2);
    assert!(close(by_item[1]["/company"], -2.5));
}

#[tokio::test]
async fn a_document_stream_gives_each_chunk_s_new_items_their_confidence() {
    let extractor = two_chunks().confidence(ConfidenceRule::default());
    let text = document();
    let mut events = extractor.extract_document_stream::<Founder>(&text);
    let mut seen = Vec::new();
    let mut finished = None;
    while let Some(event) = events.next().await {
        match event.unwrap() {
            DocumentEvent::Chunk {
                index,
                new,
                confidence,
                ..
            } => seen.push((index, new.len(), confidence)),
            DocumentEvent::Finished(doc) => finished = Some(doc),
            _ => {}
        }
    }
    seen.sort_by_key(|(index, _, _)| *index);
    // The second chunk's only new item is Jensen Huang, at position 0 of its `new`.
    let (_, new, confidence) = &seen[1];
    assert_eq!(*new, 1);
    assert!(close(confidence["/0/name"], -0.05), "{confidence:?}");
    assert!(!confidence.contains_key("/1/name"));
    let doc = finished.unwrap();
    assert!(close(doc.confidence["/0/company"], -0.3));
    assert!(doc.issues.is_empty());
}

#[tokio::test]
async fn a_runtime_schema_document_has_its_confidence_too() {
    let schema = Founder::schema();
    let extractor = two_chunks().confidence(ConfidenceRule::default());
    let doc = extractor
        .with_schema(schema)
        .extract_document(document().as_str())
        .await
        .unwrap();
    assert_eq!(doc.items[0].value["company"], "AMD");
    assert!(close(doc.confidence["/0/company"], -0.3));
    assert!(close(doc.confidence["/0/name"], -0.1));
}

/// A model that answers its `n`th call (the first is 0) with `reply(n)`, and the count of its calls.
fn by_call(
    reply: impl Fn(usize) -> Result<ChatResponse, LlmError> + Send + Sync,
) -> (impl Llm, Arc<AtomicUsize>) {
    let calls = Arc::new(AtomicUsize::new(0));
    let counted = calls.clone();
    let llm = from_fn(move |_| ready(reply(counted.fetch_add(1, Ordering::SeqCst))));
    (llm, calls)
}

/// Ada, then the start of Bob's line, cut off by the token limit: the stream continues.
fn cut_after_ada() -> ChatResponse {
    answer(&[
        ("{\"name\": \"", 0.0),
        ("Ada", -1.5),
        ("\", \"age\": ", 0.0),
        ("36", -0.2),
        ("}\n{\"name\": \"Bo", 0.0),
    ])
    .with_finish(Finish::Length)
}

#[tokio::test]
async fn a_stream_that_fails_keeps_the_confidence_of_the_items_it_yielded() {
    let (llm, calls) = by_call(|call| match call {
        0 => Ok(cut_after_ada()),
        _ => Err(LlmError::Other {
            message: "the server went away".into(),
        }),
    });
    let extractor = Extractor::new(llm).min_confidence(0.5);
    let schema = person();
    let mut stream = extractor
        .with_schema(&schema)
        .extract_stream("Ada, 36. Bob, 7.");
    let mut items = Vec::new();
    let mut error = None;
    while let Some(item) = stream.next().await {
        match item {
            Ok(item) => items.push(item),
            Err(e) => error = Some(e),
        }
    }
    assert_eq!(items, [json!({"name": "Ada", "age": 36})]);
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    let report = error.expect("the continuation failed").report().clone();
    assert!(close(report.confidence["/0/name"], -1.5), "{report:?}");
    assert!(close(report.confidence["/0/age"], -0.2));
    let doubtful: Vec<(Option<usize>, &str)> = report
        .issues
        .iter()
        .map(|i| (i.item, i.path.as_str()))
        .collect();
    assert_eq!(doubtful, [(Some(0), "/name")]);
}

#[tokio::test]
async fn an_answer_stopped_at_max_items_leaves_the_other_answers_confidence() {
    let (llm, _) = by_call(|call| match call {
        0 => Ok(cut_after_ada()),
        _ => Ok(two_people_after_ada()),
    });
    let extractor = Extractor::new(llm)
        .confidence(ConfidenceRule::default())
        .max_items(2);
    let schema = person();
    let mut stream = extractor
        .with_schema(&schema)
        .extract_stream("Ada, 36. Bob, 7. Cy, 9.");
    let mut names = Vec::new();
    while let Some(item) = stream.next().await {
        names.push(item.unwrap()["name"].clone());
    }
    assert_eq!(names, [json!("Ada"), json!("Bob")]);
    let report = stream.report().unwrap();
    // The continuation stopped at the maximum before its tokens came: Bob has none, Ada keeps hers,
    // and the backend is not said to give none.
    let keys: Vec<&str> = report.confidence.keys().map(String::as_str).collect();
    assert_eq!(keys, ["/0/age", "/0/name"]);
    assert!(!report.no_logprobs);
}

/// The continuation after Ada: Bob and Cy.
fn two_people_after_ada() -> ChatResponse {
    answer(&[
        ("{\"name\": \"", 0.0),
        ("Bob", -0.3),
        ("\", \"age\": 7}\n{\"name\": \"Cy\", \"age\": 9}\n", 0.0),
    ])
}

#[tokio::test]
async fn a_value_kept_before_a_loop_is_not_said_to_lack_log_probabilities() {
    // The model closes its answer, then loops in prose: stopped there, the answer never gets its
    // tokens.
    let chatty = format!(
        "Here is the JSON:\n{{\"name\": \"Ada\", \"age\": 36}}\n\nThis is a JSON-LD{}",
        "-JSON-LD".repeat(60)
    );
    let llm = from_fn(move |_| {
        let text = chatty.clone();
        async move { Ok(answer(&[(text.as_str(), -0.1)])) }
    });
    let extractor = Extractor::new(llm)
        .mode(llm_extract::extract::Mode::Prompted)
        .confidence(ConfidenceRule::default());
    let out = extractor.extract::<Person>("Ada, 36.").await.unwrap();
    assert_eq!(out.report.attempts[0].finish, Some(Finish::Loop));
    assert!(out.report.confidence.is_empty());
    assert!(!out.report.no_logprobs);
}

#[tokio::test]
async fn a_resumed_chunk_keeps_its_confidence() {
    let extractor = two_chunks().confidence(ConfidenceRule::default());
    let text = document();
    let mut saved = Vec::new();
    let source = DocumentSource::text(text.as_str()).on_chunk(|chunk, items, _, _| {
        saved.push(DoneChunk::new(chunk, items));
    });
    let first = extractor.extract_document::<Founder>(source).await.unwrap();
    // Kept on disk between runs, then given back: no chunk is asked again.
    let saved: Vec<DoneChunk> =
        serde_json::from_str(&serde_json::to_string(&saved).unwrap()).unwrap();
    let never = from_fn(|_| async {
        Err(LlmError::Other {
            message: "asked again".into(),
        })
    });
    let resumed = Extractor::new(never)
        .chunk_bytes(100)
        .chunk_overlap(0)
        .confidence(ConfidenceRule::default())
        .extract_document::<Founder>(DocumentSource::text(text.as_str()).resume(saved))
        .await
        .unwrap();
    assert!(resumed.chunks.iter().all(|chunk| chunk.resumed));
    assert_eq!(resumed.confidence, first.confidence);
    assert!(close(resumed.confidence["/0/company"], -0.3));
}

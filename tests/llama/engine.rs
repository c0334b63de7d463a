//! The embedded llama.cpp engine on a real model: constrained decoding (llguidance and llama.cpp's GBNF
//! sampler), JSON Lines, streaming, cancellation, limits and errors. Also: every GBNF-dialect schema of
//! the annotated types converts to a grammar with llama.cpp's converter (the one Ollama enforces).
//!
//! The model is loaded once for the binary (see `llama_common`); answers are kept short.
#![cfg(feature = "llama-cpp")]

use crate::common;
use crate::llama_common;

use common::types::{
    Analysis, ConversationTurn, Extracted, Fact, Keyword, OntologyItem, Polarity, Sentiment,
    Subject,
};
use futures_util::StreamExt;
use llama_common::{model, ONTOLOGY_TEXT, PERSON_AND_COMPANY};
use llm_extract::llm::llama_cpp::{schema_to_grammar, GrammarEngine, LlamaCpp, LlamaCppError};
use llm_extract::llm::{ChatEvent, Message};
use llm_extract::{
    llm::{ChatRequest, Finish},
    schema::{Dialect, SchemaSet, Shape},
    Llm, LlmError, Schema,
};
use serde_json::{json, Value};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Fails a test that would otherwise hang (a queue slot never freed, a stream never ended).
const PATIENCE: Duration = Duration::from_secs(120);

fn ollama_schema(set: &SchemaSet, shape: Shape) -> Value {
    set.for_dialect(Dialect::Gbnf, shape)
        .unwrap_or_else(|e| panic!("{} {shape:?}: {e}", set.name()))
        .clone()
}

fn extracted_request() -> ChatRequest {
    ChatRequest::new(format!(
        "Who is the person and which is the company?\n\n{PERSON_AND_COMPANY}"
    ))
    .with_system("Extract the person and the company the text names, as JSON.")
    .with_schema("Extracted", ollama_schema(Extracted::schema(), Shape::One))
    .with_max_tokens(64)
}

/// A one-key object whose answer must start with `{"answer": "`.
fn answer_schema() -> Value {
    json!({"type": "object", "properties": {"answer": {"type": "string", "maxLength": 40}},
           "required": ["answer"], "additionalProperties": false})
}

async fn chat(
    llm: &LlamaCpp,
    request: ChatRequest,
) -> Result<llm_extract::llm::ChatResponse, LlmError> {
    tokio::time::timeout(PATIENCE, llm.chat(request))
        .await
        .expect("the request did not finish in time")
}

#[test]
fn every_ollama_schema_of_the_annotated_types_converts_to_a_grammar() {
    let sets = [
        Extracted::schema(),
        Fact::schema(),
        OntologyItem::schema(),
        ConversationTurn::schema(),
        Analysis::schema(),
        Subject::schema(),
        Keyword::schema(),
        Sentiment::schema(),
        Polarity::schema(),
    ];
    for set in sets {
        for shape in [Shape::One, Shape::Line, Shape::List] {
            let schema = ollama_schema(set, shape);
            let grammar = schema_to_grammar(&schema)
                .unwrap_or_else(|e| panic!("{} {shape:?} does not convert: {e}", set.name()));
            assert!(
                grammar.contains("root ::="),
                "{} {shape:?}: {grammar}",
                set.name()
            );
        }
    }
}

#[test]
fn a_schema_no_grammar_can_hold_is_an_error_before_generation() {
    // `true` under a property, which llama.cpp's converter rejects, is taken: llguidance reads the schema
    // itself. A required property that accepts no value is refused by both llguidance and the lowering.
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let any = ChatRequest::new("anything")
        .with_schema("Any", json!({"type": "object", "properties": {"v": true}}))
        .with_max_tokens(1);
    let (deltas, done) = runtime.block_on(async {
        let mut stream = model().chat_stream(any).await.unwrap();
        let mut deltas = Vec::new();
        let mut done = None;
        while let Some(event) = tokio::time::timeout(PATIENCE, stream.next()).await.unwrap() {
            match event.unwrap() {
                ChatEvent::Delta(d) => deltas.push(d),
                ChatEvent::Done(response) => done = Some(response),
                other => panic!("unexpected event {other:?}"),
            }
        }
        (deltas, done.expect("a stream ends with Done"))
    });
    // One token, and the grammar made it the object's opening.
    assert_eq!(
        (&done.finish, done.usage.completion_tokens),
        (&Finish::Length, 1),
        "{done:?}"
    );
    assert!(done.text.trim_start().starts_with('{'), "{:?}", done.text);
    assert_eq!(deltas.concat(), done.text);
    let request = ChatRequest::new("anything").with_schema(
        "Bad",
        json!({"type": "object", "properties": {"v": false}, "required": ["v"]}),
    );
    let err = runtime
        .block_on(model().chat_stream(request))
        .err()
        .expect("a schema no grammar can hold must fail the request");
    assert!(
        matches!(err, LlmError::LlamaCpp(LlamaCppError::Grammar { .. })),
        "{err}"
    );
}

#[tokio::test]
async fn a_schema_constrains_the_answer_to_one_valid_value() {
    let answer = chat(model(), extracted_request()).await.unwrap();
    let value: Value =
        serde_json::from_str(&answer.text).unwrap_or_else(|e| panic!("{e}: {}", answer.text));
    let validator = Extracted::schema().validator().unwrap();
    assert!(validator.is_valid(&value), "{value} does not validate");
    let extracted: Extracted = serde_json::from_value(value).unwrap();
    // The 135M model is weak, but on this sentence it names one of the two.
    let named = [extracted.person.as_deref(), extracted.company.as_deref()];
    assert!(
        named
            .iter()
            .flatten()
            .any(|n| n.contains("Nadella") || n.contains("Microsoft")),
        "{extracted:?}"
    );
    assert_eq!(answer.finish, Finish::Stop);
    assert!(
        answer.usage.prompt_tokens > 10 && answer.usage.completion_tokens > 3,
        "{:?}",
        answer.usage
    );
    assert_eq!(answer.model.as_deref(), Some(model().model_name()));
}

#[tokio::test]
async fn llama_cpp_grammar_sampler_constrains_too() {
    let llm = LlamaCpp::builder(model().model_path())
        .grammar_engine(GrammarEngine::Gbnf)
        .build()
        .unwrap();
    let answer = chat(&llm, extracted_request()).await.unwrap();
    let value: Value =
        serde_json::from_str(answer.text.trim()).unwrap_or_else(|e| panic!("{e}: {}", answer.text));
    assert!(
        Extracted::schema().validator().unwrap().is_valid(&value),
        "{value}"
    );
}

#[tokio::test]
async fn json_lines_grammar_gives_one_valid_compact_item_per_line() {
    let request = ChatRequest::new(format!(
        "List the entities, relationships and attributes.\n\n{ONTOLOGY_TEXT}"
    ))
    .with_system("Answer with JSON Lines: one JSON object per line.")
    .with_schema(
        "OntologyItem",
        ollama_schema(OntologyItem::schema(), Shape::Line),
    )
    .with_json_lines(true)
    .with_max_tokens(120);
    let answer = chat(model(), request).await.unwrap();
    let validator = OntologyItem::schema().validator().unwrap();
    let lines: Vec<&str> = answer.text.split_terminator('\n').collect();
    // Every line but a cut-off last one is a complete item.
    let complete = if answer.finish == Finish::Length && !answer.text.ends_with('\n') {
        &lines[..lines.len().saturating_sub(1)]
    } else {
        &lines[..]
    };
    assert!(
        !complete.is_empty(),
        "no complete line in {:?}",
        answer.text
    );
    for line in complete {
        let value: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line:?}"));
        assert!(validator.is_valid(&value), "{value}");
        let _: OntologyItem = serde_json::from_value(value).unwrap();
    }
}

#[tokio::test]
async fn max_tokens_ends_the_answer_with_a_length_finish() {
    let request = ChatRequest::new("Tell me a long story about a dragon.").with_max_tokens(6);
    let answer = chat(model(), request).await.unwrap();
    assert_eq!(answer.finish, Finish::Length);
    assert_eq!(answer.usage.completion_tokens, 6);
    assert!(!answer.text.is_empty());
}

#[tokio::test]
async fn deltas_add_up_to_the_answer() {
    let request = ChatRequest::new("Say hello in French and in German.").with_max_tokens(24);
    let mut stream = model().chat_stream(request).await.unwrap();
    let mut deltas = Vec::new();
    let mut done = None;
    while let Some(event) = tokio::time::timeout(PATIENCE, stream.next()).await.unwrap() {
        match event.unwrap() {
            ChatEvent::Delta(d) => deltas.push(d),
            ChatEvent::Done(response) => done = Some(response),
            other => panic!("unexpected event {other:?}"),
        }
    }
    let done = done.expect("a stream ends with Done");
    assert!(deltas.len() > 1, "the answer came in one piece: {deltas:?}");
    assert_eq!(deltas.concat(), done.text);
}

#[tokio::test]
async fn dropping_the_stream_stops_generation_and_frees_the_queue() {
    // One generation at a time: if the dropped request kept its slot, the next one would never start.
    let llm = LlamaCpp::builder(model().model_path())
        .parallel(1)
        .build()
        .unwrap();
    let mut stream = llm
        .chat_stream(ChatRequest::new("Count from one to one thousand.").with_max_tokens(2000))
        .await
        .unwrap();
    let first = tokio::time::timeout(PATIENCE, stream.next()).await.unwrap();
    assert!(matches!(first, Some(Ok(ChatEvent::Delta(_)))), "{first:?}");
    drop(stream);
    let next = chat(&llm, ChatRequest::new("Say yes.").with_max_tokens(4))
        .await
        .unwrap();
    assert!(next.usage.completion_tokens <= 4);
}

#[tokio::test]
async fn concurrent_requests_all_complete() {
    let llm = model();
    let ask = |n: u32| {
        chat(
            llm,
            ChatRequest::new(format!("Write the number {n} in words.")).with_max_tokens(6),
        )
    };
    let (a, b, c) = tokio::join!(ask(1), ask(2), ask(3));
    for answer in [a, b, c] {
        assert!(answer.unwrap().usage.completion_tokens > 0);
    }
}

#[tokio::test]
async fn decoding_is_reproducible_greedy_or_seeded() {
    let greedy = || ChatRequest::new("Name a colour.").with_max_tokens(8);
    let a = chat(model(), greedy()).await.unwrap();
    let b = chat(model(), greedy()).await.unwrap();
    assert_eq!(a.text, b.text);
    let seeded = || greedy().with_temperature(1.0).with_seed(42);
    let c = chat(model(), seeded()).await.unwrap();
    let d = chat(model(), seeded()).await.unwrap();
    assert_eq!(c.text, d.text);
}

#[tokio::test]
async fn a_stop_string_ends_the_answer_before_it() {
    let mut request = ChatRequest::new("What is the capital of France?")
        .with_schema("Answer", answer_schema())
        .with_max_tokens(32);
    request.stop = vec!["\"answer\"".into()];
    let answer = chat(model(), request).await.unwrap();
    assert_eq!(answer.text, "{");
    assert_eq!(answer.finish, Finish::Stop);
}

#[tokio::test]
async fn an_assistant_prefill_is_continued_under_the_schema() {
    let prefill = "{\"answer\": \"Par";
    let request = ChatRequest::new("What is the capital of France?")
        .with_schema("Answer", answer_schema())
        .with_message(Message::assistant(prefill))
        .with_max_tokens(32);
    let answer = chat(model(), request).await.unwrap();
    let whole = format!("{prefill}{}", answer.text);
    let value: Value = serde_json::from_str(&whole).unwrap_or_else(|e| panic!("{e}: {whole}"));
    assert!(
        value["answer"].as_str().unwrap().starts_with("Par"),
        "{value}"
    );
}

#[tokio::test]
async fn a_prompt_longer_than_the_context_is_an_error() {
    let llm = LlamaCpp::builder(model().model_path())
        .context_size(64)
        .build()
        .unwrap();
    let long = "word ".repeat(200);
    let err = chat(&llm, ChatRequest::new(long)).await.unwrap_err();
    match err {
        LlmError::LlamaCpp(LlamaCppError::ContextOverflow {
            prompt_tokens,
            context_size,
            ..
        }) => {
            assert!(
                prompt_tokens > 64 && context_size == 64,
                "{prompt_tokens} {context_size}"
            );
        }
        other => panic!("{other}"),
    }
}

#[tokio::test]
async fn a_repeat_penalty_outside_its_range_is_refused() {
    for factor in [0.0, -1.0, f32::NAN, f32::INFINITY] {
        let err = LlamaCpp::builder(model().model_path())
            .repeat_penalty(factor, 64)
            .build()
            .expect_err("an invalid factor must not build");
        assert!(
            matches!(
                err,
                LlmError::LlamaCpp(LlamaCppError::InvalidSetting {
                    setting: "repeat penalty",
                    ..
                })
            ),
            "{factor}: {err}"
        );
        let request = ChatRequest::new("Say yes.")
            .with_max_tokens(4)
            .with_repeat_penalty(factor);
        let err = chat(model(), request).await.unwrap_err();
        assert!(
            matches!(
                err,
                LlmError::LlamaCpp(LlamaCppError::InvalidSetting { .. })
            ),
            "{factor}: {err}"
        );
    }
    let penalised = LlamaCpp::builder(model().model_path())
        .repeat_penalty(1.1, 64)
        .build()
        .unwrap();
    let request = ChatRequest::new("Say yes.")
        .with_max_tokens(4)
        .with_repeat_penalty(1.3);
    let answer = chat(&penalised, request).await.unwrap();
    assert!(
        answer.text.to_lowercase().contains("yes")
            && (1..=4).contains(&answer.usage.completion_tokens),
        "{answer:?}"
    );
    // Asked to go on with a run of one word, the model repeats it to the token limit; a penalty, the
    // model's or the request's, ends the run.
    let la = |text: &str| text.split_whitespace().filter(|w| *w == "la").count();
    let run = ChatRequest::new("Sing.")
        .with_message(Message::assistant("la la la la la la la la"))
        .with_max_tokens(24);
    let plain = chat(model(), run.clone()).await.unwrap();
    assert!(la(&plain.text) >= 20, "{:?}", plain.text);
    let by_model = chat(&penalised, run.clone()).await.unwrap();
    let by_request = chat(model(), run.with_repeat_penalty(1.3)).await.unwrap();
    for answer in [by_model, by_request] {
        assert!(la(&answer.text) <= 4, "{:?}", answer.text);
    }
}

#[test]
fn counting_tokens_hands_the_runtime_to_another_thread() {
    // One worker: while it counts, another task can run only if the count gave its place away.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let text = format!("{PERSON_AND_COMPANY} ").repeat(40_000);
    let counting = Arc::new(AtomicBool::new(false));
    let done = Arc::new(AtomicBool::new(false));
    let ticks = Arc::new(AtomicUsize::new(0));
    runtime.block_on(async {
        let ticker = tokio::spawn({
            let (counting, done, ticks) = (counting.clone(), done.clone(), ticks.clone());
            async move {
                while !done.load(Ordering::Acquire) {
                    if counting.load(Ordering::Acquire) {
                        ticks.fetch_add(1, Ordering::AcqRel);
                    }
                    tokio::time::sleep(Duration::from_millis(1)).await;
                }
            }
        });
        let counter = tokio::spawn(async move {
            counting.store(true, Ordering::Release);
            let started = std::time::Instant::now();
            let tokens = model().count_tokens(&text);
            let took = started.elapsed();
            done.store(true, Ordering::Release);
            (tokens, took)
        });
        let (tokens, took) = counter.await.unwrap();
        ticker.await.unwrap();
        assert!(tokens.unwrap() > 400_000, "{tokens:?}");
        assert!(
            ticks.load(Ordering::Acquire) > 0,
            "no other task ran during {took:?} of counting"
        );
    });
}

#[test]
fn a_truncated_model_file_is_a_load_error() {
    let bytes = std::fs::read(model().model_path()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("truncated.gguf");
    std::fs::write(&path, &bytes[..bytes.len().min(4 << 20)]).unwrap();
    let result = LlamaCpp::load(&path);
    let err = result.expect_err("a truncated GGUF must not load");
    assert!(
        matches!(err, LlmError::LlamaCpp(LlamaCppError::ModelLoad { .. })),
        "{err}"
    );
}

//! The embedded engine's scheduler on a real model: prompt-prefix reuse changes nothing but the work
//! done, and many concurrent requests decoded as sequences of shared batches (some cancelled midway)
//! give each the answer it gets alone.
#![cfg(feature = "llama-cpp")]

mod llama_common;

use futures_util::StreamExt;
use llama_common::model;
use llm_extract::llm::llama_cpp::LlamaCpp;
use llm_extract::llm::ChatEvent;
use llm_extract::{ChatRequest, Llm};
use serde_json::{json, Value};
use std::time::Duration;

/// Fails a test that would otherwise hang (a slot never freed, a stream never ended).
const PATIENCE: Duration = Duration::from_secs(600);

fn person_schema() -> Value {
    json!({"type": "object", "properties": {
        "name": {"type": "string", "maxLength": 40},
        "city": {"type": "string", "maxLength": 40}},
        "required": ["name", "city"], "additionalProperties": false})
}

const PEOPLE: &[&str] = &[
    "Ada Lovelace lived in London.",
    "Marie Curie worked in Paris.",
    "Nikola Tesla moved to New York.",
    "Alan Turing was born in Maida Vale.",
    "Grace Hopper taught at Vassar in Poughkeepsie.",
    "Hedy Lamarr grew up in Vienna.",
    "Emmy Noether taught in Göttingen.",
    "Carl Gauss lived in Brunswick.",
];

/// The same system prompt for every request, as in a batch of documents.
fn request(text: &str) -> ChatRequest {
    ChatRequest::new(format!("Who is the person and where?\n\n{text}"))
        .with_system(
            "Extract the person the text names and the city it places them in, as JSON. Copy the \
             name and the city exactly as the text writes them.",
        )
        .with_schema("Person", person_schema())
        .with_max_tokens(40)
}

fn engine(parallel: usize, reuse_prefix: bool) -> LlamaCpp {
    LlamaCpp::builder(model().model_path())
        .parallel(parallel)
        .reuse_prefix(reuse_prefix)
        .build()
        .unwrap()
}

#[test]
fn prefix_reuse_gives_the_same_greedy_answers() {
    let without = engine(1, false);
    let with = engine(1, true);
    for (i, text) in PEOPLE.iter().enumerate() {
        let a = without.generate(&request(text), |_| true).unwrap();
        let b = with.generate(&request(text), |_| true).unwrap();
        assert_eq!(a.response.text, b.response.text, "document {i}");
        assert_eq!(a.reused_prompt_tokens, 0);
        if i > 0 {
            // Everything up to the user turn is shared: the system prompt and the question's start.
            assert!(
                b.reused_prompt_tokens >= 30,
                "document {i}: only {} tokens reused",
                b.reused_prompt_tokens
            );
        }
    }
    // The last request again (its tokens are what the one slot holds) reuses all of its prompt but the
    // last token, and answers the same.
    let last = PEOPLE[PEOPLE.len() - 1];
    let again = with.generate(&request(last), |_| true).unwrap();
    let first = without.generate(&request(last), |_| true).unwrap();
    assert_eq!(
        again.reused_prompt_tokens + 1,
        again.response.usage.prompt_tokens
    );
    assert_eq!(again.response.text, first.response.text);
}

#[test]
fn a_prefix_is_shared_from_another_slot() {
    // Four slots: the requests of one thread land in whichever slot is free, and a request whose prefix
    // is cached in another slot copies it over; the answers match an engine without reuse.
    let with = engine(4, true);
    let without = engine(1, false);
    std::thread::scope(|scope| {
        for chunk in PEOPLE.chunks(2) {
            let with = &with;
            let without = &without;
            scope.spawn(move || {
                for text in chunk {
                    let a = with.generate(&request(text), |_| true).unwrap();
                    let b = without.generate(&request(text), |_| true).unwrap();
                    assert_eq!(a.response.text, b.response.text, "{text}");
                }
            });
        }
    });
    let last = with.generate(&request(PEOPLE[3]), |_| true).unwrap();
    assert!(last.reused_prompt_tokens > 0);
}

/// 64 concurrent extractions, every fourth cancelled after its first piece of text: every other one ends
/// with the answer it gets when run alone, one at a time.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn many_concurrent_requests_with_cancellations_match_one_at_a_time() {
    let alone = engine(1, false);
    let mut expected = Vec::new();
    for text in PEOPLE {
        expected.push(alone.chat(request(text)).await.unwrap().text);
    }
    drop(alone);
    let llm = engine(4, true);
    let tasks: Vec<_> = (0..64)
        .map(|i| {
            let llm = llm.clone();
            tokio::spawn(async move {
                let text = PEOPLE[i % PEOPLE.len()];
                let mut stream = llm.chat_stream(request(text)).await.unwrap();
                if i % 4 == 3 {
                    let first = stream.next().await;
                    assert!(matches!(first, Some(Ok(ChatEvent::Delta(_)))), "{first:?}");
                    drop(stream);
                    return None;
                }
                let mut answer = String::new();
                while let Some(event) = stream.next().await {
                    match event.unwrap() {
                        ChatEvent::Delta(piece) => answer.push_str(&piece),
                        ChatEvent::Done(done) => {
                            assert_eq!(done.text, answer);
                            return Some((i, answer));
                        }
                        _ => {}
                    }
                }
                panic!("request {i}: the stream ended without an answer");
            })
        })
        .collect();
    let mut completed = 0;
    for task in tasks {
        let outcome = tokio::time::timeout(PATIENCE, task)
            .await
            .expect("the requests did not finish in time")
            .unwrap();
        if let Some((i, answer)) = outcome {
            assert_eq!(answer, expected[i % PEOPLE.len()], "request {i}");
            completed += 1;
        }
    }
    assert_eq!(completed, 48);
    // The engine is still usable afterwards, and answers the same.
    let after = llm.chat(request(PEOPLE[1])).await.unwrap();
    assert_eq!(after.text, expected[1]);
}

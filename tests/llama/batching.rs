//! The embedded engine's scheduler on a real model: prompt-prefix reuse changes nothing but the work
//! done, and many concurrent requests decoded as sequences of shared batches (some cancelled midway)
//! give each the answer it gets alone.
#![cfg(feature = "llama-cpp")]

use crate::llama_common;

use futures_util::StreamExt;
use llama_common::model;
use llm_extract::llm::llama_cpp::LlamaCpp;
use llm_extract::llm::ChatEvent;
use llm_extract::{llm::ChatRequest, Llm};
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

/// The same system prompt for every request, as in a batch of documents: long enough (over two of the
/// engine's 64-token prompt pieces) that whole pieces of it are reused.
const SYSTEM: &str = "Extract the person the text names and the city it places them in, as JSON. Copy \
    the name and the city exactly as the text writes them. The name is the person's full name as written, \
    with any title left out. The city is the place the text puts the person in: where they lived, worked, \
    taught, were born or moved to. When the text names a district or a town, that is the city. Never \
    guess a place the text does not name, never translate a name, and never add a country.";

fn request(text: &str) -> ChatRequest {
    ChatRequest::new(format!("Who is the person and where?\n\n{text}"))
        .with_system(SYSTEM)
        .with_schema("Person", person_schema())
        .with_max_tokens(40)
}

/// Prompt tokens are reused in whole 64-token pieces, and all but the last token at most.
fn assert_whole_pieces(reused: u64, prompt: u64) {
    assert_eq!(reused % 64, 0, "{reused} of {prompt}");
    assert!(reused < prompt, "{reused} of {prompt}");
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
        assert_whole_pieces(b.reused_prompt_tokens, b.response.usage.prompt_tokens);
        if i > 0 {
            // Everything up to the user turn is shared (the system prompt and the question's start),
            // and its whole pieces are reused.
            assert!(
                b.reused_prompt_tokens >= 64,
                "document {i}: only {} tokens reused",
                b.reused_prompt_tokens
            );
        }
    }
    // The last request again (its tokens are what the one slot holds) reuses all of its prompt but the
    // last piece, and answers the same.
    let last = PEOPLE[PEOPLE.len() - 1];
    let again = with.generate(&request(last), |_| true).unwrap();
    let first = without.generate(&request(last), |_| true).unwrap();
    let prompt = again.response.usage.prompt_tokens;
    assert_whole_pieces(again.reused_prompt_tokens, prompt);
    assert!(again.reused_prompt_tokens + 64 >= prompt, "{again:?}");
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

/// Free text (no schema to narrow the choice) is where near-ties between two tokens show: each request is
/// asked twice of an engine with reuse (the second time all its prompt but the last piece is cached) and
/// once of an engine without.
#[test]
fn reuse_gives_the_same_free_text_as_reading_everything() {
    let without = engine(1, false);
    let with = engine(1, true);
    let ask = |text: &str| {
        ChatRequest::new(format!(
            "Write three sentences about the person in this text, then three about the city.\n\n{text}"
        ))
        .with_system(SYSTEM)
        .with_max_tokens(96)
    };
    let mut reused_all_but_the_tail = 0;
    for text in PEOPLE {
        let expected = without
            .generate(&ask(text), |_| true)
            .unwrap()
            .response
            .text;
        for round in 0..2 {
            let got = with.generate(&ask(text), |_| true).unwrap();
            assert_eq!(got.response.text, expected, "{text}, round {round}");
            let prompt = got.response.usage.prompt_tokens;
            assert_whole_pieces(got.reused_prompt_tokens, prompt);
            if round == 1 && got.reused_prompt_tokens > 0 && got.reused_prompt_tokens + 64 >= prompt
            {
                reused_all_but_the_tail += 1;
            }
        }
    }
    assert_eq!(reused_all_but_the_tail, PEOPLE.len());
}

/// A system prompt of about 1,000 tokens (instructions and worked examples), as a batch of documents
/// shares: where reading all of it again and reusing it are most likely to part ways.
fn long_system_prompt() -> String {
    let vendors = [
        "Acme Tools Ltd",
        "Nordlicht GmbH",
        "Blue Harbor Supplies",
        "Café Lumière SARL",
    ];
    let currencies = ["EUR", "USD", "GBP", "JPY"];
    let mut text = String::from(
        "You extract invoice data for an accounting system. Read the document and answer with one JSON \
         object. Copy numbers exactly as printed, keep the currency code, and never invent a value.\n",
    );
    for i in 0..14 {
        let (vendor, currency) = (vendors[i % 4], currencies[i % 4]);
        let (number, total) = (20_000 + i * 11, 100 + i * 17);
        text.push_str(&format!(
            "Example {i}: \"Invoice INV-{number:05} from {vendor} dated 2023-0{}-1{} for {total}.00 \
             {currency}\" gives number INV-{number:05}, vendor {vendor}, total {total}.00, currency \
             {currency}.\n",
            i % 9 + 1,
            i % 9,
        ));
    }
    text
}

/// Long prompts read again vs reused: the same greedy answers, document for document. Before prompts were
/// read in aligned pieces, the tail after a reused prefix was read in a batch of another size than a
/// fresh read puts it in, and on these prompts some answers differed.
#[test]
fn reuse_of_a_long_shared_prompt_gives_the_same_answers() {
    let schema = json!({"type": "object", "properties": {
        "number": {"type": "string", "maxLength": 20},
        "vendor": {"type": "string", "maxLength": 40},
        "total": {"type": "number"},
        "currency": {"type": "string", "maxLength": 3}},
        "required": ["number", "vendor", "total", "currency"], "additionalProperties": false});
    let system = long_system_prompt();
    let documents = [
        "Invoice INV-31877 from Tanaka Precision Co., dated 2024-03-02. Amount due: 1,250.00 JPY.",
        "Green Valley Farms billed us 87.40 EUR on invoice GV-2024-118 (14 May 2024).",
        "Rechnung Nr. 2024/0099 der Nordlicht GmbH vom 3. Juni 2024 über 4.310,00 EUR.",
        "Blue Harbor Supplies, invoice BH-7781, 2024-07-19, total due USD 15,999.99.",
        "Facture F-2024-552 de Café Lumière SARL, le 21/08/2024, montant 642,10 EUR.",
        "Acme Tools Ltd invoice #A-1009 dated 09/09/2024, balance 73.00 GBP.",
    ];
    let ask = |text: &str| {
        ChatRequest::new(text)
            .with_system(system.clone())
            .with_schema("Invoice", schema.clone())
            .with_max_tokens(64)
    };
    let without = engine(1, false);
    let with = engine(1, true);
    let mut reused = 0;
    for text in documents {
        let a = without.generate(&ask(text), |_| true).unwrap();
        let b = with.generate(&ask(text), |_| true).unwrap();
        assert_eq!(a.response.text, b.response.text, "{text}");
        assert_whole_pieces(b.reused_prompt_tokens, b.response.usage.prompt_tokens);
        reused += b.reused_prompt_tokens;
    }
    // All but the first document reuse the system prompt's whole pieces.
    assert!(reused >= 5 * 512, "only {reused} tokens reused");
}

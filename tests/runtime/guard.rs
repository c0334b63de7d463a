//! Loops and early stops against a real local HTTP server (Ollama NDJSON and OpenAI SSE): a loop stops
//! the stream (the server's answer never has to end), the next attempt recovers with a repeat penalty,
//! and every answer stopped early or broken still reports what it cost (estimated).

use crate::support;

use futures_util::StreamExt;
use llm_extract::extract::LoopGuard;
use llm_extract::extract::{ExtractErrorKind, Extractor, Mode};
use llm_extract::llm::Finish;
use llm_extract::llm::{Ollama, OpenAiCompatible};
use llm_extract::report::LoopKind;
use llm_extract::report::{AttemptError, AttemptKind};
use serde_json::json;
use std::time::Duration;
use support::types::{entity, entity_line, Entity, Person};
use support::{ollama, openai, Answer, Ending, TestServer};

fn ollama_client(server: &TestServer) -> Ollama {
    Ollama::builder("test-model")
        .host(server.url())
        .idle_timeout(Duration::from_secs(20))
        .build()
        .unwrap()
}

fn openai_client(server: &TestServer) -> OpenAiCompatible {
    OpenAiCompatible::builder(server.url(), "test-model")
        .idle_timeout(Duration::from_secs(20))
        .build()
        .unwrap()
}

/// A person whose age never ends: `"age": 1000000…`, then the server goes silent, connection open.
fn digit_run() -> Answer {
    Answer::new(format!(r#"{{"name": "Ada", "age": 1{}"#, "0".repeat(400)))
        .pieces_of(1)
        .ending(Ending::Stall)
}

#[tokio::test]
async fn ollama_a_digit_run_is_stopped_and_the_next_attempt_adds_a_repeat_penalty() {
    let server = TestServer::script(vec![
        ollama(digit_run()),
        ollama(Answer::new(r#"{"name": "Ada", "age": 36}"#)),
    ]);
    let llm = ollama_client(&server);
    let out = Extractor::new(&llm)
        .extract::<Person>("Ada, 36.")
        .await
        .unwrap();
    assert_eq!((out.value.name.as_str(), out.value.age), ("Ada", 36));
    assert_eq!(out.report.attempts.len(), 2);

    let looped = &out.report.attempts[0];
    assert_eq!(looped.finish, Some(Finish::Loop));
    let found = looped.looped.clone().expect("where the loop started");
    assert_eq!(found.kind, LoopKind::Run);
    assert_eq!(found.start, looped.raw.find("00").unwrap());
    assert!(matches!(looped.error, Some(AttemptError::Loop(_))));
    // Stopped after the run limit, long before the 400 zeros the server had.
    assert!(looped.raw.len() < 80, "{}", looped.raw);
    assert!(looped.usage.estimated);
    assert_eq!(looped.usage.completion_tokens, looped.raw.len() as u64);
    assert!(looped.usage.prompt_tokens > 0);

    let recovery = &out.report.attempts[1];
    assert_eq!(recovery.kind, AttemptKind::Recovery);
    assert_eq!(recovery.sampling.repeat_penalty, Some(1.3));
    assert!(out.report.usage.estimated);

    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    for request in &requests {
        assert_eq!(
            request.json["stream"], true,
            "one value is streamed to be watched"
        );
        assert_eq!(request.json["options"]["temperature"], json!(0.0));
        assert_eq!(request.json["options"]["seed"], json!(0));
    }
    assert!(requests[0].json["options"].get("repeat_penalty").is_none());
    let penalty = requests[1].json["options"]["repeat_penalty"]
        .as_f64()
        .unwrap();
    assert!((penalty - 1.3).abs() < 1e-6);
    // The recovery asks afresh: the looping answer is not echoed back.
    assert_eq!(requests[1].messages(), requests[0].messages());
}

#[tokio::test]
async fn openai_a_digit_run_is_stopped_and_the_next_attempt_adds_a_frequency_penalty() {
    let server = TestServer::script(vec![
        openai(digit_run()),
        openai(Answer::new(r#"{"name": "Ada", "age": 36}"#)),
    ]);
    let llm = openai_client(&server);
    let out = Extractor::new(&llm)
        .extract::<Person>("Ada, 36.")
        .await
        .unwrap();
    assert_eq!(out.value.age, 36);
    assert_eq!(out.report.attempts[0].finish, Some(Finish::Loop));
    assert!(
        out.report.attempts[0].usage.estimated
            && out.report.attempts[0].usage.completion_tokens > 0
    );
    let requests = server.requests();
    assert_eq!(requests[0].json["temperature"], json!(0.0));
    assert_eq!(requests[0].json["seed"], json!(0));
    assert!(requests[0].json.get("frequency_penalty").is_none());
    let penalty = requests[1].json["frequency_penalty"].as_f64().unwrap();
    assert!((penalty - 0.3).abs() < 1e-6, "{penalty}");
}

#[tokio::test]
async fn a_model_that_always_loops_fails_with_the_loop_and_its_cost() {
    let server = TestServer::script(vec![
        ollama(digit_run()),
        ollama(digit_run()),
        ollama(digit_run()),
    ]);
    let llm = ollama_client(&server);
    let err = Extractor::new(&llm)
        .extract::<Person>("Ada, 36.")
        .await
        .unwrap_err();
    assert!(matches!(err.kind(), ExtractErrorKind::Loop(_)), "{err}");
    assert_eq!(err.attempts().len(), 3);
    // The third attempt adds a temperature with a fixed seed.
    let third = &server.requests()[2].json["options"];
    assert!((third["temperature"].as_f64().unwrap() - 0.3).abs() < 1e-6);
    assert_eq!(third["seed"], json!(0));
    assert!(err.usage().completion_tokens > 0 && err.usage().estimated);
}

fn items(names: &[&str]) -> String {
    names
        .iter()
        .map(|n| format!("{}\n", entity_line(n, "person")))
        .collect()
}

#[tokio::test]
async fn items_that_cycle_are_stopped_and_the_list_continues_after_the_last_good_item() {
    let cycle = items(&["Ada", "Bob", "Ada", "Bob", "Ada", "Bob", "Ada", "Bob"]);
    let server = TestServer::script(vec![
        ollama(Answer::new(cycle).pieces_of(5).ending(Ending::Stall)),
        ollama(Answer::new(items(&["Cyd"]))),
    ]);
    let llm = ollama_client(&server);
    let out = Extractor::new(&llm)
        .mode(Mode::Prompted)
        .extract_all::<Entity>("x")
        .await
        .unwrap();
    assert_eq!(
        out.value,
        [
            entity("Ada", "person"),
            entity("Bob", "person"),
            entity("Cyd", "person")
        ]
    );
    let looped = &out.report.attempts[0];
    assert_eq!(looped.finish, Some(Finish::Loop));
    assert_eq!(
        looped.looped.as_ref().map(|l| l.kind),
        Some(LoopKind::Items)
    );
    assert_eq!(looped.items, 2);
    assert!(looped.usage.estimated && looped.usage.completion_tokens > 0);
    assert_eq!(out.report.attempts[1].kind, AttemptKind::Recovery);
    let second = &server.requests()[1];
    let messages = second.messages();
    let (role, done) = &messages[messages.len() - 2];
    assert_eq!(role, "assistant");
    assert!(done.contains("Ada") && done.contains("Bob"), "{done}");
    assert!(second.last_message().contains("repeated items"));
    assert!(second.json["options"]["repeat_penalty"].as_f64().is_some());
}

#[tokio::test]
async fn item_copies_is_the_number_of_copies_in_a_row_that_make_a_loop() {
    let answer = || Answer::new(items(&["Ada", "Ada", "Bob"]));
    // One copy is within the default of two.
    let server = TestServer::script(vec![ollama(answer())]);
    let llm = ollama_client(&server);
    let out = Extractor::new(&llm)
        .mode(Mode::Prompted)
        .extract_all::<Entity>("x")
        .await
        .unwrap();
    assert_eq!(out.report.attempts.len(), 1);
    assert_eq!(out.report.attempts[0].looped, None);

    // At one, the first copy is a loop: the stream stops there and the list continues after Ada.
    let server = TestServer::script(vec![ollama(answer()), ollama(Answer::new(items(&["Cyd"])))]);
    let llm = ollama_client(&server);
    let out = Extractor::new(&llm)
        .mode(Mode::Prompted)
        .item_copies(1)
        .extract_all::<Entity>("x")
        .await
        .unwrap();
    let looped = &out.report.attempts[0];
    assert_eq!(looped.finish, Some(Finish::Loop));
    assert_eq!(
        looped.looped.as_ref().map(|l| l.kind),
        Some(LoopKind::Items)
    );
    assert_eq!(
        out.value,
        [entity("Ada", "person"), entity("Cyd", "person")]
    );
}

#[tokio::test]
async fn max_items_stops_the_stream_and_still_reports_its_cost() {
    let list = items(&["Ada", "Bob", "Cyd"]);
    let server = TestServer::script(vec![ollama(
        Answer::new(list).pieces_of(3).ending(Ending::Stall),
    )]);
    let llm = ollama_client(&server);
    let out = Extractor::new(&llm)
        .mode(Mode::Prompted)
        .max_items(1)
        .extract_all::<Entity>("x")
        .await
        .unwrap();
    assert_eq!(out.value, [entity("Ada", "person")]);
    assert_eq!(out.report.finish, Some(Finish::MaxItems));
    assert!(out.report.usage.estimated);
    assert!(out.report.usage.completion_tokens > 0 && out.report.usage.prompt_tokens > 0);
}

#[tokio::test]
async fn a_broken_stream_still_reports_its_cost() {
    for many in [false, true] {
        let text = if many {
            items(&["Ada", "Bob"])
        } else {
            r#"{"name": "Ada", "#.to_owned()
        };
        let server = TestServer::script(vec![openai(
            Answer::new(text).pieces_of(4).ending(Ending::Drop),
        )]);
        let llm = openai_client(&server);
        let extractor = Extractor::new(&llm).mode(Mode::Prompted);
        let err = if many {
            extractor
                .extract_all::<Entity>("x")
                .await
                .unwrap_err()
                .map_kept(|item| serde_json::to_value(item).unwrap())
        } else {
            extractor.extract::<Person>("x").await.unwrap_err()
        };
        assert!(matches!(err.kind(), ExtractErrorKind::Llm(_)), "{err}");
        let usage = err.attempts()[0].usage;
        assert!(usage.estimated, "many: {many}");
        assert!(
            usage.completion_tokens > 0 && usage.prompt_tokens > 0,
            "many: {many}"
        );
        assert_eq!(err.usage(), usage);
    }
}

#[tokio::test]
async fn a_stream_its_caller_stops_reading_says_what_it_spent() {
    let server = TestServer::script(vec![ollama(
        Answer::new(items(&["Ada", "Bob"]))
            .pieces_of(3)
            .ending(Ending::Stall),
    )]);
    let llm = ollama_client(&server);
    let extractor = Extractor::new(&llm).mode(Mode::Prompted);
    let mut stream = extractor.extract_stream::<Entity>("x");
    let first = stream.next().await.unwrap().unwrap();
    assert_eq!(first, entity("Ada", "person"));
    let spent = stream.usage();
    assert!(spent.estimated);
    assert!(spent.completion_tokens > 0 && spent.prompt_tokens > 0);
    // Dropping it cancels the request; the server stalls, so nothing else could end it.
    drop(stream);
}

#[tokio::test]
async fn with_the_guard_off_one_value_is_not_streamed() {
    let server = TestServer::script(vec![ollama(Answer::new(r#"{"name": "Ada", "age": 36}"#))]);
    let llm = ollama_client(&server);
    let out = Extractor::new(&llm)
        .loop_guard(LoopGuard::off())
        .extract::<Person>("x")
        .await
        .unwrap();
    assert_eq!(out.value.age, 36);
    assert!(!out.report.usage.estimated);
    assert_eq!(server.requests()[0].json["stream"], false);
}

#[tokio::test]
async fn a_loop_after_a_complete_value_keeps_the_value_and_asks_nothing_more() {
    // The model closes its answer, then chats on and loops in the prose: the value before the loop is
    // the answer (seen on the real model in prompted mode: "...}\n\nThis JSON-formatted string is a
    // JSON-LD-JSON-LD-JSON-LD-...").
    let chatty = format!(
        "Here is the JSON:\n{{\"name\": \"Ada\", \"age\": 36}}\n\nThis is a JSON-LD{}",
        "-JSON-LD".repeat(60)
    );
    let server = TestServer::script(vec![ollama(
        Answer::new(chatty).pieces_of(3).ending(Ending::Stall),
    )]);
    let llm = ollama_client(&server);
    let out = Extractor::new(&llm)
        .mode(Mode::Prompted)
        .extract::<Person>("Ada, 36.")
        .await
        .unwrap();
    assert_eq!((out.value.name.as_str(), out.value.age), ("Ada", 36));
    assert_eq!(out.report.attempts.len(), 1, "{:?}", out.report.attempts);
    let attempt = &out.report.attempts[0];
    assert!(attempt.error.is_none(), "{attempt:?}");
    assert_eq!(attempt.finish, Some(Finish::Loop));
    assert!(attempt.looped.is_some());
    assert!(attempt.usage.completion_tokens > 0 && attempt.usage.estimated);
    assert_eq!(server.requests().len(), 1);
}

//! The extraction loop against scripted closures: exact message shapes of repairs and continuations,
//! caps, truncation, loops, max_items, budget, templates, modes, streams and untyped twins.

use crate::support;

use futures_util::{stream, StreamExt};
use llm_extract::extract::{ExtractErrorKind, Extractor, Input, Mode};
use llm_extract::llm::{
    from_fn, from_stream_fn, ChatEvent, ChatRequest, ChatResponse, ChatStream, Llm, LlmError, Role,
};
use llm_extract::report::AttemptKind;
use llm_extract::Schema;
use llm_extract::{
    extract::LoopGuard,
    llm::Finish,
    schema::{Dialect, SchemaSet, Shape},
    Extract,
};
use serde_json::{json, Value};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use support::types::{entity, entity_line, entity_schema, Entity, Person};

type Log = Arc<Mutex<Vec<ChatRequest>>>;

/// A backend answering with `answers` in order, recording every request.
fn scripted(answers: Vec<ChatResponse>) -> (impl Llm, Log) {
    let log: Log = Arc::default();
    let queue = Arc::new(Mutex::new(VecDeque::from(answers)));
    let recorded = Arc::clone(&log);
    let llm = from_fn(move |request: ChatRequest| {
        recorded.lock().unwrap().push(request);
        let next = queue.lock().unwrap().pop_front();
        async move { next.ok_or_else(|| LlmError::other("the script has no more answers")) }
    });
    (llm, log)
}

fn answer(text: &str) -> ChatResponse {
    ChatResponse::new(text).with_usage(10, 5)
}

fn roles(request: &ChatRequest) -> Vec<Role> {
    request.messages.iter().map(|m| m.role).collect()
}

#[tokio::test]
async fn a_valid_answer_takes_one_attempt() {
    let (llm, log) = scripted(vec![answer(r#"{"name": "Ada Lovelace", "age": 36}"#)]);
    let out = Extractor::new(&llm)
        .extract::<Person>("Ada Lovelace died at 36.")
        .await
        .unwrap();
    assert_eq!(out.value.name, "Ada Lovelace");
    assert_eq!(out.report.attempts.len(), 1);
    assert_eq!(out.report.usage.total(), 15);
    assert!(out.report.fixes.is_empty());
    let requests = log.lock().unwrap();
    assert_eq!(requests[0].messages.len(), 1);
    assert_eq!(requests[0].messages[0].content, "Ada Lovelace died at 36.");
    let system = requests[0].system.as_deref().unwrap();
    assert!(system.contains(Person::format_instructions()), "{system}");
}

#[tokio::test]
async fn a_fenced_answer_is_fixed_by_the_parser_not_by_another_request() {
    let (llm, log) = scripted(vec![answer(
        "Here you go:\n```json\n{\"name\": \"Ada\", \"age\": 36}\n```",
    )]);
    let out = Extractor::new(&llm).extract::<Person>("x").await.unwrap();
    assert_eq!(out.value.age, 36);
    assert!(
        !out.report.fixes.is_empty(),
        "the envelope removal is recorded"
    );
    assert_eq!(log.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn a_schema_error_is_repaired_with_the_exact_message_shape() {
    let bad = r#"{"name": "Ada", "age": "very old"}"#;
    let (llm, log) = scripted(vec![answer(bad), answer(r#"{"name": "Ada", "age": 36}"#)]);
    let out = Extractor::new(&llm)
        .extract::<Person>("Ada, 36.")
        .await
        .unwrap();
    assert_eq!(out.value.age, 36);
    assert_eq!(out.report.attempts.len(), 2);
    assert_eq!(out.report.attempts[0].kind, AttemptKind::First);
    assert_eq!(out.report.attempts[1].kind, AttemptKind::Repair);
    assert!(out.report.attempts[0].error.is_some());
    assert_eq!(out.report.attempts[0].raw, bad);
    assert_eq!(out.report.usage.total(), 30);

    let requests = log.lock().unwrap();
    let repair = &requests[1];
    assert_eq!(repair.system, requests[0].system);
    assert_eq!(repair.schema, requests[0].schema);
    assert_eq!(roles(repair), [Role::User, Role::Assistant, Role::User]);
    assert_eq!(repair.messages[0], requests[0].messages[0]);
    assert_eq!(repair.messages[1].content, bad);
    let feedback = &repair.messages[2].content;
    assert!(
        feedback.starts_with("Your answer could not be used:\n- schema problem at /age: "),
        "{feedback}"
    );
    assert!(feedback.ends_with("\nAnswer again with the corrected JSON value only."));
    assert!(!feedback.contains("syntax problem"));
}

#[tokio::test]
async fn a_syntax_error_is_named_a_syntax_problem() {
    let (llm, log) = scripted(vec![
        answer("I could not find anyone."),
        answer(r#"{"name": "Ada", "age": 36}"#),
    ]);
    Extractor::new(&llm).extract::<Person>("x").await.unwrap();
    let requests = log.lock().unwrap();
    let feedback = &requests[1].messages[2].content;
    assert!(
        feedback.starts_with("Your answer could not be used:\n- syntax problem"),
        "{feedback}"
    );
}

#[tokio::test]
async fn history_holds_only_the_last_bad_answer() {
    let (llm, log) = scripted(vec![
        answer("bad one"),
        answer("bad two"),
        answer(r#"{"name": "Ada", "age": 36}"#),
    ]);
    Extractor::new(&llm).extract::<Person>("x").await.unwrap();
    let requests = log.lock().unwrap();
    assert_eq!(requests.len(), 3);
    assert_eq!(requests[2].messages.len(), 3);
    assert_eq!(requests[2].messages[1].content, "bad two");
    assert!(requests[2]
        .messages
        .iter()
        .all(|m| !m.content.contains("bad one")));
}

#[tokio::test]
async fn a_long_bad_answer_is_cut_before_it_is_quoted_back() {
    // Long but not a loop: distinct numbers (far longer than the input "x", so the string bound of
    // the loop guard is off here; it is tested in tests/extract/loop_detector.rs).
    let words: String = (0..10_000).map(|i| format!("{i} ")).collect();
    let long = format!("{{\"name\": \"{words}\", \"age\": \"x\"}}");
    let (llm, log) = scripted(vec![answer(&long), answer(r#"{"name": "A", "age": 1}"#)]);
    Extractor::new(&llm)
        .loop_guard(LoopGuard::default().string_margin(None))
        .max_echo_chars(1000)
        .extract::<Person>("x")
        .await
        .unwrap();
    let requests = log.lock().unwrap();
    let echoed = &requests[1].messages[1].content;
    assert!(echoed.chars().count() < 1200, "{}", echoed.len());
    assert!(echoed.contains("characters omitted"));
}

#[tokio::test]
async fn an_answer_that_never_validates_fails_after_the_cap_with_the_whole_ledger() {
    let (llm, log) = scripted(vec![answer("no"), answer("still no"), answer("never")]);
    let err = Extractor::new(&llm)
        .extract::<Person>("x")
        .await
        .unwrap_err();
    assert!(matches!(err.kind(), ExtractErrorKind::Invalid(_)), "{err}");
    assert_eq!(err.attempts().len(), 3, "the default cap is 3 attempts");
    assert_eq!(log.lock().unwrap().len(), 3);
    assert_eq!(err.usage().total(), 45);
    assert_eq!(err.raw(), Some("never"));
    let raws: Vec<_> = err.attempts().iter().map(|a| a.raw.as_str()).collect();
    assert_eq!(raws, ["no", "still no", "never"]);
    assert!(err.attempts().iter().all(|a| a.error.is_some()));
    let text = err.to_string();
    assert!(text.contains("3 attempt(s), 45 tokens"), "{text}");
    assert!(text.contains("never"), "{text}");
}

#[tokio::test]
async fn a_repair_that_gets_the_rejected_answer_back_asks_again_with_a_temperature() {
    // A greedy model shown its error often writes the same answer again: the attempt after such a
    // repeat samples (the loop guard's recovery temperature and seed), and each further repeat raises it.
    let bad = r#"{"name": "Ada", "age": "old"}"#;
    let (llm, log) = scripted(vec![
        answer(bad),
        answer(bad),
        answer(&format!("  {bad}\n")),
        answer(r#"{"name": "Ada", "age": 36}"#),
    ]);
    let out = Extractor::new(&llm)
        .max_attempts(4)
        .extract::<Person>("Ada died at 36.")
        .await
        .unwrap();
    assert_eq!(out.value.age, 36);
    let temperatures: Vec<_> = log.lock().unwrap().iter().map(|r| r.temperature).collect();
    assert_eq!(temperatures, [Some(0.0), Some(0.0), Some(0.3), Some(0.6)]);
    let seeds: Vec<_> = log.lock().unwrap().iter().map(|r| r.seed).collect();
    assert_eq!(
        seeds,
        [Some(0); 4],
        "the seed stays fixed (the default one here)"
    );
    let recorded: Vec<_> = out
        .report
        .attempts
        .iter()
        .map(|a| a.sampling.temperature)
        .collect();
    assert_eq!(
        recorded, temperatures,
        "the ledger shows what each attempt changed"
    );
}

#[tokio::test]
async fn max_attempts_counts_attempts_not_retries() {
    let (llm, log) = scripted(vec![answer("no"), answer("no")]);
    let err = Extractor::new(&llm)
        .max_attempts(1)
        .extract::<Person>("x")
        .await
        .unwrap_err();
    assert_eq!(err.attempts().len(), 1);
    assert_eq!(log.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn a_cut_off_value_is_a_distinct_error_and_is_not_re_asked() {
    let (llm, log) = scripted(vec![
        answer(r#"{"name": "Ada Lovelace", "age"#).with_finish(Finish::Length),
        answer(r#"{"name": "Ada", "age": 36}"#),
    ]);
    let err = Extractor::new(&llm)
        .extract::<Person>("x")
        .await
        .unwrap_err();
    assert!(
        matches!(err.kind(), ExtractErrorKind::Truncated(_)),
        "{err}"
    );
    assert!(err.to_string().contains("max_tokens"));
    assert_eq!(log.lock().unwrap().len(), 1);
    assert_eq!(err.attempts()[0].finish, Some(Finish::Length));
}

#[tokio::test]
async fn a_cut_off_value_that_validates_once_closed_is_kept_as_a_recorded_fix() {
    let (llm, _) = scripted(vec![
        answer(r#"{"name": "Ada", "age": 36, "note"#).with_finish(Finish::Length)
    ]);
    let out = Extractor::new(&llm).extract::<Person>("x").await.unwrap();
    assert_eq!(
        out.value,
        Person {
            name: "Ada".into(),
            age: 36
        }
    );
    assert!(!out.report.fixes.is_empty());
    assert_eq!(out.report.finish, Some(Finish::Length));
}

#[tokio::test]
async fn constrained_mode_sends_the_dialect_schema_and_prompted_mode_does_not() {
    let (llm, log) = scripted(vec![
        answer(r#"{"name": "A", "age": 1}"#),
        answer(r#"{"name": "A", "age": 1}"#),
    ]);
    Extractor::new(&llm).extract::<Person>("x").await.unwrap();
    Extractor::new(&llm)
        .mode(Mode::Prompted)
        .extract::<Person>("x")
        .await
        .unwrap();
    let requests = log.lock().unwrap();
    let expected = Person::schema()
        .for_dialect(Dialect::Generic, Shape::One)
        .unwrap();
    assert_eq!(requests[0].schema.as_ref(), Some(expected));
    assert_eq!(requests[0].schema_name.as_deref(), Some("Person"));
    assert_eq!(requests[1].schema, None);
    for request in requests.iter() {
        assert!(request
            .system
            .as_deref()
            .unwrap()
            .contains(Person::format_instructions()));
    }
}

#[tokio::test]
async fn sampling_settings_reach_the_request() {
    let (llm, log) = scripted(vec![answer(r#"{"name": "A", "age": 1}"#)]);
    Extractor::new(&llm)
        .instructions("Find the person.")
        .max_tokens(77)
        .temperature(0.25)
        .seed(42)
        .extract::<Person>("x")
        .await
        .unwrap();
    let requests = log.lock().unwrap();
    assert_eq!(requests[0].max_tokens, Some(77));
    assert_eq!(requests[0].temperature, Some(0.25));
    assert_eq!(requests[0].seed, Some(42));
    assert!(requests[0]
        .system
        .as_deref()
        .unwrap()
        .starts_with("Find the person."));
}

#[tokio::test]
async fn templates_are_filled_from_a_context_and_a_missing_variable_fails_before_any_request() {
    let (llm, log) = scripted(vec![answer(r#"{"name": "A", "age": 1}"#)]);
    let extractor = Extractor::new(&llm).template("Text ({{lang}}): {{text}}");
    let err = extractor.extract::<Person>("hello").await.unwrap_err();
    match err.kind() {
        ExtractErrorKind::Template(template) => {
            assert!(template.to_string().contains("{{lang}}"), "{template}")
        }
        other => panic!("not a template error: {other:?}"),
    }
    assert!(err.attempts().is_empty());
    assert_eq!(log.lock().unwrap().len(), 0);

    #[derive(serde::Serialize)]
    struct Context<'a> {
        text: &'a str,
        lang: &'a str,
    }
    extractor
        .extract::<Person>(Input::context(&Context {
            text: "hello",
            lang: "en",
        }))
        .await
        .unwrap();
    assert_eq!(
        log.lock().unwrap()[0].messages[0].content,
        "Text (en): hello"
    );
}

#[tokio::test]
async fn the_token_budget_stops_the_loop() {
    let (llm, log) = scripted(vec![
        answer("no").with_usage(10, 10),
        answer("no").with_usage(10, 10),
    ]);
    let err = Extractor::new(&llm)
        .token_budget(20)
        .max_tokens(500)
        .extract::<Person>("x")
        .await
        .unwrap_err();
    assert!(
        matches!(
            err.kind(),
            ExtractErrorKind::Budget {
                budget: 20,
                spent: 20
            }
        ),
        "{err}"
    );
    let requests = log.lock().unwrap();
    assert_eq!(requests.len(), 1);
    assert_eq!(
        requests[0].max_tokens,
        Some(20),
        "max_tokens is lowered to the budget"
    );
}

#[tokio::test]
async fn strict_parsing_rejects_what_lenient_parsing_fixes() {
    let fenced = "```json\n{\"name\": \"Ada\", \"age\": 36}\n```";
    let (llm, log) = scripted(vec![
        answer(fenced),
        answer(r#"{"name": "Ada", "age": 36}"#),
    ]);
    let out = Extractor::new(&llm)
        .strict(true)
        .extract::<Person>("x")
        .await
        .unwrap();
    assert_eq!(out.report.attempts.len(), 2);
    assert!(out.report.fixes.is_empty());
    assert_eq!(log.lock().unwrap().len(), 2);
}

#[tokio::test]
async fn an_answer_left_in_the_thinking_channel_is_used() {
    let mut response = ChatResponse::new("");
    response.thinking = Some(r#"{"name": "Ada", "age": 36}"#.into());
    let (llm, _) = scripted(vec![response]);
    let out = Extractor::new(&llm).extract::<Person>("x").await.unwrap();
    assert_eq!(out.value.age, 36);
}

#[tokio::test]
async fn a_backend_error_fails_at_once_with_the_ledger() {
    let (llm, log) = scripted(vec![]);
    let err = Extractor::new(&llm)
        .extract::<Person>("x")
        .await
        .unwrap_err();
    assert!(matches!(err.kind(), ExtractErrorKind::Llm(_)));
    assert_eq!(err.attempts().len(), 1);
    assert_eq!(log.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn the_shortcuts_return_plain_values() {
    let (llm, _) = scripted(vec![
        answer(r#"{"name": "Ada", "age": 36}"#),
        answer(&format!(
            "{}\n{}\n",
            entity_line("Ada", "person"),
            entity_line("IBM", "company")
        )),
    ]);
    let person = Person::extract(&llm, "x").await.unwrap();
    assert_eq!(person.name, "Ada");
    let entities = Entity::extract_all(&llm, "x").await.unwrap();
    assert_eq!(
        entities,
        [entity("Ada", "person"), entity("IBM", "company")]
    );
}

// ---- many items ----

#[tokio::test]
async fn extract_all_in_prompted_mode_asks_for_json_lines() {
    let lines = format!(
        "{}\n{}\n",
        entity_line("Ada", "person"),
        entity_line("Lyon", "place")
    );
    let (llm, log) = scripted(vec![answer(&lines)]);
    let out = Extractor::new(&llm)
        .mode(Mode::Prompted)
        .extract_all::<Entity>("x")
        .await
        .unwrap();
    assert_eq!(
        out.value,
        [entity("Ada", "person"), entity("Lyon", "place")]
    );
    let requests = log.lock().unwrap();
    assert_eq!(requests[0].schema, None);
    let system = requests[0].system.as_deref().unwrap();
    assert!(system.contains("JSON Lines"), "{system}");
    assert!(system.contains(Entity::line_format_instructions()));
}

#[tokio::test]
async fn extract_all_in_constrained_mode_sends_the_list_schema_with_max_items() {
    let list = json!({"items": [
        {"name": "Ada", "kind": "person"},
        {"name": "IBM", "kind": "company"},
        {"name": "Lyon", "kind": "place"}
    ]});
    let (llm, log) = scripted(vec![answer(&list.to_string())]);
    let out = Extractor::new(&llm)
        .max_items(2)
        .extract_all::<Entity>("x")
        .await
        .unwrap();
    assert_eq!(
        out.value,
        [entity("Ada", "person"), entity("IBM", "company")]
    );
    assert_eq!(out.report.finish, Some(Finish::MaxItems));
    let requests = log.lock().unwrap();
    let schema = requests[0].schema.as_ref().unwrap();
    assert_eq!(schema["properties"]["items"]["maxItems"], json!(2));
    let mut expected = Entity::schema()
        .for_dialect(Dialect::Generic, Shape::List)
        .unwrap()
        .clone();
    expected["properties"]["items"]["maxItems"] = json!(2);
    assert_eq!(schema, &expected);
    assert!(requests[0]
        .system
        .as_deref()
        .unwrap()
        .contains("at most 2 items"));
}

#[tokio::test]
async fn only_broken_lines_are_re_asked_and_valid_items_are_kept() {
    let first = format!(
        "{}\n{{\"name\": \"Mars\", \"kind\": \"planet\"}}\n{}\n",
        entity_line("Ada", "person"),
        entity_line("IBM", "company")
    );
    let (llm, log) = scripted(vec![
        answer(&first),
        answer(&format!("{}\n", entity_line("Mars", "place"))),
    ]);
    let out = Extractor::new(&llm)
        .mode(Mode::Prompted)
        .extract_all::<Entity>("x")
        .await
        .unwrap();
    assert_eq!(
        out.value,
        [
            entity("Ada", "person"),
            entity("IBM", "company"),
            entity("Mars", "place")
        ]
    );
    assert!(out.report.skipped.is_empty());
    assert_eq!(out.report.attempts.len(), 2);
    assert_eq!(out.report.attempts[0].items, 2);
    assert_eq!(out.report.attempts[1].kind, AttemptKind::Repair);

    let requests = log.lock().unwrap();
    let repair = &requests[1];
    assert_eq!(roles(repair), [Role::User, Role::Assistant, Role::User]);
    assert_eq!(repair.messages[1].content, first);
    let feedback = &repair.messages[2].content;
    assert!(
        feedback.starts_with(
            "Some lines of your answer could not be used:\n- line 2, schema problem at /kind"
        ),
        "{feedback}"
    );
    assert!(feedback.contains("planet"));
    assert!(
        !feedback.contains("IBM"),
        "valid lines are not re-asked: {feedback}"
    );
    assert!(feedback.ends_with(
        "The other lines were fine and are kept. Answer with corrected versions of these lines only, one JSON object per line."
    ));
}

#[tokio::test]
async fn lines_that_never_validate_are_reported_as_skipped() {
    let broken = r#"{"name": "Mars", "kind": "planet"}"#;
    let (llm, _) = scripted(vec![
        answer(&format!("{}\n{broken}\n", entity_line("Ada", "person"))),
        answer(broken),
        answer(broken),
    ]);
    let out = Extractor::new(&llm)
        .mode(Mode::Prompted)
        .extract_all::<Entity>("x")
        .await
        .unwrap();
    assert_eq!(out.value, [entity("Ada", "person")]);
    assert_eq!(out.report.attempts.len(), 3);
    assert_eq!(out.report.skipped.len(), 1);
    assert!(out.report.skipped[0].raw.contains("planet"));
}

#[tokio::test]
async fn broken_lines_stay_reported_when_a_repair_answer_is_only_prose() {
    let broken = r#"{"name": "Mars", "kind": "planet"}"#;
    let (llm, _) = scripted(vec![
        answer(&format!("{}\n{broken}\n", entity_line("Ada", "person"))),
        answer("Sorry, I cannot fix that."),
    ]);
    let out = Extractor::new(&llm)
        .mode(Mode::Prompted)
        .max_attempts(2)
        .extract_all::<Entity>("x")
        .await
        .unwrap();
    assert_eq!(out.value, [entity("Ada", "person")]);
    assert_eq!(out.report.attempts.len(), 2);
    assert_eq!(out.report.skipped.len(), 1, "{:?}", out.report.skipped);
    assert!(out.report.skipped[0].raw.contains("planet"));
}

#[tokio::test]
async fn a_prose_only_answer_is_re_asked() {
    let (llm, log) = scripted(vec![
        answer("I found Ada, a person."),
        answer(&entity_line("Ada", "person")),
    ]);
    let out = Extractor::new(&llm)
        .mode(Mode::Prompted)
        .extract_all::<Entity>("x")
        .await
        .unwrap();
    assert_eq!(out.value, [entity("Ada", "person")]);
    let feedback = log.lock().unwrap()[1].messages[2].content.clone();
    assert!(
        feedback.starts_with("Your answer contained no JSON objects."),
        "{feedback}"
    );
}

#[tokio::test]
async fn a_cut_off_list_is_continued_after_its_last_complete_item_and_repeats_are_dropped() {
    let first = format!(
        "{}\n{}\n{{\"name\": \"Ly",
        entity_line("Ada", "person"),
        entity_line("IBM", "company")
    );
    let second = format!(
        "{}\n{}\n{}\n",
        entity_line("IBM", "company"),
        entity_line("Lyon", "place"),
        entity_line("Bob", "person")
    );
    let (llm, log) = scripted(vec![
        answer(&first).with_finish(Finish::Length),
        answer(&second),
    ]);
    let out = Extractor::new(&llm)
        .mode(Mode::Prompted)
        .extract_all::<Entity>("x")
        .await
        .unwrap();
    assert_eq!(
        out.value,
        [
            entity("Ada", "person"),
            entity("IBM", "company"),
            entity("Lyon", "place"),
            entity("Bob", "person")
        ]
    );
    assert_eq!(out.report.attempts[1].kind, AttemptKind::Continuation);
    assert_eq!(out.report.finish, Some(Finish::Stop));
    assert!(out.report.skipped.is_empty());

    let requests = log.lock().unwrap();
    let continuation = &requests[1];
    assert_eq!(
        roles(continuation),
        [Role::User, Role::Assistant, Role::User]
    );
    // The assistant turn is the complete items, never the cut-off answer.
    assert_eq!(
        continuation.messages[1].content,
        format!(
            "{}\n{}",
            entity_line("Ada", "person"),
            entity_line("IBM", "company")
        )
    );
    assert!(!continuation.messages[1].content.contains("Ly\""));
    assert!(continuation.messages[2].content.starts_with(
        "Your answer was cut off by the length limit. The 2 complete items above are kept."
    ));
}

#[tokio::test]
async fn continuations_are_capped() {
    let cut = |name: &str| {
        answer(&format!("{}\n{{\"name\": \"", entity_line(name, "person")))
            .with_finish(Finish::Length)
    };
    let (llm, log) = scripted(vec![cut("A"), cut("B"), cut("C"), cut("D")]);
    let out = Extractor::new(&llm)
        .mode(Mode::Prompted)
        .extract_all::<Entity>("x")
        .await
        .unwrap();
    assert_eq!(log.lock().unwrap().len(), 3, "1 answer + 2 continuations");
    assert_eq!(out.value.len(), 3);
    assert_eq!(out.report.finish, Some(Finish::Length));
    assert_eq!(
        out.report.skipped.len(),
        1,
        "the last cut-off item is reported"
    );
}

#[tokio::test]
async fn a_constrained_continuation_restates_the_items_as_a_list() {
    let (llm, log) = scripted(vec![
        answer(r#"{"items": [{"name": "Ada", "kind": "person"}, {"name": "IB"#)
            .with_finish(Finish::Length),
        answer(r#"{"items": [{"name": "IBM", "kind": "company"}]}"#),
    ]);
    let out = Extractor::new(&llm)
        .extract_all::<Entity>("x")
        .await
        .unwrap();
    assert_eq!(
        out.value,
        [entity("Ada", "person"), entity("IBM", "company")]
    );
    let requests = log.lock().unwrap();
    assert_eq!(
        requests[1].messages[1].content,
        r#"{"items": [{"name":"Ada","kind":"person"}]}"#
    );
}

/// A backend streaming `lines` one per delta, counting how many it produced.
fn counting_stream(lines: Vec<String>) -> (impl Llm, Arc<AtomicUsize>) {
    let produced = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&produced);
    let llm = from_stream_fn(move |_request| {
        let counter = Arc::clone(&counter);
        let lines = lines.clone();
        async move {
            let events = stream::iter(lines).map(move |line| {
                counter.fetch_add(1, Ordering::SeqCst);
                Ok(ChatEvent::Delta(line))
            });
            let done = stream::once(async { Ok(ChatEvent::Done(ChatResponse::new(""))) });
            Ok(Box::pin(events.chain(done)) as ChatStream)
        }
    });
    (llm, produced)
}

#[tokio::test]
async fn a_looping_model_is_cut_short_and_its_distinct_items_are_kept() {
    let mut lines = vec![format!("{}\n", entity_line("Ada", "person"))];
    lines.extend((0..1000).map(|_| format!("{}\n", entity_line("IBM", "company"))));
    let (llm, produced) = counting_stream(lines);
    let out = Extractor::new(&llm)
        .mode(Mode::Prompted)
        .extract_all::<Entity>("x")
        .await
        .unwrap();
    assert_eq!(
        out.value,
        [entity("Ada", "person"), entity("IBM", "company")]
    );
    assert_eq!(out.report.finish, Some(Finish::Loop));
    // The first answer and two recoveries (the attempt cap), each stopped at its loop.
    let kinds: Vec<AttemptKind> = out.report.attempts.iter().map(|a| a.kind).collect();
    assert_eq!(
        kinds,
        [
            AttemptKind::First,
            AttemptKind::Recovery,
            AttemptKind::Recovery
        ]
    );
    assert!(out
        .report
        .attempts
        .iter()
        .all(|a| a.finish == Some(Finish::Loop)));
    assert_eq!(out.report.attempts[1].sampling.repeat_penalty, Some(1.3));
    assert!(
        produced.load(Ordering::SeqCst) < 20,
        "each stream was cancelled early, not read to the end"
    );
}

#[tokio::test]
async fn a_pair_of_identical_items_is_not_a_loop() {
    let lines = ["A", "A", "B"]
        .iter()
        .map(|n| format!("{}\n", entity_line(n, "person")))
        .collect();
    let (llm, _) = counting_stream(lines);
    let out = Extractor::new(&llm)
        .mode(Mode::Prompted)
        .extract_all::<Entity>("x")
        .await
        .unwrap();
    assert_eq!(
        out.value,
        [
            entity("A", "person"),
            entity("A", "person"),
            entity("B", "person")
        ]
    );
    assert_eq!(out.report.finish, Some(Finish::Stop));
}

/// A sign-in sheet naming one person on four lines: four real items.
const SHEET: &str =
    "Sign-in sheet\nKen Ito 08:00\nKen Ito 12:00\nKen Ito 17:00\nKen Ito 21:00\nAda Lovelace 09:00";

#[tokio::test]
async fn four_equal_items_the_text_holds_four_times_are_all_kept() {
    let mut lines: Vec<String> = (0..4)
        .map(|_| format!("{}\n", entity_line("Ken Ito", "person")))
        .collect();
    lines.push(format!("{}\n", entity_line("Ada Lovelace", "person")));
    let (llm, _) = counting_stream(lines);
    let out = Extractor::new(&llm)
        .mode(Mode::Prompted)
        .extract_all::<Entity>(SHEET)
        .await
        .unwrap();
    let mut expected = vec![entity("Ken Ito", "person"); 4];
    expected.push(entity("Ada Lovelace", "person"));
    assert_eq!(out.value, expected);
    assert_eq!(out.report.finish, Some(Finish::Stop));
    assert_eq!(out.report.attempts.len(), 1);
    assert_eq!(out.report.attempts[0].looped, None);
}

#[tokio::test]
async fn a_real_item_repeated_past_what_the_text_holds_is_still_a_loop() {
    let lines = (0..50)
        .map(|_| format!("{}\n", entity_line("Ken Ito", "person")))
        .collect();
    let (llm, produced) = counting_stream(lines);
    let out = Extractor::new(&llm)
        .mode(Mode::Prompted)
        .max_attempts(1)
        .extract_all::<Entity>(SHEET)
        .await
        .unwrap();
    // The four the sheet holds are kept; the fifth and sixth are the loop.
    assert_eq!(out.value, vec![entity("Ken Ito", "person"); 4]);
    assert_eq!(out.report.finish, Some(Finish::Loop));
    assert!(produced.load(Ordering::SeqCst) < 10);
}

#[tokio::test]
async fn a_continuation_keeps_a_repeat_the_text_holds_and_drops_one_past_it() {
    let board = "Departures: IBM shuttle 08:15\nIBM shuttle 08:15 (second coach)\nLyon 08:31";
    let first = format!(
        "{}\n{{\"name\": \"IB",
        entity_line("IBM shuttle", "company")
    );
    // The continuation restates the kept item, then goes on.
    let second = format!(
        "{}\n{}\n{}\n",
        entity_line("IBM shuttle", "company"),
        entity_line("IBM shuttle", "company"),
        entity_line("Lyon", "place")
    );
    let (llm, _) = scripted(vec![
        answer(&first).with_finish(Finish::Length),
        answer(&second),
    ]);
    let out = Extractor::new(&llm)
        .mode(Mode::Prompted)
        .extract_all::<Entity>(board)
        .await
        .unwrap();
    // The board lists the shuttle twice: two items, and a third copy is a restatement.
    assert_eq!(
        out.value,
        [
            entity("IBM shuttle", "company"),
            entity("IBM shuttle", "company"),
            entity("Lyon", "place")
        ]
    );
    assert_eq!(out.report.attempts[1].kind, AttemptKind::Continuation);
}

/// An event whose fields after the title may be null, as the command line's held-out schemas.
fn nullable_event() -> SchemaSet {
    SchemaSet::new(
        "Event",
        json!({
            "type": "object",
            "properties": {
                "title": {"type": "string"},
                "date": {"type": ["string", "null"]},
                "city": {"type": ["string", "null"]}
            },
            "required": ["title", "date", "city"],
            "additionalProperties": false
        }),
    )
}

#[tokio::test]
async fn a_model_that_loops_on_every_attempt_ends_with_the_best_value_it_saw_marked() {
    // Every attempt writes the title on and on, longer than the input could hold.
    let text = "Board meeting, Oslo.";
    let runaway = format!(
        r#"{{"title": "Board meeting {}"#,
        (0..40).map(|n| format!("item {n}, ")).collect::<String>()
    );
    let asked = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&asked);
    let llm = from_fn(move |_request: ChatRequest| {
        counter.fetch_add(1, Ordering::SeqCst);
        let runaway = runaway.clone();
        async move { Ok(ChatResponse::new(runaway).with_usage(10, 50)) }
    });
    let schema = nullable_event();
    let out = Extractor::new(&llm)
        .with_schema(&schema)
        .extract(text)
        .await
        .expect("the best value seen, not an error");
    // The recovery looped too, with a value in hand: no third prompt.
    assert_eq!(asked.load(Ordering::SeqCst), 2);
    // The title cut where the guard stopped it, and the fields never written null.
    let title = out.value["title"].as_str().unwrap_or_default();
    assert!(title.starts_with("Board meeting item 0"), "{title}");
    assert!(title.chars().count() <= 32, "{title}");
    assert_eq!(
        (&out.value["date"], &out.value["city"]),
        (&Value::Null, &Value::Null)
    );
    assert_eq!(out.report.finish, Some(Finish::Loop));
    assert!(out.report.attempts.iter().all(|a| a.looped.is_some()));
    let doubt = out
        .report
        .issues
        .iter()
        .find(|issue| issue.message.contains("looped on every attempt"))
        .expect("the value is marked");
    assert_eq!(doubt.path, "");
    assert_eq!(doubt.severity, llm_extract::check::Severity::Soft);
}

#[tokio::test]
async fn a_recovery_without_a_value_in_hand_goes_on_to_the_last_attempt() {
    // The first two attempts loop in a number where no value could be (nothing to keep), the third
    // answers.
    let run = format!("[{}", "9".repeat(60));
    let fine = r#"{"title": "Board meeting", "date": "2025-03-04", "city": "Oslo"}"#;
    let (llm, log) = scripted(vec![answer(&run), answer(&run), answer(fine)]);
    let schema = nullable_event();
    let out = Extractor::new(&llm)
        .with_schema(&schema)
        .extract("Board meeting, Oslo, 2025-03-04.")
        .await
        .unwrap();
    assert_eq!(out.value["city"], "Oslo");
    assert_eq!(log.lock().unwrap().len(), 3);
    assert!(out.report.issues.is_empty());
}

#[tokio::test]
async fn the_most_complete_value_of_all_looped_attempts_is_the_one_kept() {
    // The second attempt loops late, after the title and the date; the first at once.
    let text = "Board meeting, Oslo, 2025-03-04.";
    let late = format!(
        r#"{{"title": "Board meeting", "date": "2025-03-04", "city": "{}"#,
        "Oslo ".repeat(40)
    );
    let early = format!(r#"{{"title": "{}"#, "Board ".repeat(40));
    let (llm, _) = scripted(vec![answer(&early), answer(&late), answer(&early)]);
    let schema = nullable_event();
    let out = Extractor::new(&llm)
        .with_schema(&schema)
        .extract(text)
        .await
        .unwrap();
    assert_eq!(out.value["title"], "Board meeting");
    assert_eq!(out.value["date"], "2025-03-04");
    assert_eq!(out.report.attempts.len(), 2);
    assert!(out
        .report
        .issues
        .iter()
        .any(|issue| issue.message.contains("looped on every attempt")));
}

// ---- streams ----

#[tokio::test]
async fn extract_stream_yields_items_then_reports() {
    let lines = ["A", "B", "C"]
        .iter()
        .map(|n| format!("{}\n", entity_line(n, "person")))
        .collect();
    let (llm, _) = counting_stream(lines);
    let mut stream = Entity::extract_stream(&llm, "x");
    let mut names = Vec::new();
    while let Some(item) = stream.next().await {
        names.push(item.unwrap().name);
    }
    assert_eq!(names, ["A", "B", "C"]);
    let report = stream.report().unwrap();
    assert_eq!(report.attempts.len(), 1);
    assert_eq!(report.finish, Some(Finish::Stop));
}

#[tokio::test]
async fn items_arrive_before_the_answer_ends() {
    // The second line is only produced after the first item was received by the consumer.
    let gate = Arc::new(tokio::sync::Notify::new());
    let opened = Arc::clone(&gate);
    let llm = from_stream_fn(move |_request| {
        let gate = Arc::clone(&opened);
        async move {
            let first = stream::iter(vec![Ok(ChatEvent::Delta(format!(
                "{}\n",
                entity_line("A", "person")
            )))]);
            let rest = stream::once(async move {
                gate.notified().await;
                Ok(ChatEvent::Delta(format!(
                    "{}\n",
                    entity_line("B", "person")
                )))
            });
            let done = stream::once(async { Ok(ChatEvent::Done(ChatResponse::new(""))) });
            Ok(Box::pin(first.chain(rest).chain(done)) as ChatStream)
        }
    });
    let extractor = Extractor::new(&llm).mode(Mode::Prompted);
    let mut stream = extractor.extract_stream::<Entity>("x");
    let first = stream.next().await.unwrap().unwrap();
    assert_eq!(first.name, "A");
    gate.notify_one();
    let second = stream.next().await.unwrap().unwrap();
    assert_eq!(second.name, "B");
    assert!(stream.next().await.is_none());
}

#[tokio::test]
async fn a_stream_error_comes_last_after_the_items_already_decoded() {
    let llm = from_stream_fn(|_request| async {
        let events = vec![
            Ok(ChatEvent::Delta(format!(
                "{}\n",
                entity_line("A", "person")
            ))),
            Ok(ChatEvent::Delta(format!(
                "{}\n{{\"na",
                entity_line("B", "person")
            ))),
            Err(LlmError::Stream {
                message: "connection reset".into(),
                received: String::new(),
            }),
        ];
        Ok(Box::pin(stream::iter(events)) as ChatStream)
    });
    let mut stream = Entity::extract_stream(&llm, "x");
    assert_eq!(stream.next().await.unwrap().unwrap().name, "A");
    assert_eq!(stream.next().await.unwrap().unwrap().name, "B");
    let err = stream.next().await.unwrap().unwrap_err();
    assert!(matches!(
        err.kind(),
        ExtractErrorKind::Llm(LlmError::Stream { .. })
    ));
    assert_eq!(err.kept().len(), 2);
    assert!(err.to_string().contains("2 item(s) kept"), "{err}");
    assert!(stream.next().await.is_none());

    let err = Entity::extract_all(&llm, "x").await.unwrap_err();
    assert_eq!(err.kept()[1], entity("B", "person"), "typed");
    assert_eq!(err.into_kept().len(), 2);
}

// ---- untyped twins ----

#[tokio::test]
async fn untyped_twins_validate_against_a_runtime_schema() {
    let schema = SchemaSet::new("Entity", entity_schema());
    let (llm, log) = scripted(vec![
        answer(r#"{"name": "Ada", "kind": "robot"}"#),
        answer(r#"{"name": "Ada", "kind": "person"}"#),
        answer(&format!(
            "{}\n{}\n",
            entity_line("Ada", "person"),
            entity_line("IBM", "company")
        )),
    ]);
    let extractor = Extractor::new(&llm);
    let one = extractor.with_schema(&schema).extract("x").await.unwrap();
    assert_eq!(one.value, json!({"name": "Ada", "kind": "person"}));
    assert_eq!(one.report.attempts.len(), 2);
    let all = extractor
        .with_schema(&schema)
        .extract_all("x")
        .await
        .unwrap();
    assert_eq!(all.value.len(), 2);
    let requests = log.lock().unwrap();
    assert_eq!(requests[0].schema_name.as_deref(), Some("Entity"));
    let list: &Value = requests[2].schema.as_ref().unwrap();
    assert_eq!(
        list,
        schema.for_dialect(Dialect::Generic, Shape::List).unwrap()
    );
}

#[tokio::test]
async fn broken_lines_left_before_a_continuation_are_re_asked_on_their_own() {
    let bad = r#"{"name": "Mars", "kind": "planet"}"#;
    let (llm, log) = scripted(vec![
        answer(&format!(
            "{}\n{bad}\n{{\"name\": \"Ly",
            entity_line("Ada", "person")
        ))
        .with_finish(Finish::Length),
        answer(&format!("{}\n", entity_line("Lyon", "place"))),
        answer(&format!("{}\n", entity_line("Mars", "place"))),
    ]);
    let out = Extractor::new(&llm)
        .mode(Mode::Prompted)
        .extract_all::<Entity>("x")
        .await
        .unwrap();
    assert_eq!(
        out.value,
        [
            entity("Ada", "person"),
            entity("Lyon", "place"),
            entity("Mars", "place")
        ]
    );
    let kinds: Vec<_> = out.report.attempts.iter().map(|a| a.kind).collect();
    assert_eq!(
        kinds,
        [
            AttemptKind::First,
            AttemptKind::Continuation,
            AttemptKind::Repair
        ]
    );
    let requests = log.lock().unwrap();
    let repair = &requests[2];
    assert_eq!(repair.messages[1].content, bad);
    assert!(repair.messages[2]
        .content
        .contains("- line 1, schema problem at /kind"));
}

#[tokio::test]
async fn an_answer_with_exactly_max_items_ends_normally() {
    let lines = format!(
        "{}\n{}\n",
        entity_line("A", "person"),
        entity_line("B", "person")
    );
    let (llm, _) = scripted(vec![answer(&lines)]);
    let out = Extractor::new(&llm)
        .mode(Mode::Prompted)
        .max_items(2)
        .extract_all::<Entity>("x")
        .await
        .unwrap();
    assert_eq!(out.value.len(), 2);
    assert_eq!(out.report.finish, Some(Finish::Stop));
    assert_eq!(
        out.report.usage.total(),
        15,
        "the answer was read to its end, usage included"
    );
}

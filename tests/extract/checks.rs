//! Checks a schema cannot say, through the real loop: a hard issue is repaired within the attempt cap
//! with its path and message in the repair turn, a value that never passes ends in an error carrying
//! the issue and the raw answer, soft issues reach the report with the value kept, items of a list are
//! re-asked or left out, and a runtime schema takes closures.

use llm_extract::check::{Check, CheckError, Issues, Severity};
use llm_extract::extract::Extractor;
use llm_extract::llm::{from_fn, ChatRequest, ChatResponse};
use llm_extract::parse::SkipReason;
use llm_extract::{extract::ExtractErrorKind, schema::SchemaSet, Extract, ParseError};
use serde::Deserialize;
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};

const TEXT: &str = "Invoice: a lamp for 20 and a chair for 35, 55 in all.";

#[derive(Extract, Deserialize, Debug, PartialEq)]
#[extract(check)]
struct Invoice {
    lines: Vec<u32>,
    total: u32,
}

impl Check for Invoice {
    fn check(&self, issues: &mut Issues) {
        let sum: u32 = self.lines.iter().sum();
        if sum != self.total {
            issues.hard(
                "/total",
                format!("the total equals the sum of the lines, {sum}"),
            );
        }
        if self.total > 50 {
            issues.soft("/total", "a total above 50 is unusual");
        }
    }
}

#[derive(Extract, Deserialize, Debug, PartialEq)]
#[extract(check)]
struct Stay {
    name: String,
    start: u32,
    end: u32,
}

impl Check for Stay {
    fn check(&self, issues: &mut Issues) {
        if self.end < self.start {
            issues.hard("/end", "the end date is after the start date");
        }
        if self.name.is_empty() {
            issues.soft("/name", "no name");
        }
    }
}

/// A backend that answers `answers` in turn (the last one again after that) and records the last
/// message of each request.
fn scripted(answers: Vec<&'static str>) -> (impl llm_extract::Llm, Arc<Mutex<Vec<String>>>) {
    let asked = Arc::new(Mutex::new(Vec::new()));
    let seen = asked.clone();
    let llm = from_fn(move |request: ChatRequest| {
        let last = request
            .messages
            .last()
            .map(|m| m.content.clone())
            .unwrap_or_default();
        let turn = {
            let mut seen = seen.lock().unwrap();
            seen.push(last);
            seen.len() - 1
        };
        let answer = answers.get(turn).or(answers.last()).copied().unwrap_or("");
        async move { Ok(ChatResponse::new(answer)) }
    });
    (llm, asked)
}

#[tokio::test]
async fn a_hard_issue_is_repaired_with_its_path_and_message_in_the_repair_turn() {
    let (llm, asked) = scripted(vec![
        r#"{"lines": [20, 35], "total": 50}"#,
        r#"{"lines": [20, 35], "total": 55}"#,
    ]);
    let out = Extractor::new(llm)
        .max_attempts(3)
        .extract::<Invoice>(TEXT)
        .await
        .unwrap();
    assert_eq!(out.value.total, 55);
    assert_eq!(out.report.attempts.len(), 2);
    let asked = asked.lock().unwrap();
    assert!(
        asked[1].contains("/total")
            && asked[1].contains("the total equals the sum of the lines, 55"),
        "{}",
        asked[1]
    );
    // The first attempt's verdict names the check.
    let first = out.report.attempts[0].error.as_ref().unwrap().to_string();
    assert!(first.contains("fails its checks"), "{first}");
}

#[tokio::test]
async fn a_check_failing_every_answer_ends_in_an_error_with_the_issue_and_the_raw_answer() {
    let answer = r#"{"lines": [20, 35], "total": 50}"#;
    let (llm, asked) = scripted(vec![answer]);
    let err = Extractor::new(llm)
        .max_attempts(2)
        .extract::<Invoice>(TEXT)
        .await
        .unwrap_err();
    assert_eq!(asked.lock().unwrap().len(), 2, "within the cap");
    match err.kind() {
        ExtractErrorKind::Invalid(ParseError::Check { issues, raw }) => {
            assert_eq!(issues[0].path, "/total");
            assert!(issues[0].message.contains("sum of the lines"));
            assert_eq!(raw, answer);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(err.raw(), Some(answer));
}

#[tokio::test]
async fn soft_issues_reach_the_report_and_the_value_is_kept() {
    let (llm, asked) = scripted(vec![r#"{"lines": [20, 35], "total": 55}"#]);
    let out = Extractor::new(llm).extract::<Invoice>(TEXT).await.unwrap();
    assert_eq!(
        out.value,
        Invoice {
            lines: vec![20, 35],
            total: 55
        }
    );
    assert_eq!(asked.lock().unwrap().len(), 1, "no re-ask");
    let issues = &out.report.issues;
    assert_eq!(issues.len(), 1, "{issues:?}");
    assert_eq!(issues[0].path, "/total");
    assert_eq!(issues[0].severity, Severity::Soft);
    assert_eq!(issues[0].item, None);
}

#[tokio::test]
async fn an_item_failing_its_check_is_re_asked_alone() {
    let (llm, asked) = scripted(vec![
        r#"{"items": [{"name": "Ann", "start": 3, "end": 5}, {"name": "Bob", "start": 9, "end": 2}]}"#,
        r#"{"items": [{"name": "Bob", "start": 2, "end": 9}]}"#,
    ]);
    let out = Extractor::new(llm)
        .max_attempts(3)
        .extract_all::<Stay>("Ann stays from 3 to 5, Bob from 2 to 9.")
        .await
        .unwrap();
    let names: Vec<&str> = out.value.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["Ann", "Bob"]);
    assert_eq!(out.value[1].end, 9);
    let asked = asked.lock().unwrap();
    assert_eq!(asked.len(), 2);
    assert!(
        asked[1].contains("/end") && asked[1].contains("the end date is after the start date"),
        "{}",
        asked[1]
    );
    assert!(out.report.skipped.is_empty());
}

#[tokio::test]
async fn an_item_that_never_passes_is_left_out_and_soft_issues_name_their_item() {
    let (llm, _) = scripted(vec![
        r#"{"items": [{"name": "", "start": 3, "end": 5}, {"name": "Bob", "start": 9, "end": 2}]}"#,
        r#"{"items": [{"name": "Bob", "start": 9, "end": 1}]}"#,
    ]);
    let out = Extractor::new(llm)
        .max_attempts(2)
        .extract_all::<Stay>("Someone stays from 3 to 5, Bob from 2 to 9.")
        .await
        .unwrap();
    assert_eq!(out.value.len(), 1);
    assert_eq!(out.value[0].start, 3);
    assert_eq!(out.report.skipped.len(), 1);
    assert!(
        matches!(&out.report.skipped[0].reason, SkipReason::Check(issues) if issues[0].path == "/end"),
        "{:?}",
        out.report.skipped
    );
    let issues = &out.report.issues;
    assert_eq!(issues.len(), 1, "{issues:?}");
    assert_eq!(
        (issues[0].item, issues[0].path.as_str()),
        (Some(0), "/name")
    );
}

fn span_schema() -> SchemaSet {
    SchemaSet::new(
        "Span",
        json!({
            "type": "object",
            "properties": {"start": {"type": "integer"}, "end": {"type": "integer"}},
            "required": ["start", "end"],
            "additionalProperties": false
        }),
    )
}

fn ordered(value: &Value, issues: &mut Issues) {
    if value["end"].as_i64() < value["start"].as_i64() {
        issues.hard("/end", "the end comes after the start");
    }
}

#[tokio::test]
async fn a_runtime_schema_closure_is_repaired_like_a_schema_violation() {
    let (llm, asked) = scripted(vec![
        r#"{"start": 9, "end": 3}"#,
        r#"{"start": 3, "end": 9}"#,
    ]);
    let out = Extractor::new(llm)
        .check(ordered)
        .check(|value, issues| {
            if value["end"] == 9 {
                issues.soft("/end", "nine is late");
            }
        })
        .with_schema(&span_schema())
        .extract("From 3 to 9.")
        .await
        .unwrap();
    assert_eq!(out.value, json!({"start": 3, "end": 9}));
    assert!(asked.lock().unwrap()[1].contains("the end comes after the start"));
    assert_eq!(out.report.issues.len(), 1);
    assert_eq!(out.report.issues[0].message, "nine is late");
}

#[tokio::test]
async fn runtime_schema_items_failing_a_closure_are_re_asked() {
    let (llm, asked) = scripted(vec![
        r#"{"items": [{"start": 1, "end": 2}, {"start": 8, "end": 4}]}"#,
        r#"{"items": [{"start": 4, "end": 8}]}"#,
    ]);
    let out = Extractor::new(llm)
        .check(ordered)
        .with_schema(&span_schema())
        .extract_all("From 1 to 2, and from 4 to 8.")
        .await
        .unwrap();
    assert_eq!(
        out.value,
        [json!({"start": 1, "end": 2}), json!({"start": 4, "end": 8})]
    );
    assert!(asked.lock().unwrap()[1].contains("the end comes after the start"));
}

#[tokio::test]
async fn an_extractor_without_checks_keeps_what_a_check_would_reject() {
    let (llm, _) = scripted(vec![r#"{"start": 9, "end": 3}"#]);
    let out = Extractor::new(llm)
        .with_schema(&span_schema())
        .extract("From 3 to 9.")
        .await
        .unwrap();
    assert_eq!(out.value, json!({"start": 9, "end": 3}));
    assert!(out.report.issues.is_empty());
}

#[derive(Extract, Deserialize, Debug, PartialEq)]
#[extract(check)]
struct Guest {
    #[extract(grounded, key)]
    name: String,
    start: u32,
    end: u32,
}

impl Check for Guest {
    fn check(&self, issues: &mut Issues) {
        if self.end < self.start {
            issues.hard("/end", "the end date is after the start date");
        }
    }
}

#[tokio::test]
async fn a_document_keeps_only_the_items_that_pass_their_checks() {
    let (llm, asked) = scripted(vec![
        r#"{"items": [{"name": "Ann", "start": 3, "end": 5}, {"name": "Bob", "start": 9, "end": 2}]}"#,
    ]);
    let doc = Extractor::new(llm)
        .max_attempts(2)
        .extract_document::<Guest>("Ann stays from 3 to 5. Bob stays from 2 to 9.")
        .await
        .unwrap();
    let names: Vec<&str> = doc.items.iter().map(|g| g.value.name.as_str()).collect();
    assert_eq!(names, ["Ann"]);
    let asked = asked.lock().unwrap();
    assert!(
        asked
            .iter()
            .any(|turn| turn.contains("the end date is after the start date")),
        "{asked:?}"
    );
}

#[tokio::test]
async fn a_stream_hands_on_the_repaired_item_and_never_the_failing_one() {
    use futures_util::StreamExt;
    let (llm, _) = scripted(vec![
        r#"{"items": [{"name": "Ann", "start": 3, "end": 5}, {"name": "Bob", "start": 9, "end": 2}]}"#,
        r#"{"items": [{"name": "Bob", "start": 2, "end": 9}]}"#,
    ]);
    let extractor = Extractor::new(llm).max_attempts(3);
    let mut stream = extractor.extract_stream::<Stay>("Ann stays from 3 to 5, Bob from 2 to 9.");
    let mut ends = Vec::new();
    while let Some(item) = stream.next().await {
        ends.push(item.unwrap().end);
    }
    assert_eq!(ends, [5, 9]);
}

/// An asynchronous lookup: `known` ids pass, others are a hard issue, and `down` cannot run.
fn lookup(
    known: &'static [&'static str],
    down: bool,
) -> impl Fn(
    Value,
)
    -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<Issues, CheckError>> + Send>>
       + Send
       + Sync
       + 'static {
    move |value: Value| {
        Box::pin(async move {
            // A real await point: the check yields to the runtime before it answers.
            tokio::task::yield_now().await;
            if down {
                return Err(CheckError::new("the customer database did not answer"));
            }
            let mut issues = Issues::new();
            let id = value["customer"].as_str().unwrap_or_default().to_owned();
            if !known.contains(&id.as_str()) {
                issues.hard("/customer", format!("no customer has the id {id}"));
            } else if id.ends_with('9') {
                issues.soft("/customer", "a customer of the old system");
            }
            Ok(issues)
        })
    }
}

fn order_schema() -> SchemaSet {
    SchemaSet::new(
        "Order",
        json!({
            "type": "object",
            "properties": {"customer": {"type": "string"}},
            "required": ["customer"],
            "additionalProperties": false
        }),
    )
}

#[tokio::test]
async fn an_asynchronous_check_is_repaired_with_its_message_and_keeps_its_soft_issues() {
    let (llm, asked) = scripted(vec![r#"{"customer": "c-1"}"#, r#"{"customer": "c-9"}"#]);
    let out = Extractor::new(llm)
        .check(|_, issues| issues.soft("", "checked synchronously"))
        .check_async(lookup(&["c-9"], false))
        .with_schema(&order_schema())
        .extract("An order for c-9.")
        .await
        .unwrap();
    assert_eq!(out.value, json!({"customer": "c-9"}));
    assert_eq!(out.report.attempts.len(), 2);
    let asked = asked.lock().unwrap();
    assert!(asked[1].contains("/customer") && asked[1].contains("no customer has the id c-1"));
    let messages: Vec<&str> = out
        .report
        .issues
        .iter()
        .map(|i| i.message.as_str())
        .collect();
    assert_eq!(
        messages,
        ["checked synchronously", "a customer of the old system"]
    );
}

#[tokio::test]
async fn an_asynchronous_check_runs_on_each_item_and_numbers_the_soft_issues() {
    let (llm, asked) = scripted(vec![
        r#"{"items": [{"customer": "c-9"}, {"customer": "c-4"}, {"customer": "c-2"}]}"#,
        r#"{"items": [{"customer": "c-5"}]}"#,
    ]);
    let out = Extractor::new(llm)
        .check_async(lookup(&["c-9", "c-2", "c-5"], false))
        .with_schema(&order_schema())
        .extract_all("Orders for c-9, c-5 and c-2.")
        .await
        .unwrap();
    let customers: Vec<&str> = out
        .value
        .iter()
        .map(|v| v["customer"].as_str().unwrap())
        .collect();
    assert_eq!(customers, ["c-9", "c-2", "c-5"]);
    assert!(asked.lock().unwrap()[1].contains("no customer has the id c-4"));
    assert_eq!(out.report.issues.len(), 1);
    assert_eq!(out.report.issues[0].item, Some(0));
}

#[tokio::test]
async fn a_check_that_cannot_run_ends_the_extraction_with_a_check_error() {
    let (llm, _) = scripted(vec![r#"{"customer": "c-1"}"#]);
    let err = Extractor::new(llm)
        .check_async(lookup(&[], true))
        .with_schema(&order_schema())
        .extract("An order for c-1.")
        .await
        .unwrap_err();
    let ExtractErrorKind::Check { error, raw } = err.kind() else {
        panic!("{err:?}");
    };
    assert_eq!(error.message, "the customer database did not answer");
    assert_eq!(raw, r#"{"customer": "c-1"}"#);
    assert!(err.to_string().starts_with(
        "a check could not run: the customer database did not answer; the answer was not checked"
    ));
    assert_eq!(
        err.report().attempts.len(),
        1,
        "a check that cannot run is not re-asked"
    );

    let (llm, _) = scripted(vec![r#"{"items": [{"customer": "c-1"}]}"#]);
    let err = Extractor::new(llm)
        .check_async(lookup(&[], true))
        .with_schema(&order_schema())
        .extract_all("An order for c-1.")
        .await
        .unwrap_err();
    assert!(
        matches!(err.kind(), ExtractErrorKind::Check { .. }),
        "{err:?}"
    );
    assert!(err.kept().is_empty());
}

#[tokio::test]
async fn a_document_runs_the_asynchronous_checks_on_its_items() {
    let (llm, asked) = scripted(vec![
        r#"{"items": [{"name": "Ann", "start": 3, "end": 5}, {"name": "Bob", "start": 2, "end": 9}]}"#,
    ]);
    let doc = Extractor::new(llm)
        .max_attempts(2)
        .check_async(|value: Value| async move {
            let mut issues = Issues::new();
            if value["name"] == "Bob" {
                issues.hard("/name", "Bob has checked out");
            }
            Ok::<_, CheckError>(issues)
        })
        .extract_document::<Guest>("Ann stays from 3 to 5. Bob stays from 2 to 9.")
        .await
        .unwrap();
    let names: Vec<&str> = doc.items.iter().map(|g| g.value.name.as_str()).collect();
    assert_eq!(names, ["Ann"]);
    assert!(asked
        .lock()
        .unwrap()
        .iter()
        .any(|turn| turn.contains("Bob has checked out")));
}

#[tokio::test]
async fn a_closure_on_the_extractor_checks_a_derived_type_with_what_the_type_cannot_know() {
    // The invoice's own check passes both answers; the closure knows the input's currency limit.
    let (llm, asked) = scripted(vec![
        r#"{"lines": [20, 30], "total": 50}"#,
        r#"{"lines": [20, 35], "total": 55}"#,
    ]);
    let least = 55;
    let out = Extractor::new(llm)
        .max_attempts(3)
        .check(move |value, issues| {
            if value["total"].as_u64() < Some(least) {
                issues.hard("/total", format!("the text gives a total of {least}"));
            }
        })
        .extract::<Invoice>(TEXT)
        .await
        .unwrap();
    assert_eq!(out.value.total, 55);
    assert_eq!(out.report.attempts.len(), 2);
    let asked = asked.lock().unwrap();
    assert!(
        asked[1].contains("the text gives a total of 55"),
        "{}",
        asked[1]
    );
    // The type's own check still runs: its soft issue reaches the report.
    assert_eq!(out.report.issues.len(), 1, "{:?}", out.report.issues);
    assert_eq!(out.report.issues[0].message, "a total above 50 is unusual");
}

#[tokio::test]
async fn a_derived_type_keeps_its_own_hard_check_beside_the_extractor_closures() {
    let (llm, asked) = scripted(vec![
        r#"{"lines": [20, 35], "total": 50}"#,
        r#"{"lines": [20, 35], "total": 55}"#,
    ]);
    let out = Extractor::new(llm)
        .max_attempts(3)
        .check(|_, issues| issues.soft("", "looked at"))
        .extract::<Invoice>(TEXT)
        .await
        .unwrap();
    assert_eq!(out.value.total, 55);
    assert!(asked.lock().unwrap()[1].contains("the total equals the sum of the lines, 55"));
}

#[tokio::test]
async fn stream_items_of_a_derived_type_are_re_asked_when_an_extractor_closure_rejects_them() {
    use futures_util::StreamExt;
    let (llm, asked) = scripted(vec![
        r#"{"items": [{"name": "Ann", "start": 3, "end": 5}, {"name": "Zed", "start": 1, "end": 2}]}"#,
        r#"{"items": [{"name": "Bob", "start": 2, "end": 9}]}"#,
    ]);
    let text = "Ann stays from 3 to 5, Bob from 2 to 9.";
    let extractor = Extractor::new(llm)
        .max_attempts(3)
        .check(move |value, issues| {
            let name = value["name"].as_str().unwrap_or_default();
            if !text.contains(name) {
                issues.hard("/name", format!("{name:?} is not in the text"));
            }
        });
    let mut stream = extractor.extract_stream::<Stay>(text);
    let mut names = Vec::new();
    while let Some(item) = stream.next().await {
        names.push(item.unwrap().name);
    }
    assert_eq!(names, ["Ann", "Bob"]);
    assert!(asked.lock().unwrap()[1].contains("\"Zed\" is not in the text"));
}

#[tokio::test]
async fn an_asynchronous_closure_checks_a_derived_type() {
    let (llm, _) = scripted(vec![r#"{"lines": [20, 35], "total": 55}"#]);
    let err = Extractor::new(llm)
        .check_async(|_| async { Err(CheckError::new("the ledger did not answer")) })
        .extract::<Invoice>(TEXT)
        .await
        .unwrap_err();
    assert!(
        matches!(err.kind(), ExtractErrorKind::Check { .. }),
        "{err}"
    );
}

/// A check in context that rejects a customer its input's text does not name, and records the texts
/// it was given.
fn named_in_text(
    texts: Arc<Mutex<Vec<String>>>,
) -> impl Fn(Value, Arc<llm_extract::check::Context>) -> std::future::Ready<Result<Issues, CheckError>>
       + Send
       + Sync
       + 'static {
    move |value: Value, context: Arc<llm_extract::check::Context>| {
        let text = context["text"].as_str().unwrap_or_default().to_owned();
        let mut issues = Issues::new();
        if !text.contains(value["customer"].as_str().unwrap_or("?")) {
            issues.hard("/customer", "name a customer the text names");
        }
        texts.lock().unwrap().push(text);
        std::future::ready(Ok(issues))
    }
}

#[tokio::test]
async fn a_check_in_context_reads_the_text_of_its_own_extraction() {
    let (llm, asked) = scripted(vec![
        r#"{"items": [{"customer": "c-1"}, {"customer": "c-8"}]}"#,
        r#"{"items": []}"#,
    ]);
    let texts = Arc::new(Mutex::new(Vec::new()));
    let out = Extractor::new(llm)
        .max_attempts(2)
        .check_async_in_context(named_in_text(texts.clone()))
        .with_schema(&order_schema())
        .extract_all(llm_extract::extract::Input::text("Orders for c-1.").var("region", "EU"))
        .await
        .unwrap();
    assert_eq!(out.value, [json!({"customer": "c-1"})]);
    assert!(asked.lock().unwrap()[1].contains("name a customer the text names"));
    assert!(texts.lock().unwrap().iter().all(|t| t == "Orders for c-1."));

    // Each chunk of a document is checked against its own text.
    let (llm, _) = scripted(vec![r#"{"items": [{"customer": "c-1"}]}"#]);
    let texts = Arc::new(Mutex::new(Vec::new()));
    let first = "Orders for c-1. ".repeat(20);
    let second = "Orders for c-2. ".repeat(20);
    let doc = Extractor::new(llm)
        .max_attempts(1)
        .chunk_bytes(first.len())
        .check_async_in_context(named_in_text(texts.clone()))
        .with_schema(&order_schema())
        .extract_document(format!("{first}\n\n{second}").as_str())
        .await
        .unwrap();
    let texts = texts.lock().unwrap();
    assert!(texts.len() >= 2, "{texts:?}");
    assert!(
        texts
            .iter()
            .any(|t| t.contains("c-1") && !t.contains("c-2")),
        "{texts:?}"
    );
    assert!(
        texts
            .iter()
            .any(|t| t.contains("c-2") && !t.contains("c-1")),
        "{texts:?}"
    );
    // The chunk that names only c-2 never passes c-1.
    assert_eq!(doc.items.len(), 1);
}

#[tokio::test]
async fn a_check_in_context_reads_the_text_of_a_derived_types_extraction() {
    #[derive(Extract, Deserialize, Debug)]
    struct Order {
        customer: String,
    }
    let (llm, asked) = scripted(vec![r#"{"customer": "Zed"}"#, r#"{"customer": "Ann"}"#]);
    let texts = Arc::new(Mutex::new(Vec::new()));
    let out = Extractor::new(llm)
        .max_attempts(3)
        .check_async_in_context(named_in_text(texts.clone()))
        .extract::<Order>("Ann ordered a lamp.")
        .await
        .unwrap();
    assert_eq!(out.value.customer, "Ann");
    assert!(asked.lock().unwrap()[1].contains("name a customer the text names"));
    assert_eq!(texts.lock().unwrap()[0], "Ann ordered a lamp.");
}

#[tokio::test]
async fn keep_doubtful_returns_a_value_its_checks_never_pass_with_every_issue_as_a_soft_one() {
    let (llm, asked) = scripted(vec![r#"{"lines": [20, 35], "total": 60}"#]);
    let out = Extractor::new(llm)
        .max_attempts(2)
        .keep_doubtful(true)
        .extract::<Invoice>(TEXT)
        .await
        .unwrap();
    assert_eq!(out.value.total, 60);
    assert_eq!(asked.lock().unwrap().len(), 2, "the repair is still asked");
    let issues = &out.report.issues;
    assert_eq!(issues.len(), 2, "{issues:?}");
    assert!(issues.iter().all(|i| i.severity == Severity::Soft));
    assert_eq!(
        issues[0].message,
        "the total equals the sum of the lines, 55"
    );
    assert_eq!(issues[1].message, "a total above 50 is unusual");
    // Each attempt's verdict stays in the ledger.
    assert!(out.report.attempts.iter().all(|a| a.error.is_some()));
}

#[tokio::test]
async fn keep_doubtful_keeps_the_last_answer_and_never_one_that_breaks_its_schema() {
    let (llm, _) = scripted(vec![
        r#"{"lines": [20, 35], "total": 60}"#,
        r#"{"lines": "many"}"#,
    ]);
    let err = Extractor::new(llm)
        .max_attempts(2)
        .keep_doubtful(true)
        .extract::<Invoice>(TEXT)
        .await
        .unwrap_err();
    assert!(matches!(err.kind(), ExtractErrorKind::Invalid(_)), "{err}");
}

#[tokio::test]
async fn keep_doubtful_works_for_runtime_schemas_and_asynchronous_checks() {
    let (llm, _) = scripted(vec![r#"{"start": 9, "end": 3}"#]);
    let out = Extractor::new(llm)
        .max_attempts(2)
        .keep_doubtful(true)
        .check_async(|value: Value| async move {
            let mut issues = Issues::new();
            ordered(&value, &mut issues);
            Ok(issues)
        })
        .with_schema(&span_schema())
        .extract("From 3 to 9.")
        .await
        .unwrap();
    assert_eq!(out.value, json!({"start": 9, "end": 3}));
    assert_eq!(out.report.issues.len(), 1);
    assert_eq!(out.report.issues[0].severity, Severity::Soft);
}

#[tokio::test]
async fn without_keep_doubtful_a_value_its_checks_never_pass_is_an_error() {
    let (llm, _) = scripted(vec![r#"{"lines": [20, 35], "total": 60}"#]);
    let err = Extractor::new(llm)
        .max_attempts(2)
        .extract::<Invoice>(TEXT)
        .await
        .unwrap_err();
    assert!(
        matches!(
            err.kind(),
            ExtractErrorKind::Invalid(ParseError::Check { .. })
        ),
        "{err}"
    );
}

//! Self-consistency (`Extractor::samples`): several answers per request, asked for at once with their
//! own seeds, merged by vote, through the real extraction loop on backends that answer by seed.

use llm_extract::check::{Check, Issues};
use llm_extract::extract::{Extractor, SAMPLE_TEMPERATURE};
use llm_extract::llm::{from_fn, ChatRequest, ChatResponse, LlmError};
use llm_extract::schema::SchemaSet;
use llm_extract::Extract;
use serde::Deserialize;
use serde_json::json;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::Barrier;

#[derive(Extract, Deserialize, Debug, PartialEq)]
struct Leader {
    #[extract(key)]
    name: String,
    company: Option<String>,
}

#[derive(Extract, Deserialize, Debug, PartialEq)]
#[extract(check)]
struct Sum {
    a: u32,
    b: u32,
    total: u32,
}

impl Check for Sum {
    fn check(&self, issues: &mut Issues) {
        if self.a + self.b != self.total {
            issues.hard("/total", "the total is a + b");
        }
        if self.total > 2 {
            issues.soft("/total", "a large total");
        }
    }
}

fn runtime<F>(block: F) -> F::Output
where
    F: std::future::Future,
{
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
        .block_on(block)
}

/// The temperature and seed of each request.
type Asked = Arc<Mutex<Vec<(Option<f32>, Option<u64>)>>>;

/// A backend that answers `answers[seed]` (seed 0 when none is sent) and records each request's
/// sampling; every request waits until `together` requests have arrived, so the answers must be asked
/// for at once.
fn by_seed(answers: Vec<&'static str>, together: usize) -> (impl llm_extract::Llm, Asked) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let barrier = Arc::new(Barrier::new(together));
    let log = seen.clone();
    let llm = from_fn(move |request: ChatRequest| {
        log.lock()
            .unwrap()
            .push((request.temperature, request.seed));
        let barrier = barrier.clone();
        let seed = request.seed.unwrap_or(0) as usize;
        let answer = answers.get(seed).copied();
        async move {
            tokio::time::timeout(Duration::from_secs(10), barrier.wait())
                .await
                .map_err(|_| LlmError::InvalidResponse {
                    message: "the answers were not asked for at once".into(),
                    body: String::new(),
                })?;
            match answer {
                Some(answer) => Ok(ChatResponse::new(answer).with_usage(10, 5)),
                None => Err(LlmError::InvalidResponse {
                    message: "no answer for this seed".into(),
                    body: String::new(),
                }),
            }
        }
    });
    (llm, seen)
}

#[test]
fn items_are_voted_on_by_key_across_answers_asked_at_once() {
    let (llm, seen) = by_seed(
        vec![
            r#"{"items": [{"name": "Tim Cook", "company": "Apple"}, {"name": "Lisa Su", "company": "Nvidia"}]}"#,
            r#"{"items": [{"name": "lisa su", "company": "AMD"}, {"name": "Tim Cook", "company": "Apple"}]}"#,
            r#"{"items": [{"name": "Tim Cook", "company": "Apple"}, {"name": "Lisa Su", "company": "AMD"}, {"name": "<NAME>", "company": null}]}"#,
        ],
        3,
    );
    let out = runtime(
        Extractor::new(llm)
            .samples(3)
            .extract_all::<Leader>("Tim Cook runs Apple. Lisa Su leads AMD."),
    )
    .unwrap();
    assert_eq!(
        out.value,
        [
            Leader {
                name: "Tim Cook".into(),
                company: Some("Apple".into())
            },
            Leader {
                name: "Lisa Su".into(),
                company: Some("AMD".into())
            },
        ]
    );
    let agreement = &out.report.agreement;
    assert_eq!(agreement["/0/company"], 1.0);
    assert!((agreement["/1/company"] - 2.0 / 3.0).abs() < 1e-6);
    assert_eq!(out.report.attempts.len(), 3);
    assert_eq!(out.report.usage.total(), 45);
    let mut seen = seen.lock().unwrap().clone();
    seen.sort_by_key(|(_, seed)| *seed);
    assert_eq!(
        seen,
        [
            (Some(0.0), Some(0)),
            (Some(SAMPLE_TEMPERATURE), Some(1)),
            (Some(SAMPLE_TEMPERATURE), Some(2)),
        ]
    );
}

#[test]
fn a_vote_the_checks_refuse_gives_way_to_the_answer_closest_to_it() {
    // a: 1, 1, 2 -> 1; b: 1, 2, 1 -> 1; total: 2, 3, 3 -> 3; and 1 + 1 is not 3.
    let (llm, _) = by_seed(
        vec![
            r#"{"a": 1, "b": 1, "total": 2}"#,
            r#"{"a": 1, "b": 2, "total": 3}"#,
            r#"{"a": 2, "b": 1, "total": 3}"#,
        ],
        3,
    );
    let out = runtime(Extractor::new(llm).samples(3).extract::<Sum>("Sums.")).unwrap();
    // Each answer shares two leaves with the vote: the earliest stands.
    assert_eq!(
        out.value,
        Sum {
            a: 1,
            b: 1,
            total: 2
        }
    );
    assert!((out.report.agreement["/a"] - 2.0 / 3.0).abs() < 1e-6);
    assert!((out.report.agreement["/total"] - 1.0 / 3.0).abs() < 1e-6);
    assert!(out.report.issues.is_empty());
}

#[test]
fn soft_issues_are_those_of_the_value_returned() {
    let (llm, _) = by_seed(
        vec![
            r#"{"a": 1, "b": 2, "total": 3}"#,
            r#"{"a": 1, "b": 1, "total": 2}"#,
            r#"{"a": 1, "b": 2, "total": 3}"#,
        ],
        3,
    );
    let out = runtime(Extractor::new(llm).samples(3).extract::<Sum>("Sums.")).unwrap();
    assert_eq!(out.value.total, 3);
    assert_eq!(out.report.issues.len(), 1);
    assert_eq!(out.report.issues[0].path, "/total");
}

#[test]
fn a_failed_answer_is_left_out_of_the_vote_and_its_cost_kept() {
    let schema = SchemaSet::new(
        "City",
        json!({
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
            "additionalProperties": false
        }),
    );
    // Seed 2 has no answer: the backend fails for it.
    let (llm, _) = by_seed(vec![r#"{"city": "Lyon"}"#, r#"{"city": "Paris"}"#], 3);
    let extractor = Extractor::new(llm).samples(3).max_attempts(1);
    let out = runtime(
        extractor
            .with_schema(&schema)
            .extract("A walk along the Saône."),
    )
    .unwrap();
    // One against one: the earliest answer wins the tie.
    assert_eq!(out.value, json!({"city": "Lyon"}));
    // Agreement counts the answers that came.
    assert_eq!(out.report.agreement["/city"], 0.5);
    assert_eq!(out.report.attempts.len(), 3);
    assert!(out.report.attempts[2].error.is_some());
}

#[test]
fn every_answer_failing_fails_with_every_answers_ledger() {
    let schema = SchemaSet::new("City", json!({"type": "string"}));
    let (llm, _) = by_seed(Vec::new(), 2);
    let extractor = Extractor::new(llm).samples(2).max_attempts(1);
    let error = runtime(extractor.with_schema(&schema).extract("Nowhere.")).unwrap_err();
    assert_eq!(error.attempts().len(), 2);
}

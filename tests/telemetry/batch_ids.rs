//! Telemetry: an extraction answered through a provider's batch API names, on each attempt's span,
//! the job the answer came from (`llm_extract.batch_id`) and the request's `custom_id`
//! (`llm_extract.batch_request`), against the local batch servers: a document whose first
//! submission failed names the job it was submitted again in, a repaired one the re-ask's job, and a
//! re-ask sent online names no job.

use crate::batch_servers;
use crate::capture::{self, field};
use crate::support;

use batch_servers::{number, scripted, Api, BatchServer};
use llm_extract::batch::{Batch, ProviderBatch, Record, RecordResult, Repairs};
use llm_extract::extract::Extractor;
use llm_extract::llm::{Anthropic, OpenAiCompatible};
use llm_extract::schema::DynamicSchema;
use std::collections::HashMap;
use std::time::Duration;

/// Documents 0 to 8: document i says `document i: the number is i.`; the scripted model fails
/// documents 3 (a 500 on its first submission), 5 (expired on its first) and 7 (invalid JSON until
/// repaired), and answers all of them in the end.
fn records() -> Vec<Record> {
    (0..9)
        .map(|i| {
            Record::new(
                format!("doc-{i}"),
                format!("document {i}: the number is {i}."),
            )
        })
        .collect()
}

fn run(api: &ProviderBatch, extractor: Extractor<impl llm_extract::llm::Llm>) -> Vec<RecordResult> {
    let schema = DynamicSchema::from_signature("{n :int}").unwrap();
    let mut results = Vec::new();
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(Batch::new(extractor).for_each_on(
            api,
            schema.schema_set(),
            records(),
            |result, _| results.push(result),
            |_| {},
        ))
        .unwrap();
    results
}

fn all_valid(results: &[RecordResult]) {
    let failed: Vec<&str> = results
        .iter()
        .filter(|r| r.outcome.is_err())
        .map(|r| r.id.as_str())
        .collect();
    assert!(failed.is_empty(), "failed: {failed:?}");
}

/// For each custom id, the jobs that held it, in the order they were created.
fn jobs_by_request(server: &BatchServer) -> HashMap<String, (Vec<String>, u64)> {
    let mut jobs: HashMap<String, (Vec<String>, u64)> = HashMap::new();
    for (job, custom_id, document) in server.job_lines() {
        let entry = jobs.entry(custom_id).or_default();
        entry.0.push(job);
        entry.1 = number(&document).expect("a document number");
    }
    jobs
}

#[test]
fn attempts_answered_in_a_batch_job_name_it() {
    let (_serial, spans) = capture::start_blocking();
    let server = BatchServer::start(Api::OpenAi, 2, scripted, |text| text.len() / 4);
    let dir = tempfile::tempdir().unwrap();
    let llm = OpenAiCompatible::builder(server.url(), "gpt-test")
        .api_key("sk-batch-telemetry-SECRET")
        .retry(support::clock::fast_retry())
        .build()
        .unwrap();
    let api = ProviderBatch::openai(&llm, dir.path().join("out.jsonl.batch"))
        .poll_interval(Duration::from_millis(5))
        .resubmits(2);
    let results = run(&api, Extractor::new(llm.clone()).max_attempts(3));
    assert_eq!(results.len(), 9);
    all_valid(&results);

    let jobs = jobs_by_request(&server);
    let attempts = spans.named("extract_attempt");
    // Nine first asks and document 7's repair.
    assert_eq!(attempts.len(), 10, "{attempts:?}");
    let mut per_document: HashMap<u64, Vec<String>> = HashMap::new();
    for attempt in &attempts {
        let request = field(attempt, "llm_extract.batch_request");
        let (held, document) = jobs
            .get(request)
            .unwrap_or_else(|| panic!("{request} was in no job: {attempt:?}"));
        // The job that answered: the last one the request was submitted in.
        let job = field(attempt, "llm_extract.batch_id");
        assert_eq!(Some(job), held.last().map(String::as_str), "{attempt:?}");
        assert!(job.starts_with("batch_"), "{job}");
        per_document
            .entry(*document)
            .or_default()
            .push(job.to_owned());
    }
    for (document, jobs) in &per_document {
        match document {
            // Submitted again after the provider failed it: answered by a later job than the first.
            3 | 5 => assert_ne!(jobs, &per_document[&0], "document {document}"),
            // Asked again with the repair turn, in a job of its own.
            7 => {
                assert_eq!(jobs.len(), 2, "{jobs:?}");
                assert_ne!(jobs[0], jobs[1]);
            }
            _ => assert_eq!(jobs.len(), 1, "document {document}: {jobs:?}"),
        }
    }
    assert!(!spans.everything().contains("SECRET"));
}

#[test]
fn a_re_ask_online_names_its_request_and_no_job() {
    let (_serial, spans) = capture::start_blocking();
    let server = BatchServer::start(Api::Anthropic, 2, scripted, |text| text.len() / 4);
    let dir = tempfile::tempdir().unwrap();
    let llm = Anthropic::builder("claude-test")
        .base_url(server.url())
        .api_key("sk-ant-batch-telemetry-SECRET")
        .retry(support::clock::fast_retry())
        .build()
        .unwrap();
    let api = ProviderBatch::anthropic(&llm, dir.path().join("out.jsonl.batch"))
        .poll_interval(Duration::from_millis(5))
        .resubmits(2)
        .repairs(Repairs::Online);
    let results = run(&api, Extractor::new(llm.clone()).max_attempts(3));
    all_valid(&results);

    let jobs = jobs_by_request(&server);
    let attempts = spans.named("extract_attempt");
    assert_eq!(attempts.len(), 10, "{attempts:?}");
    let (online, in_jobs): (Vec<_>, Vec<_>) =
        attempts.iter().partition(|a| field(a, "kind") == "repair");
    assert_eq!(online.len(), 1, "{online:?}");
    let repair = online[0];
    assert!(!repair.contains_key("llm_extract.batch_id"), "{repair:?}");
    assert!(!jobs.contains_key(field(repair, "llm_extract.batch_request")));
    for attempt in in_jobs {
        let job = field(attempt, "llm_extract.batch_id");
        assert!(job.starts_with("msgbatch_"), "{job}");
        let (held, _) = &jobs[field(attempt, "llm_extract.batch_request")];
        assert_eq!(Some(job), held.last().map(String::as_str));
    }
    assert!(!spans.everything().contains("SECRET"));
}

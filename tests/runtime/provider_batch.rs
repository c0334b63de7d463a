//! Batches on the providers' batch APIs, against local servers written from each provider's
//! documentation (`batch_servers`): 200 documents through OpenAI's Batch API and Anthropic's Message
//! Batches with some requests failing, expiring or answered with invalid JSON, a run stopped while a
//! job runs and started again, jobs split within limits, re-asks online, and Gemini's batch mode.
//! Every document ends valid or failed with its ledger, nothing is submitted twice but re-asks and
//! the requests the provider did not answer, and every body carries its provider's schema field.

use crate::batch_servers;
use crate::support;

use batch_servers::{number, scripted as model, Api, Ask, BatchServer, Fate};
use llm_extract::batch::{Batch, JobProgress, ProviderBatch, Record, RecordResult, Repairs};
use llm_extract::extract::{ExtractErrorKind, Extractor};
use llm_extract::llm::{Anthropic, Gemini, Llm, OpenAiCompatible};
use llm_extract::schema::DynamicSchema;
use serde_json::json;
use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

/// Tokens under o200k_base.
fn tokens(text: &str) -> usize {
    tiktoken_rs::o200k_base_singleton()
        .encode_ordinary(text)
        .len()
}

fn records(count: u64) -> Vec<Record> {
    (0..count)
        .map(|i| {
            Record::new(
                format!("doc-{i}"),
                format!("document {i}: the number is {i}."),
            )
        })
        .collect()
}

fn schema() -> DynamicSchema {
    DynamicSchema::from_signature("{n :int}").unwrap()
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// Every document is valid with its own number, or failed as the script says, with its ledger.
fn check_results(results: &[RecordResult], count: u64) {
    check_results_priced(results, count, true);
}

/// [`check_results`]; `all_batch`: every answer came from a job (none online).
fn check_results_priced(results: &[RecordResult], count: u64, all_batch: bool) {
    assert_eq!(results.len() as u64, count);
    for result in results {
        let i: u64 = result.id.trim_start_matches("doc-").parse().unwrap();
        match (i % 50, &result.outcome) {
            (9, Err(error)) => {
                assert!(
                    matches!(error.kind(), ExtractErrorKind::Invalid(_)),
                    "{i}: {error}"
                );
                assert_eq!(
                    error.attempts().len(),
                    3,
                    "{i}: the ledger holds every attempt"
                );
                assert_eq!(error.raw(), Some("I cannot find a number, sorry."));
            }
            (19, Err(error)) => {
                assert!(
                    matches!(error.kind(), ExtractErrorKind::Llm(_)),
                    "{i}: {error}"
                );
                assert!(error.to_string().contains("400"), "{i}: {error}");
            }
            (_, Ok(extraction)) if i % 50 != 9 && i % 50 != 19 => {
                assert_eq!(extraction.value, json!({"n": i}), "{i}");
                let attempts = if i % 10 == 7 { 2 } else { 1 };
                assert_eq!(extraction.report.attempts.len(), attempts, "{i}");
                assert!(result.batch_usage.total() > 0, "{i}: batch-priced tokens");
                if all_batch || attempts == 1 {
                    assert_eq!(result.batch_usage, extraction.report.usage, "{i}");
                }
            }
            (_, outcome) => panic!("document {i}: {outcome:?}"),
        }
    }
}

/// Nothing was submitted twice but the requests the provider did not answer the first time.
fn check_submissions(server: &BatchServer, results: &[RecordResult]) {
    let submissions = server.submissions();
    let mut per_document: HashMap<u64, usize> = HashMap::new();
    for body in server.bodies() {
        let text = body.to_string();
        if let Some(i) = number(&text) {
            *per_document.entry(i).or_default() += 1;
        }
    }
    for (id, times) in &submissions {
        assert!(*times <= 2, "{id} submitted {times} times");
    }
    for result in results {
        let i: u64 = result.id.trim_start_matches("doc-").parse().unwrap();
        // First asks, plus one resubmission when it failed transiently, plus re-asks.
        let expected = match (i % 10, i % 50) {
            (_, 9) => 3,
            (_, 19) => 1,
            (3 | 5, _) => 2,
            (7, _) => 2,
            _ => 1,
        };
        assert_eq!(per_document.get(&i), Some(&expected), "document {i}");
    }
}

fn run_batch<L: Llm>(
    extractor: Extractor<L>,
    api: &ProviderBatch,
    count: u64,
) -> (Vec<RecordResult>, Vec<JobProgress>) {
    let schema = schema();
    let mut progress = Vec::new();
    let mut results = Vec::new();
    runtime()
        .block_on(Batch::new(extractor).for_each_on(
            api,
            schema.schema_set(),
            records(count),
            |result, _| results.push(result),
            |jobs| progress.push(jobs),
        ))
        .unwrap();
    results.sort_by_key(|r| r.index);
    (results, progress)
}

fn openai(server: &BatchServer) -> OpenAiCompatible {
    OpenAiCompatible::builder(server.url(), "gpt-test")
        .retry(support::clock::fast_retry())
        .build()
        .unwrap()
}

fn anthropic(server: &BatchServer) -> Anthropic {
    Anthropic::builder("claude-test")
        .base_url(server.url())
        .retry(support::clock::fast_retry())
        .build()
        .unwrap()
}

fn manifest(dir: &Path) -> std::path::PathBuf {
    dir.join("out.jsonl.batch")
}

#[test]
fn two_hundred_documents_through_openai_batches() {
    let server = BatchServer::start(Api::OpenAi, 3, model, tokens);
    let dir = tempfile::tempdir().unwrap();
    let llm = openai(&server);
    let api = ProviderBatch::openai(&llm, manifest(dir.path()))
        .poll_interval(Duration::from_millis(5))
        .resubmits(2);
    let (results, progress) = run_batch(Extractor::new(llm.clone()).max_attempts(3), &api, 200);
    check_results(&results, 200);
    check_submissions(&server, &results);
    for body in server.bodies() {
        assert_eq!(body["response_format"]["type"], "json_schema", "{body}");
        assert!(body["response_format"]["json_schema"]["schema"].is_object());
        assert!(body.get("stream").is_none(), "a job line is not streamed");
    }
    // Round one, the resubmissions of the errored and expired, and the re-asks (twice).
    assert!(server.jobs() >= 3, "{}", server.jobs());
    let last = progress.last().unwrap();
    assert_eq!(last.jobs, last.jobs_ended);
    assert_eq!(last.resubmitted, 40, "{last:?}");
}

#[test]
fn two_hundred_documents_through_anthropic_message_batches() {
    let server = BatchServer::start(Api::Anthropic, 2, model, tokens);
    let dir = tempfile::tempdir().unwrap();
    let llm = anthropic(&server);
    let api = ProviderBatch::anthropic(&llm, manifest(dir.path()))
        .poll_interval(Duration::from_millis(5))
        .resubmits(2);
    let (results, _) = run_batch(Extractor::new(llm.clone()).max_attempts(3), &api, 200);
    check_results(&results, 200);
    check_submissions(&server, &results);
    for body in server.bodies() {
        assert_eq!(
            body["output_config"]["format"]["type"], "json_schema",
            "{body}"
        );
        assert!(body["output_config"]["format"]["schema"].is_object());
        assert!(body.get("stream").is_none());
    }
}

#[test]
fn a_run_stopped_while_a_job_runs_polls_it_when_started_again() {
    let server = BatchServer::start(Api::Anthropic, 6, model, tokens);
    let dir = tempfile::tempdir().unwrap();
    let llm = anthropic(&server);
    let api = ProviderBatch::anthropic(&llm, manifest(dir.path()))
        .poll_interval(Duration::from_millis(5))
        .resubmits(2);
    let schema = schema();
    let batch = Batch::new(Extractor::new(llm.clone()).max_attempts(3));
    // The first run stops (as a killed process does) at its second poll of the first job.
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let mut stop = Some(stop);
    let mut polls = 0;
    let mut first = Vec::new();
    runtime().block_on(async {
        let run = batch.for_each_on(
            &api,
            schema.schema_set(),
            records(200),
            |result, _| first.push(result),
            |jobs| {
                polls += 1;
                if jobs.jobs == 1 && polls == 3 {
                    stop.take().map(|stop| stop.send(()));
                }
            },
        );
        tokio::select! {
            _ = run => panic!("the run ended before it was stopped"),
            _ = stopped => {}
        }
    });
    assert!(first.is_empty());
    assert_eq!(server.jobs(), 1);
    assert_eq!(server.submissions().len(), 200);

    let (results, progress) = run_batch(Extractor::new(llm.clone()).max_attempts(3), &api, 200);
    check_results(&results, 200);
    check_submissions(&server, &results);
    assert_eq!(
        progress.first().unwrap().submitted,
        0,
        "the job is polled, not submitted again"
    );

    // A third run pays for nothing: every answer is in the manifest.
    let before = server.bodies().len();
    let (again, progress) = run_batch(Extractor::new(llm).max_attempts(3), &api, 200);
    check_results(&again, 200);
    assert_eq!(server.bodies().len(), before);
    assert!(progress.iter().all(|p| p.submitted == 0));
}

#[test]
fn large_inputs_are_split_into_jobs_within_the_limits() {
    let server = BatchServer::start(
        Api::OpenAi,
        1,
        |ask| Fate::Answer(format!("{{\"n\": {}}}", number(&ask.document).unwrap_or(0))),
        |text| text.len() / 4,
    );
    let dir = tempfile::tempdir().unwrap();
    let llm = openai(&server);
    let api = ProviderBatch::openai(&llm, manifest(dir.path()))
        .poll_interval(Duration::from_millis(5))
        .job_limits(30, 1_000_000);
    let (results, _) = run_batch(Extractor::new(llm.clone()), &api, 100);
    assert!(results.iter().all(RecordResult::is_ok));
    assert_eq!(server.job_sizes(), [30, 30, 30, 10]);

    // By bytes: each line is some hundreds of bytes, so a 4 kB job holds a handful.
    let server = BatchServer::start(
        Api::OpenAi,
        1,
        |ask| Fate::Answer(format!("{{\"n\": {}}}", number(&ask.document).unwrap_or(0))),
        |text| text.len() / 4,
    );
    let llm = openai(&server);
    let api = ProviderBatch::openai(&llm, dir.path().join("second.batch"))
        .poll_interval(Duration::from_millis(5))
        .job_limits(1000, 4000);
    let (results, _) = run_batch(Extractor::new(llm.clone()), &api, 40);
    assert!(results.iter().all(RecordResult::is_ok));
    let sizes = server.job_sizes();
    assert!(
        sizes.len() > 2 && sizes.iter().sum::<usize>() == 40,
        "{sizes:?}"
    );
}

#[test]
fn re_asks_can_go_online() {
    let server = BatchServer::start(Api::OpenAi, 1, model, tokens);
    let dir = tempfile::tempdir().unwrap();
    let llm = openai(&server);
    let api = ProviderBatch::openai(&llm, manifest(dir.path()))
        .poll_interval(Duration::from_millis(5))
        .repairs(Repairs::Online);
    let (results, _) = run_batch(Extractor::new(llm.clone()).max_attempts(3), &api, 50);
    check_results_priced(&results, 50, false);
    // Re-asks of 7, 17, 27, 37, 47 (once) and 9 (twice) went online, at the online price.
    let ((prompt, _), online) = server.online();
    assert_eq!(online, 7);
    assert!(prompt > 0);
    let repaired = results.iter().find(|r| r.id == "doc-7").unwrap();
    let extraction = repaired.outcome.as_ref().unwrap();
    assert!(repaired.batch_usage.total() < extraction.report.usage.total());
}

#[test]
fn gemini_batch_mode_with_inline_requests() {
    let server = BatchServer::start(Api::Gemini, 2, model, tokens);
    let dir = tempfile::tempdir().unwrap();
    let llm = Gemini::builder("gemini-test")
        .base_url(server.url())
        .retry(support::clock::fast_retry())
        .build()
        .unwrap();
    let api = ProviderBatch::gemini(&llm, manifest(dir.path()))
        .poll_interval(Duration::from_millis(5))
        .resubmits(2);
    let (results, _) = run_batch(Extractor::new(llm.clone()).max_attempts(3), &api, 30);
    check_results(&results, 30);
    check_submissions(&server, &results);
    for body in server.bodies() {
        let config = &body["generationConfig"];
        assert_eq!(config["responseMimeType"], "application/json", "{body}");
        assert!(config["responseJsonSchema"].is_object(), "{body}");
    }
}

#[test]
fn a_manifest_of_another_api_is_refused() {
    let server = BatchServer::start(Api::OpenAi, 1, model, tokens);
    let dir = tempfile::tempdir().unwrap();
    let path = manifest(dir.path());
    std::fs::write(
        &path,
        "{\"event\":\"job\",\"api\":\"anthropic\",\"job\":\"x\",\"requests\":[],\"documents\":[]}\n",
    )
    .unwrap();
    let llm = openai(&server);
    let api = ProviderBatch::openai(&llm, &path);
    let schema = schema();
    let error = runtime()
        .block_on(Batch::new(Extractor::new(llm)).extract_many_on(
            &api,
            schema.schema_set(),
            records(2),
        ))
        .unwrap_err();
    assert!(error.to_string().contains("anthropic"), "{error}");
    assert_eq!(server.jobs(), 0);
}

/// The scripted model without transport failures (which no provider bills): prose for i % 50 == 9,
/// invalid JSON until repaired for i % 10 == 7, `{"n": i}` otherwise.
fn content_model(ask: &Ask) -> Fate {
    let i = number(&ask.document).unwrap_or(0);
    match (i % 10, i % 50) {
        (_, 9) => Fate::Answer("I cannot find a number, sorry.".into()),
        (7, _) if ask.user_turns == 1 => Fate::Answer(format!("{{\"n\": {i},")),
        _ => Fate::Answer(format!("{{\"n\": {i}}}")),
    }
}

/// The cost of 200 documents through OpenAI's Batch API against the online path, in billed tokens
/// as the local server counts them (o200k_base over the messages and the schema), priced at the
/// documented batch discount (half the online price, on OpenAI, Anthropic and Gemini alike). The
/// figures of BENCHMARKS.md ("Batch APIs"): `cargo test --test provider_batch -- --nocapture cost`.
#[test]
fn the_cost_of_a_batch_against_the_online_path() {
    let count = 200;
    let dir = tempfile::tempdir().unwrap();
    // Re-asks in follow-up jobs.
    let in_jobs = BatchServer::start(Api::OpenAi, 1, content_model, tokens);
    let llm = openai(&in_jobs);
    let api = ProviderBatch::openai(&llm, dir.path().join("jobs.batch"))
        .poll_interval(Duration::from_millis(5));
    let (jobs_results, _) = run_batch(Extractor::new(llm.clone()).max_attempts(3), &api, count);
    // Re-asks online.
    let mixed = BatchServer::start(Api::OpenAi, 1, content_model, tokens);
    let llm = openai(&mixed);
    let api = ProviderBatch::openai(&llm, dir.path().join("mixed.batch"))
        .poll_interval(Duration::from_millis(5))
        .repairs(Repairs::Online);
    let (mixed_results, _) = run_batch(Extractor::new(llm.clone()).max_attempts(3), &api, count);
    // Online: one request per attempt.
    let online = BatchServer::start(Api::OpenAi, 1, content_model, tokens);
    let llm = openai(&online);
    let schema = schema();
    let online_results = runtime().block_on(
        Batch::new(Extractor::new(llm).max_attempts(3))
            .concurrency(8)
            .extract_many(schema.schema_set(), records(count), |_| {}),
    );
    let valid = |results: &[RecordResult]| results.iter().filter(|r| r.is_ok()).count();
    assert_eq!(valid(&jobs_results), 196);
    assert_eq!(valid(&mixed_results), 196);
    assert_eq!(valid(&online_results), 196);

    let (batch_prompt, batch_completion) = in_jobs.batch_tokens();
    let ((online_prompt, online_completion), online_requests) = online.online();
    // The same requests, the same tokens: only the price differs.
    assert_eq!(
        (batch_prompt, batch_completion),
        (online_prompt, online_completion)
    );
    assert_eq!(online_requests, 200 + 20 + 4 * 2);
    let (mixed_batch_prompt, mixed_batch_completion) = mixed.batch_tokens();
    let ((mixed_online_prompt, mixed_online_completion), _) = mixed.online();
    assert_eq!(mixed_batch_prompt + mixed_online_prompt, online_prompt);

    // Output tokens at four times the price of input tokens (the ratio of several current price
    // lists); the batch price is half the online price.
    let cost = |prompt: u64, completion: u64| prompt as f64 + 4.0 * completion as f64;
    let online_cost = cost(online_prompt, online_completion);
    let batch_cost = 0.5 * cost(batch_prompt, batch_completion);
    let mixed_cost = 0.5 * cost(mixed_batch_prompt, mixed_batch_completion)
        + cost(mixed_online_prompt, mixed_online_completion);
    println!("billed tokens of {count} documents (prompt + completion), cost relative to online:");
    println!(
        "  online:                    {online_prompt} + {online_completion}, {online_requests} requests, 1.000"
    );
    println!(
        "  batch, re-asks in jobs:    {batch_prompt} + {batch_completion}, {} jobs, {:.3}",
        in_jobs.jobs(),
        batch_cost / online_cost
    );
    println!(
        "  batch, re-asks online:     {mixed_batch_prompt} + {mixed_batch_completion} in {} jobs, {mixed_online_prompt} + {mixed_online_completion} online, {:.3}",
        mixed.jobs(),
        mixed_cost / online_cost
    );
    assert!(batch_cost < mixed_cost && mixed_cost < online_cost);
}

#[test]
fn media_parts_go_in_the_job_lines_as_online() {
    use llm_extract::extract::Input;
    use llm_extract::llm::Media;
    let server = BatchServer::start(Api::Anthropic, 1, model, tokens);
    let dir = tempfile::tempdir().unwrap();
    let llm = anthropic(&server);
    let api = ProviderBatch::anthropic(&llm, manifest(dir.path()))
        .poll_interval(Duration::from_millis(5));
    let schema = schema();
    let record = Record::new(
        "doc-1",
        Input::text("document 1: the number is on the receipt.")
            .with_media(Media::png(support::media::png())),
    );
    let results = runtime()
        .block_on(Batch::new(Extractor::new(llm)).extract_many_on(
            &api,
            schema.schema_set(),
            [record],
        ))
        .unwrap();
    assert_eq!(results[0].outcome.as_ref().unwrap().value, json!({"n": 1}));
    let bodies = server.bodies();
    let content = &bodies[0]["messages"][0]["content"];
    let image = content
        .as_array()
        .and_then(|parts| parts.iter().find(|p| p["type"] == "image"))
        .unwrap_or_else(|| panic!("no image block: {content}"));
    assert_eq!(image["source"]["media_type"], "image/png");
    assert_eq!(
        support::media::decode(&image["source"]["data"]),
        support::media::png()
    );
}

#[test]
fn the_structured_output_beta_header_goes_on_the_batch_request() {
    use llm_extract::llm::AnthropicOutput;
    let server = BatchServer::start(Api::Anthropic, 1, model, tokens);
    let dir = tempfile::tempdir().unwrap();
    let llm = Anthropic::builder("claude-test")
        .base_url(server.url())
        .output(AnthropicOutput::BetaJson)
        .build()
        .unwrap();
    let api = ProviderBatch::anthropic(&llm, manifest(dir.path()))
        .poll_interval(Duration::from_millis(5));
    let (results, _) = run_batch(Extractor::new(llm.clone()), &api, 4);
    assert!(results.iter().all(RecordResult::is_ok));
    // Document 3 fails on its first submission: a second batch resubmits it.
    let headers = server.batch_headers();
    assert_eq!(headers.len(), 2);
    for (version, beta) in &headers {
        assert!(version.is_some(), "anthropic-version on the batch request");
        let beta = beta.as_deref().unwrap_or_default();
        assert!(beta.contains("structured-outputs"), "{beta:?}");
    }
    for body in server.bodies() {
        assert!(body["output_format"]["schema"].is_object(), "{body}");
    }
}

#[test]
fn a_run_stopped_while_its_follow_up_job_runs_pays_for_nothing_twice() {
    let server = BatchServer::start(Api::OpenAi, 4, model, tokens);
    let dir = tempfile::tempdir().unwrap();
    let llm = openai(&server);
    let api = ProviderBatch::openai(&llm, manifest(dir.path()))
        .poll_interval(Duration::from_millis(5))
        .resubmits(2);
    let schema = schema();
    let batch = Batch::new(Extractor::new(llm.clone()).max_attempts(3));
    // The first job ends, its good answers are extracted, and the run stops while the second job
    // (resubmissions) runs.
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let mut stop = Some(stop);
    let mut first = Vec::new();
    runtime().block_on(async {
        let run = batch.for_each_on(
            &api,
            schema.schema_set(),
            records(100),
            |result, _| first.push(result),
            |jobs| {
                if jobs.jobs == 2 && jobs.running_total > 0 {
                    stop.take().map(|stop| stop.send(()));
                }
            },
        );
        tokio::select! {
            _ = run => panic!("the run ended before it was stopped"),
            _ = stopped => {}
        }
    });
    assert_eq!(server.jobs(), 2);
    let answered_in_first_run = first.len();

    let (results, progress) = run_batch(Extractor::new(llm), &api, 100);
    check_results(&results, 100);
    check_submissions(&server, &results);
    let first_poll = progress.first().unwrap();
    assert_eq!(first_poll.submitted, 0, "{first_poll:?}");
    assert!(first_poll.from_manifest >= answered_in_first_run);
}

#[test]
fn a_job_the_provider_no_longer_knows_is_submitted_again() {
    let server = BatchServer::start(Api::OpenAi, 1, model, tokens);
    let dir = tempfile::tempdir().unwrap();
    let path = manifest(dir.path());
    let llm = openai(&server);
    // An earlier run recorded a job of document 0's request that the provider has since lost.
    let api = ProviderBatch::openai(&llm, &path).poll_interval(Duration::from_millis(5));
    let (results, _) = run_batch(Extractor::new(llm.clone()), &api, 1);
    assert!(results[0].is_ok());
    let text = std::fs::read_to_string(&path).unwrap();
    let job_line = text.lines().next().unwrap();
    let request: serde_json::Value = serde_json::from_str(job_line).unwrap();
    let custom_id = request["requests"][0].as_str().unwrap();
    std::fs::write(
        &path,
        format!(
            "{}\n",
            json!({"event": "job", "api": "openai", "job": "batch_lost", "requests": [custom_id], "documents": ["doc-0"]})
        ),
    )
    .unwrap();
    let (results, _) = run_batch(Extractor::new(llm), &api, 1);
    assert_eq!(results[0].outcome.as_ref().unwrap().value, json!({"n": 0}));
    assert_eq!(server.submissions().get(custom_id), Some(&2));
}

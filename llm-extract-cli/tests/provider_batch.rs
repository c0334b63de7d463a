//! `llm-extract batch --provider-batch` against local servers speaking OpenAI's Batch API and
//! Anthropic's Message Batches as documented (`tests/batch_servers`): a 200-document batch killed
//! while its job runs, then run again, ends with every document once in the output, valid or failed
//! with its attempts, nothing submitted twice but the requests the provider did not answer and the
//! re-asks, and the tokens marked batch-priced.

#[path = "../../tests/batch_servers/mod.rs"]
mod batch_servers;
mod common;
#[path = "../../tests/support/mod.rs"]
mod support;

use assert_cmd::cargo::cargo_bin_cmd;
use batch_servers::{number, scripted as model, Api, BatchServer};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A rough token count (a test of the command, not of prices).
fn tokens(text: &str) -> usize {
    text.len().div_ceil(4)
}

fn documents(dir: &Path, count: u64) -> (PathBuf, PathBuf) {
    let (input, out) = (dir.join("docs.jsonl"), dir.join("out.jsonl"));
    let lines: Vec<String> = (0..count)
        .map(|i| {
            json!({"id": format!("doc-{i:03}"), "text": format!("document {i}: the number is {i}.")})
                .to_string()
        })
        .collect();
    std::fs::write(&input, lines.join("\n")).unwrap();
    (input, out)
}

fn args(input: &Path, out: &Path, backend: &[String]) -> Vec<String> {
    let mut args: Vec<String> = [
        "batch",
        "--signature",
        "{n :int}",
        "--input",
        &input.display().to_string(),
        "--out",
        &out.display().to_string(),
        "--model",
        "m",
        "--max-attempts",
        "3",
        "--retries",
        "2",
        "--provider-batch",
        "--poll",
        "0.02",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.extend(backend.iter().cloned());
    args
}

fn records(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// Every document once, valid with its number or failed as the script says.
fn check_output(out: &Path, count: u64) {
    let records = records(out);
    assert_eq!(records.len() as u64, count);
    let mut seen = HashMap::new();
    for record in &records {
        let id = record["id"].as_str().unwrap();
        assert!(seen.insert(id.to_owned(), ()).is_none(), "{id} twice");
        let i: u64 = id.trim_start_matches("doc-").parse().unwrap();
        match i % 50 {
            9 => {
                assert_eq!(record["ok"], false, "{record}");
                assert_eq!(record["kind"], "invalid", "{record}");
                assert_eq!(record["attempts"], 3, "{record}");
                assert_eq!(record["raw"], "I cannot find a number, sorry.");
            }
            19 => {
                assert_eq!(record["ok"], false, "{record}");
                assert_eq!(record["kind"], "backend", "{record}");
            }
            _ => {
                assert_eq!(record["ok"], true, "{record}");
                assert_eq!(record["value"], json!({"n": i}), "{record}");
                assert_eq!(record["attempts"], if i % 10 == 7 { 2 } else { 1 });
                assert_eq!(record["batch_tokens"], record["tokens"], "{record}");
                assert!(record["tokens"].as_u64() > Some(0), "{record}");
            }
        }
    }
}

/// No document's request was submitted twice but the transient failures and the re-asks.
fn check_submissions(server: &BatchServer, count: u64) {
    let mut per_document: HashMap<u64, usize> = HashMap::new();
    for body in server.bodies() {
        if let Some(i) = number(&body.to_string()) {
            *per_document.entry(i).or_default() += 1;
        }
    }
    for i in 0..count {
        let expected = match (i % 10, i % 50) {
            (_, 9) => 3,
            (_, 19) => 1,
            (3 | 5 | 7, _) => 2,
            _ => 1,
        };
        assert_eq!(per_document.get(&i), Some(&expected), "document {i}");
    }
    assert!(server.submissions().values().all(|n| *n <= 2));
}

#[test]
fn a_provider_batch_killed_while_its_job_runs_resumes_without_paying_twice() {
    let count = 200;
    let dir = tempfile::tempdir().unwrap();
    let (input, out) = documents(dir.path(), count);
    let server = BatchServer::start(Api::OpenAi, 12, model, tokens);
    let backend = ["--openai".to_owned(), server.url()];
    let mut child = Command::new(assert_cmd::cargo::cargo_bin!("llm-extract"))
        .args(args(&input, &out, &backend))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // A hang guard (no claim of speed): a batch that submits nothing for this long is broken.
    let deadline = Instant::now() + Duration::from_secs(120);
    while server.polls() < 3 {
        assert!(Instant::now() < deadline, "the batch submitted nothing");
        assert!(
            child.try_wait().unwrap().is_none(),
            "the batch ended before it was killed"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(server.jobs(), 1);
    assert!(records(&out).is_empty());
    let manifest = dir.path().join("out.jsonl.batch-manifest.jsonl");
    assert!(std::fs::read_to_string(&manifest)
        .unwrap()
        .contains("\"event\":\"job\""));

    let output = cargo_bin_cmd!("llm-extract")
        .args(args(&input, &out, &backend))
        .output()
        .unwrap();
    let stderr = common::stderr_of(&output);
    // Some documents failed: the exit code says so, as for any batch.
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("at the batch price"), "{stderr}");
    check_output(&out, count);
    check_submissions(&server, count);
    for body in server.bodies() {
        assert!(
            body["response_format"]["json_schema"]["schema"].is_object(),
            "{body}"
        );
    }

    // Again: every document is in the output.
    let output = cargo_bin_cmd!("llm-extract")
        .args(args(&input, &out, &backend))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    assert!(common::stderr_of(&output).contains("nothing to do"));
}

#[test]
fn anthropic_message_batches_from_the_command_line() {
    let count = 40;
    let dir = tempfile::tempdir().unwrap();
    let (input, out) = documents(dir.path(), count);
    let server = BatchServer::start(Api::Anthropic, 2, model, tokens);
    let backend = [format!("--anthropic={}", server.url())];
    let output = cargo_bin_cmd!("llm-extract")
        .args(args(&input, &out, &backend))
        .output()
        .unwrap();
    let stderr = common::stderr_of(&output);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    check_output(&out, count);
    check_submissions(&server, count);
    for body in server.bodies() {
        assert!(
            body["output_config"]["format"]["schema"].is_object(),
            "{body}"
        );
    }
}

#[test]
fn the_provider_batch_takes_one_hosted_backend() {
    let dir = tempfile::tempdir().unwrap();
    let (input, out) = documents(dir.path(), 2);
    let backend = ["--ollama".to_owned(), "http://127.0.0.1:9".to_owned()];
    let output = cargo_bin_cmd!("llm-extract")
        .args(args(&input, &out, &backend))
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(2),
        "{}",
        common::stderr_of(&output)
    );
    assert!(common::stderr_of(&output).contains("--provider-batch takes one backend"));
}

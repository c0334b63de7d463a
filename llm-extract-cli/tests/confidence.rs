//! `--confidence` on the paths that stream or chunk: `run --partial` prints the final value's
//! confidence, `doc` gives each item's record its confidence and marks the doubtful, as `run` does.

mod common;
#[path = "../../tests/support/mod.rs"]
mod support;

use assert_cmd::cargo::cargo_bin_cmd;
use common::{json_lines, stderr_of};
use serde_json::json;
use support::providers::{openai_tokens, ADA_TOKENS};
use support::TestServer;

#[test]
fn run_partial_prints_the_final_values_confidence() {
    let server = TestServer::start(|_| openai_tokens(ADA_TOKENS));
    let output = cargo_bin_cmd!("llm-extract")
        .args([
            "run",
            "--signature",
            "{name :string, age :int}",
            "--model",
            "m",
        ])
        .args([
            "--openai",
            &server.url(),
            "--partial",
            "--min-confidence",
            "0.5",
        ])
        .write_stdin("Ada, 36")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    let stderr = stderr_of(&output);
    assert!(stderr.contains("confidence 0.14 /age 36"), "{stderr}");
    assert!(stderr.contains("confidence 0.82 /name \"Ada\""), "{stderr}");
    assert!(
        stderr.contains("doubtful: at /age: low confidence"),
        "{stderr}"
    );
}

#[test]
fn doc_gives_each_record_its_confidence_and_marks_the_doubtful() {
    let server = TestServer::start(|_| {
        openai_tokens(&[
            ("{\"items\": [{\"name\": \"", 0.0),
            ("Ada", -0.1),
            ("\"}, {\"name\": \"", 0.0),
            ("Bob", -2.0),
            ("\"}]}", 0.0),
        ])
    });
    let cache = tempfile::tempdir().unwrap();
    let output = cargo_bin_cmd!("llm-extract")
        .env("XDG_CACHE_HOME", cache.path())
        .args(["doc", "--signature", "{name :string}", "--grounded", "name"])
        .args(["--openai", &server.url(), "--model", "m"])
        .args(["--min-confidence", "0.5"])
        .write_stdin("Ada met Bob.")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    let lines = json_lines(&output.stdout);
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert_eq!(lines[0]["value"], json!({"name": "Ada"}));
    let ada = lines[0]["confidence"]["/name"].as_f64().unwrap();
    assert!((ada - (-0.1_f64).exp()).abs() < 1e-5, "{lines:?}");
    let bob = lines[1]["confidence"]["/name"].as_f64().unwrap();
    assert!((bob - (-2.0_f64).exp()).abs() < 1e-5, "{lines:?}");
    let stderr = stderr_of(&output);
    assert!(
        stderr.contains("doubtful: item 1, at /name: low confidence"),
        "{stderr}"
    );
    assert!(!stderr.contains("item 0, at /name"), "{stderr}");
}

//! `llm-extract run --embedded` on the real default model (SmolLM2-135M-Instruct), in process.
//!
//! Needs the cli crate's `llama-cpp` feature and the model: `LLM_EXTRACT_MODEL`, or the cache that
//! `scripts/fetch-model.sh` (run by `scripts/setup.sh` and `scripts/test.sh`) fills.
#![cfg(feature = "llama-cpp")]

use assert_cmd::cargo::cargo_bin_cmd;
use serde_json::Value;

const TEXT: &str =
    "Ada Lovelace was an English mathematician. Charles Babbage designed the Analytical Engine.";

fn stderr_of(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn run_embedded_prints_a_value_the_schema_allows() {
    let output = cargo_bin_cmd!("llm-extract")
        .args([
            "run",
            "--embedded",
            "--signature",
            "{name :string, field (mathematics | music | law)}",
        ])
        .args(["--max-tokens", "64", "--temperature", "0"])
        .write_stdin(TEXT)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    let value: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert!(value["name"].is_string(), "{value}");
    assert!(
        ["mathematics", "music", "law"].contains(&value["field"].as_str().unwrap_or("")),
        "{value}"
    );
}

#[test]
fn run_embedded_jsonl_prints_one_valid_object_per_line() {
    let output = cargo_bin_cmd!("llm-extract")
        .args([
            "run",
            "--embedded",
            "--signature",
            "{name :string}",
            "--jsonl",
        ])
        .args(["--max-tokens", "96", "--temperature", "0"])
        .write_stdin(TEXT)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    let stdout = String::from_utf8_lossy(&output.stdout);
    for line in stdout.lines() {
        let value: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{line:?}: {e}"));
        assert!(value["name"].is_string(), "{line}");
        assert_eq!(value.as_object().map(|o| o.len()), Some(1), "{line}");
    }
}

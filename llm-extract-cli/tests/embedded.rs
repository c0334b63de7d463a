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

/// Whether `name` holds a word of a name in [`TEXT`] (the model copies names it reads; it may drop one
/// part of a name).
fn from_text(name: &str) -> bool {
    ["Ada", "Lovelace", "Charles", "Babbage"]
        .iter()
        .any(|word| name.contains(word))
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
    let value: Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("stdout is not one JSON value ({e}): {:?}", output.stdout));
    let name = value["name"].as_str().unwrap_or_default();
    assert!(from_text(name), "a name from the text: {value}");
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
    let names: Vec<String> = stdout
        .lines()
        .map(|line| {
            let value: Value =
                serde_json::from_str(line).unwrap_or_else(|e| panic!("{line:?}: {e}"));
            assert_eq!(value.as_object().map(|o| o.len()), Some(1), "{line}");
            value["name"]
                .as_str()
                .unwrap_or_else(|| panic!("no string name: {line}"))
                .to_owned()
        })
        .collect();
    // Printing nothing is a failure: the text names two people, and the model copies names it reads.
    assert!(
        !names.is_empty(),
        "nothing printed; stderr: {}",
        stderr_of(&output)
    );
    assert!(
        names.iter().any(|n| from_text(n)),
        "no name from the text: {names:?}"
    );
}

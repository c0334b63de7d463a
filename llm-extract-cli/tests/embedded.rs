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

/// A text that the model's tokenizer cuts into many tokens (about one per two bytes): digits and
/// punctuation, `bytes` long.
fn token_dense_text(bytes: usize) -> String {
    let mut text = String::with_capacity(bytes + 16);
    let mut n: u64 = 7;
    for i in 0.. {
        if text.len() >= bytes {
            break;
        }
        n = n.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        text.push_str(&format!("{}; ", n >> 58));
        if i % 50 == 49 {
            text.push_str(".\n\n");
        }
    }
    text
}

/// The `N` of "from N chunks" in a summary on standard error.
fn chunks_in(stderr: &str) -> Option<usize> {
    let (_, after) = stderr.split_once(" from ")?;
    after.split_whitespace().next()?.parse().ok()
}

/// The command with no backend flag and no server in the environment: the embedded engine is the
/// default, on the default model (whose path is given in `LLM_EXTRACT_MODEL`, as the cache directory
/// is `cache`).
fn default_backend(cache: &std::path::Path) -> assert_cmd::Command {
    let model = llm_extract::llm::llama_cpp::model_path_from_env()
        .unwrap_or_else(|e| panic!("the default model: {e}"));
    let mut command = cargo_bin_cmd!("llm-extract");
    command
        .env_remove("OLLAMA_HOST")
        .env("LLM_EXTRACT_MODEL", model)
        .env("XDG_CACHE_HOME", cache);
    command
}

#[test]
fn doc_sizes_chunks_for_the_embedded_engine_when_it_is_the_default() {
    let cache = tempfile::tempdir().unwrap();
    // Several chunks of 1,024 tokens (as with --embedded), about half as many of a server's 2,000.
    let text = token_dense_text(7_000);
    let doc = |extra: &[&str]| {
        let output = default_backend(cache.path())
            .args(["doc", "--signature", "{name :string}", "--no-resume"])
            .args(["--max-tokens", "8", "--max-attempts", "1"])
            .args(extra)
            .write_stdin(text.clone())
            .output()
            .unwrap();
        let stderr = stderr_of(&output);
        chunks_in(&stderr).unwrap_or_else(|| panic!("no summary: {stderr}"))
    };
    let by_default = doc(&[]);
    assert!(by_default >= 3, "{by_default} chunks");
    assert_eq!(by_default, doc(&["--embedded"]), "as with --embedded");
}

#[test]
fn run_jsonl_chunks_a_long_text_when_the_embedded_engine_is_the_default() {
    let cache = tempfile::tempdir().unwrap();
    // Longer than two chunks of the embedded engine: read chunk by chunk.
    let output = default_backend(cache.path())
        .args(["run", "--signature", "{name :string}", "--jsonl"])
        .args(["--max-tokens", "8", "--max-attempts", "1"])
        .write_stdin(token_dense_text(6_500))
        .output()
        .unwrap();
    let stderr = stderr_of(&output);
    let chunks = chunks_in(&stderr).unwrap_or_else(|| panic!("not chunked: {stderr}"));
    assert!(chunks >= 2, "{stderr}");
}

//! `--strategy per-field` through the command line: one question per field to an OpenAI-compatible
//! server, each answer a copy from the text, read as the field's type.

mod common;
#[path = "../../tests/support/mod.rs"]
mod support;

use assert_cmd::cargo::cargo_bin_cmd;
use common::{json_lines, stderr_of};
use serde_json::json;
use support::providers::openai_tokens;
use support::TestServer;

#[test]
fn run_asks_one_question_per_field_and_reads_the_copies() {
    let server = TestServer::start(|request| {
        let question = request.json["messages"]
            .as_array()
            .and_then(|messages| messages.last())
            .and_then(|message| message["content"].as_str())
            .and_then(|content| content.rsplit("Question: ").next())
            .unwrap_or_default()
            .to_string();
        let answer = if question.contains(" name") {
            r#"{"answer": "Ada Lovelace"}"#
        } else if question.contains(" born") {
            r#"{"answer": "10 December 1815"}"#
        } else {
            r#"{"answer": "36 years"}"#
        };
        openai_tokens(&[(answer, -0.01)])
    });
    let output = cargo_bin_cmd!("llm-extract")
        .args([
            "run",
            "--signature",
            "{name :string, born :string, age :int}",
            "--strategy",
            "per-field",
            "--openai",
            &server.url(),
            "--model",
            "m",
        ])
        .write_stdin("Ada Lovelace, born 10 December 1815, died at 36 years.")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    assert_eq!(
        json_lines(&output.stdout),
        [json!({"name": "Ada Lovelace", "born": "10 December 1815", "age": 36})]
    );
    // Three questions, one per field.
    assert_eq!(server.requests().len(), 3);
}

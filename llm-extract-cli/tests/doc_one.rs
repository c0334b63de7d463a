//! `llm-extract doc --one`: one value from a long PDF, run for real against the local test server,
//! whose stand-in model gives the date and parties it sees in the chunk it was sent.

mod common;
#[path = "../../tests/support/pdf_writer.rs"]
mod pdf_writer;
#[path = "../../tests/support/mod.rs"]
mod support;

use assert_cmd::cargo::cargo_bin_cmd;
use common::json_lines;
use serde_json::json;
use support::{Answer, Reply, TestServer};

const SCHEMA: &str = r#"{
  "type": "object",
  "properties": {
    "effective_date": {"type": ["string", "null"]},
    "parties": {"type": "array", "items": {"type": "string"}}
  },
  "required": ["effective_date", "parties"],
  "additionalProperties": false
}"#;

#[test]
fn doc_one_prints_one_value_with_the_page_and_source_of_each_field() {
    let server = TestServer::start(|request| {
        let chunk = request
            .messages()
            .into_iter()
            .find(|(role, _)| role == "user")
            .map(|(_, content)| content)
            .unwrap_or_default();
        let mut items = Vec::new();
        for date in ["1 March 2026", "2 April 2026"] {
            if chunk.contains(date) {
                items.push(json!({"effective_date": date, "parties": []}));
            }
        }
        let parties: Vec<&str> = ["Acme Widgets Ltd", "Borealis Shipping GmbH"]
            .into_iter()
            .filter(|party| chunk.contains(party))
            .collect();
        if !parties.is_empty() {
            items.push(json!({"effective_date": null, "parties": parties}));
        }
        Reply::ollama(request, &Answer::new(json!({ "items": items }).to_string()))
    });
    let filler = "Each party shall perform its obligations in good faith and with due care.";
    let clauses = [
        "This Agreement is effective as of 1 March 2026.",
        "Clause 2. Definitions apply throughout.",
        "This Agreement is made between Acme Widgets Ltd and Borealis Shipping GmbH.",
        "Schedule B is effective as of 2 April 2026.",
    ];
    let pages: Vec<Vec<&str>> = clauses
        .iter()
        .map(|clause| {
            let mut lines = vec![*clause];
            lines.extend(std::iter::repeat_n(filler, 6));
            lines
        })
        .collect();
    let pages: Vec<&[&str]> = pages.iter().map(Vec::as_slice).collect();
    let dir = tempfile::tempdir().unwrap();
    let pdf = dir.path().join("agreement.pdf");
    std::fs::write(&pdf, pdf_writer::write_pdf(&pages, false)).unwrap();
    let schema = dir.path().join("agreement.schema.json");
    std::fs::write(&schema, SCHEMA).unwrap();
    let output = cargo_bin_cmd!("llm-extract")
        .env("XDG_CACHE_HOME", dir.path())
        .arg("doc")
        .arg("--schema")
        .arg(&schema)
        .args(["--grounded", "effective_date", "--grounded", "parties"])
        .args(["--one", "--chunk-tokens", "180", "--ollama", &server.url()])
        .arg(&pdf)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let lines = json_lines(&output.stdout);
    assert_eq!(lines.len(), 1, "one record: {lines:?}");
    let record = &lines[0];
    assert_eq!(
        record["value"],
        json!({"effective_date": "1 March 2026", "parties": ["Acme Widgets Ltd", "Borealis Shipping GmbH"]})
    );
    let pages_of: Vec<u64> = record["pages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|at| at["page"].as_u64().unwrap())
        .collect();
    assert_eq!(pages_of, [1, 3, 3]);
    let date = &record["sources"]["/effective_date"];
    let parties = &record["sources"]["/parties"];
    assert!(
        date["chunk"].as_u64() < parties["chunk"].as_u64(),
        "{record}"
    );
    assert_eq!(date["grounding"], 1.0);
    assert!(
        stderr.contains(r#"at /effective_date: kept "1 March 2026" over "2 April 2026""#),
        "{stderr}"
    );
    assert!(stderr.contains("one value from"), "{stderr}");
    assert!(server.hits() >= 3, "{} requests", server.hits());
}

#[test]
fn doc_one_and_the_review_page_are_refused_together() {
    let output = cargo_bin_cmd!("llm-extract")
        .args([
            "doc",
            "--signature",
            "{name :string}",
            "--one",
            "--html",
            "x.html",
        ])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("--one") && stderr.contains("--html"),
        "{stderr}"
    );
}

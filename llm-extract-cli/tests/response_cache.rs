//! `--cache DIR` for `batch` and `eval` against a local OpenAI-compatible server: a second run with
//! the same cache asks the server nothing for the documents whose answers passed (its records say
//! `cached`, the summary counts them), still asks for the one whose answer failed, and no key ends up
//! in the cache's files.

mod common;
#[path = "../../tests/support/mod.rs"]
mod support;

use assert_cmd::cargo::cargo_bin_cmd;
use common::{json_lines, stderr_of};
use serde_json::json;
use std::path::Path;
use support::{Answer, Reply, Request, TestServer};

const KEY_VAR: &str = "LLM_EXTRACT_TEST_CACHE_KEY";
const KEY: &str = "sk-cli-cache-0123456789-SECRET";

/// The stand-in model: the number a document states, or prose for the unreadable one.
fn server() -> TestServer {
    TestServer::start(|request: &Request| {
        let text = request.last_message();
        let digits: String = text.chars().filter(char::is_ascii_digit).collect();
        let answer = match digits.parse::<u64>() {
            Ok(n) => json!({"n": n}).to_string(),
            Err(_) => "I cannot read this.".to_owned(),
        };
        Reply::openai(request, &Answer::new(answer).usage(40, 6))
    })
}

/// Runs `llm-extract` with `args` and the key in its variable; the output.
fn run(args: &[&str], server: &TestServer) -> std::process::Output {
    cargo_bin_cmd!("llm-extract")
        .args(args)
        .args([
            "--openai",
            &server.url(),
            "--model",
            "m",
            "--api-key-env",
            KEY_VAR,
        ])
        .args(["--max-attempts", "1", "--retries", "0"])
        .env(KEY_VAR, KEY)
        .output()
        .unwrap()
}

/// Every file under `dir` holds no part of the key.
fn no_key_in(dir: &Path) {
    let mut pending = vec![dir.to_path_buf()];
    while let Some(path) = pending.pop() {
        if path.is_dir() {
            pending.extend(std::fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
        } else {
            let text = String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned();
            assert!(
                !text.contains("SECRET") && !text.contains("sk-cli"),
                "{}",
                path.display()
            );
        }
    }
}

#[test]
fn a_second_batch_is_answered_from_the_cache() {
    let server = server();
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("docs.jsonl");
    let mut lines = String::new();
    for i in 0..5 {
        lines.push_str(
            &json!({"id": format!("d{i}"), "text": format!("The number is {}.", 10 + i)})
                .to_string(),
        );
        lines.push('\n');
    }
    lines.push_str(&json!({"id": "x", "text": "Illegible."}).to_string());
    lines.push('\n');
    std::fs::write(&input, lines).unwrap();
    let cache = dir.path().join("cache");
    let batch = |out: &str| {
        let out = dir.path().join(out);
        let args = [
            "batch",
            "--signature",
            "{n :int}",
            "--input",
            input.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--cache",
            cache.to_str().unwrap(),
        ];
        let output = run(&args, &server);
        assert_eq!(
            output.status.code(),
            Some(1),
            "one document fails: {}",
            stderr_of(&output)
        );
        let records = json_lines(&std::fs::read(&out).unwrap());
        (records, stderr_of(&output))
    };
    let (first, _) = batch("first.jsonl");
    assert_eq!(server.hits(), 6);
    assert!(first.iter().all(|r| r.get("cached").is_none()));
    let (second, stderr) = batch("second.jsonl");
    assert_eq!(
        server.hits(),
        6 + 1,
        "only the document that failed was asked again"
    );
    assert!(
        stderr.contains("5 answered from the response cache"),
        "{stderr}"
    );
    for record in &second {
        let ok = record["ok"].as_bool().unwrap();
        assert_eq!(record.get("cached").is_some(), ok, "{record}");
        if ok {
            assert_eq!(record["tokens"], 0);
            let before = first.iter().find(|r| r["id"] == record["id"]).unwrap();
            assert_eq!(before["value"], record["value"]);
        }
    }
    no_key_in(&cache);
}

#[test]
fn a_second_eval_asks_the_server_nothing() {
    let server = server();
    let dir = tempfile::tempdir().unwrap();
    let gold = dir.path().join("gold.jsonl");
    let lines: String = (0..4)
        .map(|i| {
            json!({"id": format!("c{i}"), "text": format!("The number is {i}."), "value": {"n": i}})
                .to_string()
                + "\n"
        })
        .collect();
    std::fs::write(&gold, lines).unwrap();
    let cache = dir.path().join("cache");
    let eval = || {
        let args = [
            "eval",
            "--signature",
            "{n :int}",
            "--gold",
            gold.to_str().unwrap(),
            "--cache",
            cache.to_str().unwrap(),
        ];
        let output = run(&args, &server);
        assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    let first = eval();
    assert_eq!(server.hits(), 4);
    let second = eval();
    assert_eq!(server.hits(), 4, "the rerun was answered from the cache");
    let scores = |table: &str| {
        table
            .lines()
            .filter(|l| l.contains('%'))
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    assert!(!scores(&first).is_empty(), "{first}");
    assert_eq!(scores(&first), scores(&second));
    no_key_in(&cache);
}

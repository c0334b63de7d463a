//! `--fallback` and `--dump-exchanges`: backends asked in the order written, the next one when the
//! one before fails transiently or is rate-limited, each batch record naming the backend that
//! answered; every exchange dumped, with no key (the header's, the URL's password, a query key) in any
//! byte of the dump.

mod common;
#[path = "../../tests/support/mod.rs"]
mod support;

use assert_cmd::cargo::cargo_bin_cmd;
use common::stderr_of;
use serde_json::Value;
use support::{Answer, Reply, TestServer};

const PERSON: &str = "{name :string, age :int}";
const KEY: &str = "sk-cli-fallback-KEY-0123456789";
const PASSWORD: &str = "pw-cli-fallback-PASSWORD";
const QUERY_KEY: &str = "q-cli-fallback-QUERY";

fn records(path: &std::path::Path) -> Vec<Value> {
    common::json_lines(&std::fs::read(path).unwrap())
}

#[test]
fn a_failing_first_backend_falls_back_and_each_record_names_who_answered() {
    // The first backend written fails transiently, echoing the request's headers; the second is
    // rate-limited for ten minutes; the third answers.
    let failing = TestServer::start(|request| {
        Reply::openai_error(503, &format!("overloaded {:?}", request.headers))
    });
    let limited = TestServer::start(|_| {
        Reply::openai_error(429, "rate limit reached").with_header("retry-after", "600")
    });
    let answering = TestServer::start(|request| {
        Reply::openai(request, &Answer::new(r#"{"name": "Ada", "age": 36}"#))
    });
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.jsonl");
    std::fs::write(
        &input,
        "\"Ada, 36\"\n\"Ada, 36 again\"\n\"Ada once more, 36\"\n",
    )
    .unwrap();
    let out = dir.path().join("out.jsonl");
    let dump = dir.path().join("dump");
    let with_password = |server: &TestServer| {
        let address = server.url().replace("http://", "");
        format!("http://user:{PASSWORD}@{address}/v1?api_key={QUERY_KEY}")
    };
    let output = cargo_bin_cmd!("llm-extract")
        .args([
            "batch",
            "--signature",
            PERSON,
            "--model",
            "m",
            "--retries",
            "0",
        ])
        .args(["--concurrency", "1", "--fallback"])
        .arg("--openai")
        .arg(with_password(&failing))
        .args(["--api-key-env", "FALLBACK_TEST_KEY"])
        .arg("--openai")
        .arg(with_password(&limited))
        .args(["--api-key-env", "FALLBACK_TEST_KEY"])
        .arg("--openai")
        .arg(format!("{}/v1", answering.url()))
        .arg("--input")
        .arg(&input)
        .arg("--out")
        .arg(&out)
        .arg("--dump-exchanges")
        .arg(&dump)
        .env("FALLBACK_TEST_KEY", KEY)
        .env_remove("OPENAI_API_KEY")
        .env_remove("OLLAMA_HOST")
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr_of(&output));
    let lines = records(&out);
    assert_eq!(lines.len(), 3, "{lines:?}");
    for line in &lines {
        assert_eq!(line["ok"], true, "{line}");
        assert_eq!(line["backend"]["provider"], "openai", "{line}");
        assert_eq!(line["backend"]["model"], "m", "{line}");
        let url = line["backend"]["url"].as_str().unwrap();
        assert!(url.starts_with(&answering.url()), "{url}");
    }
    // The failing one is asked each time; the rate-limited one once, then passed over while its
    // Retry-After runs, not waited out.
    assert_eq!(failing.hits(), 3);
    assert_eq!(limited.hits(), 1);
    assert_eq!(answering.hits(), 3);

    // One file per exchange, and no secret in any byte of them.
    let mut files: Vec<_> = std::fs::read_dir(&dump)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    files.sort();
    assert_eq!(files.len(), 7, "{files:?}");
    let mut statuses = Vec::new();
    for file in &files {
        let bytes = std::fs::read(file).unwrap();
        let text = String::from_utf8_lossy(&bytes);
        for secret in [KEY, PASSWORD, QUERY_KEY, "0123456789"] {
            assert!(
                !text.contains(secret),
                "{secret} in {}: {text}",
                file.display()
            );
        }
        let exchange: Value = serde_json::from_slice(&bytes).unwrap();
        statuses.push(exchange["status"].as_u64().unwrap());
        assert!(exchange["request"]["messages"].is_array(), "{exchange}");
    }
    statuses.sort_unstable();
    assert_eq!(statuses, vec![200, 200, 200, 429, 503, 503, 503]);
    // The failing server echoed the key's header: the dump shows it redacted.
    let echoed = files
        .iter()
        .map(|f| std::fs::read_to_string(f).unwrap())
        .find(|text| text.contains("overloaded"))
        .unwrap();
    assert!(echoed.contains("[redacted]"), "{echoed}");
}

#[test]
fn run_takes_several_backends_with_fallback_only() {
    let answering = TestServer::start(|request| {
        Reply::openai(request, &Answer::new(r#"{"name": "Ada", "age": 36}"#))
    });
    let failing = TestServer::start(|_| Reply::openai_error(500, "down"));
    let run = |fallback: bool| {
        let mut command = cargo_bin_cmd!("llm-extract");
        command
            .args([
                "run",
                "--signature",
                PERSON,
                "--model",
                "m",
                "--retries",
                "0",
            ])
            .arg("--openai")
            .arg(format!("{}/v1", failing.url()))
            .arg("--openai")
            .arg(format!("{}/v1", answering.url()))
            .env_remove("OLLAMA_HOST")
            .write_stdin("Ada, 36");
        if fallback {
            command.arg("--fallback");
        }
        command.output().unwrap()
    };
    let refused = run(false);
    assert_eq!(refused.status.code(), Some(2), "{}", stderr_of(&refused));
    assert!(stderr_of(&refused).contains("--fallback"));
    let answered = run(true);
    assert!(answered.status.success(), "{}", stderr_of(&answered));
    let value: Value = serde_json::from_slice(&answered.stdout).unwrap();
    assert_eq!(value["age"], 36);
}

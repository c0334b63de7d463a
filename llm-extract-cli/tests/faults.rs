//! `llm-extract batch` against a server that misbehaves on a fixed pattern: 503s, 429s with a
//! `Retry-After` in seconds or as an HTTP date, a stall, a body that is not the stream asked for (HTML,
//! an error object with status 200), connections closed without an answer or in the middle of one, and
//! answers that end before they are finished. Every document must come out right, once; and a batch
//! killed midway and run again must lose nothing and write nothing twice.

#[path = "../../tests/support/mod.rs"]
mod support;

use assert_cmd::cargo::cargo_bin_cmd;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime};
use support::clock::http_date;
use support::{Answer, Ending, Reply, Request, TestServer};
use tempfile::TempDir;

/// How many kinds of fault the server has.
const FAULTS: usize = 9;

/// The number a document holds (`The number is 17.`), which the server answers with.
fn number_in(request: &Request) -> Option<u64> {
    let text = request.last_message();
    let at = text.find("number is ")? + "number is ".len();
    let digits: String = text[at..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

/// Fault `kind` in answer to `request`, whose good answer is `text`.
fn fault(kind: usize, request: &Request, text: &str) -> Reply {
    let half = &text[..text.len() / 2];
    match kind {
        0 => Reply::text(503, "the model is loading"),
        1 => Reply::openai_error(429, "rate limited").with_header("retry-after", "1"),
        2 => Reply::openai_error(429, "rate limited").with_header(
            "retry-after",
            &http_date(SystemTime::now() + Duration::from_secs(1)),
        ),
        3 => Reply::openai(request, &Answer::new(half).ending(Ending::Stall)),
        4 => Reply::text(200, "<html><body>upstream error</body></html>"),
        5 => Reply::json(
            200,
            json!({"error": {"message": "the server is overloaded"}}),
        ),
        6 => Reply::openai(
            request,
            &Answer::new(half).pieces_of(3).ending(Ending::Drop),
        ),
        7 => Reply::openai(request, &Answer::new(half).ending(Ending::Nothing)),
        _ => Reply::Hangup,
    }
}

/// An OpenAI-compatible server answering `{"n": <the document's number>}`, after `delay` per piece.
/// Document `i` meets `i % 3` faults (none, one, or two in a row: within the default three retries),
/// of kinds that rotate with `i`, so that every kind is met many times, by documents in flight
/// together.
fn faulty_server(delay: Duration) -> TestServer {
    let seen: Mutex<HashMap<u64, usize>> = Mutex::new(HashMap::new());
    TestServer::start(move |request| {
        let Some(number) = number_in(request) else {
            return Reply::text(400, "no document number in the request");
        };
        let text = format!("{{\"n\": {number}}}");
        let tries = {
            let mut seen = seen.lock().unwrap();
            let count = seen.entry(number).or_insert(0);
            *count += 1;
            *count - 1
        };
        let faults = (number % 3) as usize;
        if tries < faults {
            return fault((number as usize + tries) % FAULTS, request, &text);
        }
        Reply::openai(request, &Answer::new(text).pieces_of(4).delay(delay))
    })
}

/// A folder holding `count` documents (`The number is 17.`) in `docs.jsonl`, and the paths of that
/// input and of the results file to write beside it.
fn documents(count: u64) -> (TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let (input, out) = (dir.path().join("docs.jsonl"), dir.path().join("out.jsonl"));
    let lines: Vec<String> = (0..count)
        .map(|i| {
            json!({"id": format!("doc-{i:03}"), "text": format!("The number is {i}.")}).to_string()
        })
        .collect();
    std::fs::write(&input, lines.join("\n")).unwrap();
    (dir, input, out)
}

fn batch_args(input: &Path, out: &Path, server: &TestServer) -> Vec<String> {
    [
        "batch",
        "--signature",
        "{n :int}",
        "--input",
        &input.display().to_string(),
        "--out",
        &out.display().to_string(),
        "--openai",
        &server.url(),
        "--model",
        "m",
        "--concurrency",
        "6",
        "--idle-timeout",
        "0.4",
        "--max-attempts",
        "1",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// Runs `llm-extract` with `args`, which must succeed; its stderr.
fn succeeds(args: &[String]) -> String {
    let output = cargo_bin_cmd!("llm-extract").args(args).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    stderr
}

/// The complete records of a results file.
fn records(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// Every document is in `out` exactly once, with its own number, and nothing else is.
fn assert_each_document_once_and_right(out: &Path, count: u64) {
    let text = std::fs::read_to_string(out).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let mut by_id: HashMap<String, Value> = HashMap::new();
    for line in &lines {
        let record: Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("not a record: {line:?}: {e}"));
        let id = record["id"].as_str().unwrap().to_owned();
        assert!(
            by_id.insert(id.clone(), record).is_none(),
            "{id} is in the output twice"
        );
    }
    assert_eq!(lines.len() as u64, count, "one record per document");
    for i in 0..count {
        let id = format!("doc-{i:03}");
        let record = by_id.get(&id).unwrap_or_else(|| panic!("{id} is missing"));
        assert_eq!(record["ok"], true, "{record}");
        assert_eq!(record["value"], json!({"n": i}), "{record}");
    }
}

#[test]
fn a_batch_survives_every_kind_of_fault() {
    let count = 72;
    let (_dir, input, out) = documents(count);
    let server = faulty_server(Duration::ZERO);
    succeeds(&batch_args(&input, &out, &server));
    assert_each_document_once_and_right(&out, count);
    // The work, counted in requests: documents 1, 2, 4, 5, ... met faults: 24 met none, 24 one, 24
    // two, and each fault cost exactly one more request.
    assert_eq!(server.hits() as u64, count + 24 + 48);
    // The broken answers are in the ledger: a document whose answer broke counts two attempts.
    let broken_once = records(&out)
        .iter()
        .filter(|r| r["attempts"].as_u64() > Some(1))
        .count();
    assert!(broken_once > 0, "no broken answer was recorded");
}

#[test]
fn a_batch_killed_midway_and_run_again_has_every_document_once() {
    let count = 60;
    let (_dir, input, out) = documents(count);
    // Slow answers (about 150 ms each), so the batch is still running when it is killed.
    let server = faulty_server(Duration::from_millis(50));
    let mut child = Command::new(assert_cmd::cargo::cargo_bin!("llm-extract"))
        .args(batch_args(&input, &out, &server))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // A hang guard (no claim of speed): a batch that writes nothing for this long is broken.
    let deadline = Instant::now() + Duration::from_secs(120);
    while records(&out).len() < 12 {
        assert!(Instant::now() < deadline, "the batch wrote too little");
        assert!(
            child.try_wait().unwrap().is_none(),
            "the batch ended before it was killed"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let before = records(&out).len() as u64;
    assert!(before < count, "the batch finished before it was killed");

    let stderr = succeeds(&batch_args(&input, &out, &server));
    assert!(stderr.contains("skipped (already done)"), "{stderr}");
    assert_each_document_once_and_right(&out, count);
}

#[test]
fn retrying_failed_documents_leaves_each_document_once() {
    let count = 12;
    let (_dir, input, out) = documents(count);
    let server = faulty_server(Duration::ZERO);
    // No retries: the documents that meet a fault fail, and are recorded as failed.
    let mut args = batch_args(&input, &out, &server);
    args.extend(["--retries".to_owned(), "0".to_owned()]);
    let first = cargo_bin_cmd!("llm-extract").args(&args).output().unwrap();
    assert_eq!(first.status.code(), Some(1));
    let failed = records(&out).iter().filter(|r| r["ok"] == false).count();
    assert_eq!(failed, 8, "documents 1, 2, 4, 5, 7, 8, 10, 11 met a fault");
    // Again with --retry-failed (and retries): the failed records are replaced, not added to.
    let mut again = batch_args(&input, &out, &server);
    again.push("--retry-failed".to_owned());
    succeeds(&again);
    assert_each_document_once_and_right(&out, count);
}

#[test]
fn a_text_prompt_whose_stream_breaks_says_that_the_text_starts_over() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("prompts.json");
    std::fs::write(
        &config,
        json!({"summarize": {"prompt": "Summarize: {{text}}", "response-type": "text"}})
            .to_string(),
    )
    .unwrap();
    let answer = "A short summary.";
    let served = Mutex::new(0);
    let server = TestServer::start(move |request| {
        let mut served = served.lock().unwrap();
        *served += 1;
        let reply = Answer::new(answer).pieces_of(4);
        match *served {
            1 => Reply::openai(request, &reply.ending(Ending::Drop)),
            _ => Reply::openai(request, &reply),
        }
    });
    let output = cargo_bin_cmd!("llm-extract")
        .args(["prompt", "--config"])
        .arg(&config)
        .args([
            "--id",
            "summarize",
            "--openai",
            &server.url(),
            "--model",
            "m",
        ])
        .arg("text=A long article.")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("the answer starts over"), "{stderr}");
    // What was printed before the break stays; the whole answer follows on a line of its own.
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(stdout.lines().last(), Some(answer), "{stdout}");
    assert_eq!(server.hits(), 2);
}

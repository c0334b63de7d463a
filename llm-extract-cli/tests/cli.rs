//! The `llm-extract` binary, run for real against the local test server (Ollama and OpenAI wire formats).

mod common;
#[path = "../../tests/support/mod.rs"]
mod support;

use assert_cmd::cargo::cargo_bin_cmd;
use common::{json_lines, stderr_of};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use support::providers::{openai_tokens, ADA_TOKENS};
use support::{wire, Answer, Reply, Request, Step, TestServer};

const PERSON: &str = "{name :string, age :int}";

/// `llm-extract run` asking model `m` for a [`PERSON`], for a test to add its backend and input to.
fn run_person() -> assert_cmd::Command {
    let mut command = cargo_bin_cmd!("llm-extract");
    command.args(["run", "--signature", PERSON, "--model", "m"]);
    command
}

fn ollama_answering(text: &'static str) -> TestServer {
    TestServer::start(move |request| Reply::ollama(request, &Answer::new(text)))
}

/// Every non-empty stdout line as JSON.
/// An error is one line on stderr, prefixed so scripts can grep it.
fn assert_one_line_error(stderr: &str, needle: &str) {
    let errors: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("llm-extract: error: "))
        .collect();
    assert_eq!(errors.len(), 1, "{stderr}");
    assert!(
        errors[0].contains(needle),
        "expected {needle:?} in {stderr}"
    );
}

/// A 127.0.0.1 port nothing listens on.
fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    port
}

#[test]
fn run_prints_the_validated_value() {
    let server = ollama_answering(r#"Here it is: {"name": "Ada", "age": "36"}"#);
    let output = cargo_bin_cmd!("llm-extract")
        .args([
            "run",
            "--signature",
            PERSON,
            "--ollama",
            &server.url(),
            "--model",
            "m",
        ])
        .write_stdin("Ada Lovelace, 36.")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    assert_eq!(
        json_lines(&output.stdout),
        [json!({"name": "Ada", "age": 36})]
    );
    let request = &server.requests()[0];
    assert_eq!(request.json["model"], "m");
    assert_eq!(request.last_message(), "Ada Lovelace, 36.");
    assert_eq!(request.json["format"]["required"], json!(["name", "age"]));
}

#[test]
fn run_works_against_an_openai_compatible_server() {
    let server = TestServer::start(|request| {
        Reply::openai(request, &Answer::new(r#"{"name": "Grace", "age": 85}"#))
    });
    let output = cargo_bin_cmd!("llm-extract")
        .args([
            "run",
            "--signature",
            PERSON,
            "--openai",
            &server.url(),
            "--model",
            "served",
        ])
        .write_stdin("Grace Hopper")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    assert_eq!(
        json_lines(&output.stdout),
        [json!({"name": "Grace", "age": 85})]
    );
    assert_eq!(server.requests()[0].path, "/v1/chat/completions");
}

#[test]
fn run_samples_votes_on_the_items_of_answers_seeded_apart() {
    // The greedy answer (seed 0) gets an age wrong and adds a person, seed 2 adds another: the vote
    // keeps what two answers of three say.
    let server = TestServer::start(|request| {
        let answer = match request.json["seed"].as_u64() {
            Some(1) => r#"{"items": [{"name": "Ada", "age": 36}]}"#,
            Some(2) => r#"{"items": [{"name": "Ada", "age": 36}, {"name": "Cy", "age": 5}]}"#,
            _ => r#"{"items": [{"name": "Ada", "age": 63}, {"name": "Bo", "age": 2}]}"#,
        };
        Reply::openai(request, &Answer::new(answer))
    });
    let output = cargo_bin_cmd!("llm-extract")
        .args(["run", "--jsonl", "--samples", "3", "--signature", PERSON])
        .args(["--openai", &server.url(), "--model", "served"])
        .write_stdin("Ada Lovelace, 36.")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    assert_eq!(
        json_lines(&output.stdout),
        [json!({"name": "Ada", "age": 36})]
    );
    let mut seeds: Vec<_> = server
        .requests()
        .iter()
        .map(|r| r.json["seed"].clone())
        .collect();
    seeds.sort_by_key(|seed| seed.as_u64());
    assert_eq!(seeds, [json!(0), json!(1), json!(2)]);
}

/// Three JSON lines of equal length, streamed one line per piece with `delay` before each.
#[test]
fn run_partial_prints_each_snapshot_then_the_value() {
    let server = TestServer::start(|request| {
        Reply::ollama(
            request,
            &Answer::new(r#"{"name": "Ada Lovelace", "age": "36"}"#)
                .pieces_of(4)
                .delay(Duration::from_millis(50)),
        )
    });
    let output = cargo_bin_cmd!("llm-extract")
        .args(["run", "--partial", "--signature", PERSON])
        .args(["--ollama", &server.url(), "--model", "m"])
        .write_stdin("Ada Lovelace, 36.")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    let lines = json_lines(&output.stdout);
    // The name grows as it is written (how many snapshots depends on how the pieces arrive: a snapshot
    // not yet printed is replaced by a newer one); `age`, a string in the answer, is coerced in the
    // final value.
    assert!(lines.len() >= 3, "{lines:?}");
    let names: Vec<&str> = lines.iter().filter_map(|l| l["name"].as_str()).collect();
    assert!(
        names.windows(2).all(|w| w[1].starts_with(w[0])),
        "{names:?}"
    );
    assert!(
        names.iter().any(|n| n.len() < "Ada Lovelace".len()),
        "{names:?}"
    );
    assert_eq!(
        lines.last(),
        Some(&json!({"name": "Ada Lovelace", "age": 36}))
    );
}

fn three_people(delay: Duration) -> Answer {
    let text = "{\"name\": \"Ann\", \"age\": 31}\n{\"name\": \"Bob\", \"age\": 32}\n{\"name\": \"Cid\", \"age\": 33}\n";
    let line = text.find('\n').unwrap() + 1;
    Answer::new(text).pieces_of(line).delay(delay)
}

#[test]
fn run_jsonl_streams_each_item_as_it_completes_in_order() {
    // The server sends the first line, then holds the rest back until the test has read the first
    // item from the command's stdout: the item can only arrive if it was printed on its own.
    let (go, wait) = std::sync::mpsc::channel::<()>();
    let wait = std::sync::Mutex::new(Some(wait));
    let server = TestServer::start(move |_request| {
        let (steps, reply) = Reply::live(wire::NDJSON);
        let wait = wait.lock().unwrap().take().expect("one request");
        std::thread::spawn(move || {
            let line = |name: &str, age: u32| {
                wire::ollama_delta("m", &format!("{{\"name\": \"{name}\", \"age\": {age}}}\n"))
            };
            steps.send(Step::Send(line("Ann", 31))).unwrap();
            // Dropped unanswered if the test fails first: then the server sends nothing more.
            if wait.recv().is_ok() {
                steps.send(Step::Send(line("Bob", 32))).unwrap();
                steps.send(Step::Send(line("Cid", 33))).unwrap();
                steps
                    .send(Step::Send(wire::ollama_done("m", "stop", 3, 4)))
                    .unwrap();
            }
        });
        reply
    });
    let mut child = Command::new(assert_cmd::cargo::cargo_bin!("llm-extract"))
        .args([
            "run",
            "--signature",
            PERSON,
            "--jsonl",
            "--mode",
            "prompted",
        ])
        .args(["--ollama", &server.url()])
        .arg("text=three people")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    stdout.read_line(&mut first).unwrap();
    assert_eq!(
        json_lines(first.as_bytes()),
        [json!({"name": "Ann", "age": 31})]
    );
    assert!(
        child.try_wait().unwrap().is_none(),
        "the command ended before the server sent the rest"
    );
    go.send(()).unwrap();
    let mut rest = String::new();
    for _ in 0..2 {
        stdout.read_line(&mut rest).unwrap();
    }
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0));
    let lines = json_lines(format!("{first}{rest}").as_bytes());
    let names: Vec<&str> = lines.iter().map(|l| l["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["Ann", "Bob", "Cid"]);
}

#[test]
fn no_streaming_prints_everything_once_the_answer_is_complete() {
    let delay = Duration::from_millis(300);
    let server = TestServer::start(move |request| Reply::ollama(request, &three_people(delay)));
    let started = Instant::now();
    let mut child = Command::new(assert_cmd::cargo::cargo_bin!("llm-extract"))
        .args([
            "run",
            "--signature",
            PERSON,
            "--jsonl",
            "--no-streaming",
            "--mode",
            "prompted",
        ])
        .args(["--ollama", &server.url()])
        .arg("text=three people")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    stdout.read_line(&mut first).unwrap();
    // Nothing is printed before the last piece arrived, three delays after the start.
    assert!(
        started.elapsed() >= delay * 3,
        "first line after {:?}",
        started.elapsed()
    );
    let mut rest = String::new();
    stdout.read_line(&mut rest).unwrap();
    stdout.read_line(&mut rest).unwrap();
    assert_eq!(child.wait().unwrap().code(), Some(0));
    assert_eq!(json_lines(format!("{first}{rest}").as_bytes()).len(), 3);
}

#[test]
fn constrained_jsonl_sends_the_list_schema_and_prints_lines() {
    let server =
        ollama_answering(r#"{"items": [{"name": "Ann", "age": 31}, {"name": "Bob", "age": 32}]}"#);
    let output = cargo_bin_cmd!("llm-extract")
        .args([
            "run",
            "--signature",
            PERSON,
            "--jsonl",
            "--ollama",
            &server.url(),
        ])
        .write_stdin("two people")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    assert_eq!(
        json_lines(&output.stdout),
        [
            json!({"name": "Ann", "age": 31}),
            json!({"name": "Bob", "age": 32})
        ]
    );
    assert_eq!(
        server.requests()[0].json["format"]["properties"]["items"]["type"],
        "array"
    );
}

#[test]
fn a_bad_schema_file_is_a_usage_error_naming_the_problem() {
    let dir = tempfile::tempdir().unwrap();
    let not_json = dir.path().join("broken.json");
    std::fs::write(&not_json, "{\"type\": \"object\",").unwrap();
    let invalid = dir.path().join("invalid.json");
    std::fs::write(
        &invalid,
        r#"{"type": "object", "properties": {"a": {"type": "strng"}}}"#,
    )
    .unwrap();
    let remote = dir.path().join("remote.json");
    std::fs::write(
        &remote,
        r#"{"type": "object", "properties": {"a": {"$ref": "https://example.com/a.json"}}}"#,
    )
    .unwrap();
    let missing = dir.path().join("missing.json");
    let server = ollama_answering("{}");
    for (path, needle) in [
        (&not_json, "is not valid JSON"),
        (&invalid, "invalid JSON Schema at /properties/a/type"),
        (
            &remote,
            "refers to https://example.com/a.json, another document",
        ),
        (&missing, "missing.json"),
    ] {
        let output = cargo_bin_cmd!("llm-extract")
            .args(["run", "--schema"])
            .arg(path)
            .args(["--ollama", &server.url()])
            .write_stdin("text")
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2), "{}", stderr_of(&output));
        assert_one_line_error(&stderr_of(&output), needle);
        assert!(output.stdout.is_empty());
    }
    let output = cargo_bin_cmd!("llm-extract")
        .args(["run", "--signature", "{name :strng}"])
        .write_stdin("text")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert_one_line_error(&stderr_of(&output), "column 7");
    assert_eq!(server.hits(), 0);
}

#[test]
fn an_unreachable_server_exits_3_with_a_hint() {
    let url = format!("http://127.0.0.1:{}", closed_port());
    let output = cargo_bin_cmd!("llm-extract")
        .args([
            "run",
            "--signature",
            PERSON,
            "--ollama",
            &url,
            "--retries",
            "1",
        ])
        .write_stdin("Ada")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(3), "{}", stderr_of(&output));
    let stderr = stderr_of(&output);
    assert_one_line_error(&stderr, "cannot connect to");
    assert!(stderr.contains(&url), "{stderr}");
}

#[test]
fn an_answer_that_never_validates_exits_1_and_saves_the_raw_answers() {
    let server = ollama_answering("I would rather not say.");
    let raw = tempfile::tempdir().unwrap();
    let output = cargo_bin_cmd!("llm-extract")
        .args([
            "run",
            "--signature",
            PERSON,
            "--ollama",
            &server.url(),
            "--max-attempts",
            "2",
        ])
        .arg("--save-raw")
        .arg(raw.path())
        .write_stdin("Ada")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", stderr_of(&output));
    assert_one_line_error(&stderr_of(&output), "no answer was valid");
    assert_eq!(server.hits(), 2);
    let mut saved: Vec<String> = std::fs::read_dir(raw.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    saved.sort();
    assert_eq!(
        saved,
        ["run-attempt-1-first.txt", "run-attempt-2-repair.txt"]
    );
    let text = std::fs::read_to_string(raw.path().join("run-attempt-2-repair.txt")).unwrap();
    assert_eq!(text, "I would rather not say.");
}

#[test]
fn a_raw_answer_that_cannot_be_saved_is_a_warning_and_the_value_is_printed() {
    // The first answer is prose, the repair valid: the raw answer of the first is to be saved.
    let server = TestServer::script(vec![
        support::ollama(Answer::new("I would rather not say.")),
        support::ollama(Answer::new(r#"{"name": "Ada", "age": 36}"#)),
    ]);
    let dir = tempfile::tempdir().unwrap();
    // A file where the directory should be: nothing can be saved under it.
    let blocked = dir.path().join("blocked");
    std::fs::write(&blocked, "").unwrap();
    let output = cargo_bin_cmd!("llm-extract")
        .args(["run", "--signature", PERSON, "--ollama", &server.url()])
        .arg("--save-raw")
        .arg(blocked.join("raw"))
        .write_stdin("Ada, 36")
        .output()
        .unwrap();
    let stderr = stderr_of(&output);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert_eq!(
        json_lines(&output.stdout),
        [json!({"name": "Ada", "age": 36})]
    );
    assert!(
        stderr.contains("llm-extract: warning: --save-raw: cannot create"),
        "{stderr}"
    );
    assert!(!stderr.contains("llm-extract: error"), "{stderr}");
}

#[test]
fn a_batch_saves_raw_answers_under_one_name_per_id_and_survives_a_failed_save() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("docs.jsonl");
    // Two ids that a substitution of path separators would give the same file name.
    let docs = [("a/b", "FAIL alpha"), ("a_b", "FAIL beta"), ("c", "fine")];
    let lines: Vec<String> = docs
        .iter()
        .map(|(id, text)| json!({"id": id, "text": text}).to_string())
        .collect();
    std::fs::write(&input, lines.join("\n")).unwrap();
    let server = TestServer::start(|request: &Request| {
        let text = request.last_message();
        let answer = if text.contains("FAIL") {
            format!(
                "Sorry, no ({}).",
                if text.contains("alpha") { 1 } else { 2 }
            )
        } else {
            r#"{"n": 1}"#.to_owned()
        };
        Reply::ollama(request, &Answer::new(answer))
    });
    let batch = |out: &Path, raw: &Path| {
        cargo_bin_cmd!("llm-extract")
            .args(["batch", "--signature", "{n :int}", "--input"])
            .arg(&input)
            .arg("--out")
            .arg(out)
            .args(["--ollama", &server.url(), "--max-attempts", "1"])
            .arg("--save-raw")
            .arg(raw)
            .output()
            .unwrap()
    };

    let raw = dir.path().join("raw");
    let output = batch(&dir.path().join("out.jsonl"), &raw);
    assert_eq!(output.status.code(), Some(1), "{}", stderr_of(&output));
    let mut saved: Vec<(String, String)> = std::fs::read_dir(&raw)
        .unwrap()
        .map(|e| {
            let path = e.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read_to_string(&path).unwrap())
        })
        .collect();
    saved.sort();
    assert_eq!(
        saved,
        [
            (
                "a%2Fb-attempt-1-first.txt".to_owned(),
                "Sorry, no (1).".to_owned()
            ),
            (
                "a_b-attempt-1-first.txt".to_owned(),
                "Sorry, no (2).".to_owned()
            ),
        ]
    );

    // The raw answers cannot be saved: every document is still recorded, and the exit code is the
    // batch's own (one document failed), not an output error.
    let blocked = dir.path().join("blocked");
    std::fs::write(&blocked, "").unwrap();
    let out = dir.path().join("blocked.jsonl");
    let output = batch(&out, &blocked.join("raw"));
    let stderr = stderr_of(&output);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("warning: --save-raw: cannot create"),
        "{stderr}"
    );
    let mut recorded: Vec<(String, bool)> = results(&out)
        .iter()
        .map(|l| (l["id"].as_str().unwrap().to_owned(), l["ok"] == true))
        .collect();
    recorded.sort();
    assert_eq!(
        recorded,
        [
            ("a/b".to_owned(), false),
            ("a_b".to_owned(), false),
            ("c".to_owned(), true)
        ]
    );
}

#[test]
fn usage_errors_exit_2() {
    let no_input = cargo_bin_cmd!("llm-extract")
        .args([
            "run",
            "--signature",
            PERSON,
            "--ollama",
            "http://127.0.0.1:9",
        ])
        .output()
        .unwrap();
    assert_eq!(no_input.status.code(), Some(2));
    assert_one_line_error(&stderr_of(&no_input), "no input text");

    let unknown_flag = cargo_bin_cmd!("llm-extract")
        .args(["run", "--shema", "x"])
        .output()
        .unwrap();
    assert_eq!(unknown_flag.status.code(), Some(2));

    let openai_without_model = cargo_bin_cmd!("llm-extract")
        .args([
            "run",
            "--signature",
            PERSON,
            "--openai",
            "http://127.0.0.1:9/v1",
        ])
        .env_remove("OPENAI_MODEL")
        .write_stdin("x")
        .output()
        .unwrap();
    assert_eq!(openai_without_model.status.code(), Some(2));
    assert_one_line_error(&stderr_of(&openai_without_model), "--model");
}

#[test]
fn schema_shows_what_would_be_sent() {
    let output = cargo_bin_cmd!("llm-extract")
        .args([
            "schema",
            "--signature",
            "{name :string, nick :string?}",
            "--dialect",
            "openai",
        ])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    let schema: Value = serde_json::from_slice(&output.stdout).unwrap();
    // OpenAI's strict mode wants every property required, optional ones nullable.
    assert_eq!(schema["required"], json!(["name", "nick"]));
    let instructions = cargo_bin_cmd!("llm-extract")
        .args(["schema", "--signature", PERSON, "--instructions", "--jsonl"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&instructions.stdout);
    assert!(
        text.contains("\n{\"name\":string,\"age\":integer}\n"),
        "{text}"
    );
}

#[test]
fn the_gbnf_dialect_is_also_spelled_ollama() {
    let shown = |dialect: &str| {
        let output = cargo_bin_cmd!("llm-extract")
            .args(["schema", "--signature", PERSON, "--dialect", dialect])
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(0), "--dialect {dialect}");
        serde_json::from_slice::<Value>(&output.stdout).unwrap()
    };
    let gbnf = shown("gbnf");
    assert_eq!(gbnf["properties"]["age"]["type"], "integer");
    assert_eq!(shown("ollama"), gbnf);
}

#[test]
fn a_schema_file_keeps_its_authors_meaning() {
    let dir = tempfile::tempdir().unwrap();
    let tree = dir.path().join("tree.json");
    std::fs::write(
        &tree,
        r##"{"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
            "properties": {"name": {"type": "string"}, "meta": {"type": "object"},
                           "children": {"type": "array", "items": {"$ref": "#"}}}}"##,
    )
    .unwrap();
    let output = cargo_bin_cmd!("llm-extract")
        .args(["schema", "--schema"])
        .arg(&tree)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    let generic: Value = serde_json::from_slice(&output.stdout).unwrap();
    // Recursion stays a reference; an object without properties stays open.
    assert_eq!(generic["$ref"], "#/$defs/Root");
    let root = &generic["$defs"]["Root"];
    assert_eq!(
        root["properties"]["children"]["items"],
        json!({"$ref": "#/$defs/Root"})
    );
    assert_eq!(root["properties"]["meta"], json!({"type": "object"}));

    // A draft 4 schema: its boolean exclusive bound holds, and keys it does not list are accepted.
    let person = dir.path().join("person.json");
    std::fs::write(
        &person,
        r##"{"$schema": "http://json-schema.org/draft-04/schema#", "type": "object",
            "properties": {"name": {"type": "string"},
                           "age": {"type": "integer", "maximum": 150, "exclusiveMaximum": true}},
            "required": ["name"]}"##,
    )
    .unwrap();
    let server = ollama_answering(r#"{"name": "Ann", "age": 31, "note": "met in 1999"}"#);
    let output = cargo_bin_cmd!("llm-extract")
        .args(["run", "--schema"])
        .arg(&person)
        .args(["--ollama", &server.url(), "--model", "m"])
        .write_stdin("Ann, 31")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    assert_eq!(
        json_lines(&output.stdout),
        [json!({"name": "Ann", "age": 31, "note": "met in 1999"})]
    );
    let sent = &server.requests()[0].json["format"];
    assert_eq!(sent["properties"]["age"]["exclusiveMaximum"], json!(150));
}

fn write_prompts(dir: &Path) -> std::path::PathBuf {
    let path = dir.join("prompts.json");
    std::fs::write(
        &path,
        json!({
            "summarize": {"prompt": "Summarize in {{language}}: {{text}}", "response-type": "text"},
            "person": {"prompt": "Who is in: {{text}}", "response-type": "json", "schema": PERSON},
            "extract-definitions": {
                "prompt": "Definitions in: {{text}}",
                "response-type": "jsonl",
                "object-schema": {"type": "object", "properties": {"term": {"type": "string"}}, "required": ["term"]}
            }
        })
        .to_string(),
    )
    .unwrap();
    path
}

#[test]
fn prompt_runs_text_json_and_jsonl_prompts() {
    let dir = tempfile::tempdir().unwrap();
    let config = write_prompts(dir.path());
    let text_file = dir.path().join("input.txt");
    std::fs::write(&text_file, "A long article.").unwrap();
    let server = TestServer::start(|request: &Request| {
        let asked = request.last_message();
        let answer = if asked.starts_with("Summarize") {
            "Un court résumé."
        } else if asked.starts_with("Who") {
            r#"{"name": "Ada", "age": 36}"#
        } else {
            ""
        };
        Reply::ollama(request, &Answer::new(answer))
    });
    let prompt = |id: &str, extra: &[&str]| {
        cargo_bin_cmd!("llm-extract")
            .args(["prompt", "--config"])
            .arg(&config)
            .args(["--id", id, "--ollama", &server.url(), "--mode", "prompted"])
            .arg(format!("text=@{}", text_file.display()))
            .args(extra)
            .output()
            .unwrap()
    };

    let text = prompt("summarize", &["language=French"]);
    assert_eq!(text.status.code(), Some(0), "{}", stderr_of(&text));
    assert_eq!(String::from_utf8_lossy(&text.stdout), "Un court résumé.\n");
    assert_eq!(
        server.requests()[0].last_message(),
        "Summarize in French: A long article."
    );

    let value = prompt("person", &[]);
    assert_eq!(value.status.code(), Some(0), "{}", stderr_of(&value));
    assert_eq!(
        json_lines(&value.stdout),
        [json!({"name": "Ada", "age": 36})]
    );

    let empty = prompt("extract-definitions", &["--max-attempts", "1"]);
    assert_eq!(empty.status.code(), Some(0), "{}", stderr_of(&empty));
    assert!(empty.stdout.is_empty());
    assert!(
        stderr_of(&empty).contains("warning: the answer held no valid item"),
        "{}",
        stderr_of(&empty)
    );
}

#[test]
fn prompt_with_a_missing_variable_sends_nothing_and_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let config = write_prompts(dir.path());
    let server = ollama_answering("unused");
    let output = cargo_bin_cmd!("llm-extract")
        .args(["prompt", "--config"])
        .arg(&config)
        .args(["--id", "summarize", "--ollama", &server.url(), "text=hello"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert_one_line_error(&stderr_of(&output), "`language`");
    assert_eq!(server.hits(), 0);

    let unknown = cargo_bin_cmd!("llm-extract")
        .args(["prompt", "--config"])
        .arg(&config)
        .args(["--id", "nope"])
        .output()
        .unwrap();
    assert_eq!(unknown.status.code(), Some(2));
    assert_one_line_error(
        &stderr_of(&unknown),
        "summarize, person, extract-definitions",
    );
}

/// Answers `{"n": <length of the document>}`, or prose for a document that mentions FAIL.
fn length_server() -> TestServer {
    TestServer::start(|request: &Request| {
        let text = request.last_message();
        let answer = if text.contains("FAIL") {
            "Sorry, no.".to_owned()
        } else {
            format!("{{\"n\": {}}}", text.len())
        };
        Reply::ollama(request, &Answer::new(answer))
    })
}

/// The records of a results file; a line cut off by a killed run is not one.
fn results(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

#[test]
fn a_batch_records_a_failed_document_completes_and_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let docs = dir.path().join("docs");
    std::fs::create_dir(&docs).unwrap();
    for (name, text) in [
        ("a.txt", "one"),
        ("b.txt", "FAIL here"),
        ("c.txt", "three"),
        ("d.txt", "four!"),
    ] {
        std::fs::write(docs.join(name), text).unwrap();
    }
    let out = dir.path().join("results.jsonl");
    let server = length_server();
    let batch = |extra: &[&str]| {
        cargo_bin_cmd!("llm-extract")
            .args(["batch", "--signature", "{n :int}", "--input"])
            .arg(&docs)
            .arg("--out")
            .arg(&out)
            .args([
                "--ollama",
                &server.url(),
                "--concurrency",
                "2",
                "--max-attempts",
                "1",
            ])
            .args(extra)
            .output()
            .unwrap()
    };

    let first = batch(&[]);
    assert_eq!(first.status.code(), Some(1), "{}", stderr_of(&first));
    let mut lines = results(&out);
    lines.sort_by_key(|l| l["id"].as_str().unwrap().to_owned());
    let summary: Vec<(&str, bool)> = lines
        .iter()
        .map(|l| (l["id"].as_str().unwrap(), l["ok"] == true))
        .collect();
    assert_eq!(
        summary,
        [
            ("a.txt", true),
            ("b.txt", false),
            ("c.txt", true),
            ("d.txt", true)
        ]
    );
    assert_eq!(lines[0]["value"], json!({"n": 3}));
    assert_eq!(lines[1]["kind"], "invalid");
    assert_eq!(lines[1]["raw"], "Sorry, no.");
    assert_eq!(server.hits(), 4);

    // Everything is recorded: nothing to do.
    let again = batch(&[]);
    assert_eq!(again.status.code(), Some(0), "{}", stderr_of(&again));
    assert_eq!(server.hits(), 4);

    // A run killed before writing d.txt (and in the middle of a line): only d.txt is redone.
    let kept: Vec<String> = std::fs::read_to_string(&out)
        .unwrap()
        .lines()
        .filter(|l| !l.contains("d.txt"))
        .map(str::to_owned)
        .collect();
    std::fs::write(&out, format!("{}\n{{\"id\": \"d.t", kept.join("\n"))).unwrap();
    let resumed = batch(&[]);
    assert_eq!(resumed.status.code(), Some(0), "{}", stderr_of(&resumed));
    assert_eq!(server.hits(), 5);
    assert!(server.requests()[4].last_message().contains("four!"));

    // --retry-failed redoes b.txt only; it fails again and the exit code says so.
    let retried = batch(&["--retry-failed"]);
    assert_eq!(retried.status.code(), Some(1));
    assert_eq!(server.hits(), 6);
    let last = results(&out).pop().unwrap();
    assert_eq!(
        (last["id"].as_str(), last["ok"].as_bool()),
        (Some("b.txt"), Some(false))
    );
}

#[test]
fn a_record_whose_newline_was_never_written_is_asked_again_once() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("docs.jsonl");
    let lines: Vec<String> = ["one", "three", "four!"]
        .iter()
        .enumerate()
        .map(|(i, text)| json!({"id": format!("doc-{i}"), "text": text}).to_string())
        .collect();
    std::fs::write(&input, lines.join("\n")).unwrap();
    let out = dir.path().join("out.jsonl");
    let server = length_server();
    let batch = || {
        cargo_bin_cmd!("llm-extract")
            .args(["batch", "--signature", "{n :int}", "--input"])
            .arg(&input)
            .arg("--out")
            .arg(&out)
            .args(["--ollama", &server.url(), "--concurrency", "1"])
            .output()
            .unwrap()
    };
    let first = batch();
    assert_eq!(first.status.code(), Some(0), "{}", stderr_of(&first));
    assert_eq!(server.hits(), 3);

    // Killed between writing the last record and its newline: the record is whole JSON, but not done.
    let written = std::fs::read_to_string(&out).unwrap();
    let cut = written.strip_suffix('\n').unwrap();
    let last_id = serde_json::from_str::<Value>(cut.lines().last().unwrap()).unwrap()["id"].clone();
    std::fs::write(&out, cut).unwrap();
    let resumed = batch();
    assert_eq!(resumed.status.code(), Some(0), "{}", stderr_of(&resumed));
    assert_eq!(server.hits(), 4, "the cut record's document is asked again");
    let records = results(&out);
    for id in ["doc-0", "doc-1", "doc-2"] {
        let copies = records.iter().filter(|r| r["id"] == id).count();
        assert_eq!(copies, 1, "{id} in {records:?}");
    }
    assert_eq!(records.last().unwrap()["id"], last_id);
    assert!(std::fs::read_to_string(&out).unwrap().ends_with('\n'));
}

#[test]
fn a_batch_shares_documents_between_servers_from_a_jsonl_input() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("docs.jsonl");
    let lines: Vec<String> = (0..6)
        .map(|i| json!({"id": format!("doc-{i}"), "text": "x".repeat(i + 1)}).to_string())
        .collect();
    std::fs::write(&input, lines.join("\n")).unwrap();
    let out = dir.path().join("out.jsonl");
    let (first, second) = (length_server(), length_server());
    let output = cargo_bin_cmd!("llm-extract")
        .args(["batch", "--signature", "{n :int}", "--input"])
        .arg(&input)
        .arg("--out")
        .arg(&out)
        .args([
            "--ollama",
            &first.url(),
            "--ollama",
            &second.url(),
            "--concurrency",
            "3",
        ])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    assert_eq!((first.hits(), second.hits()), (3, 3));
    let mut values: Vec<(String, i64)> = results(&out)
        .iter()
        .map(|l| {
            (
                l["id"].as_str().unwrap().to_owned(),
                l["value"]["n"].as_i64().unwrap(),
            )
        })
        .collect();
    values.sort();
    let expected: Vec<(String, i64)> = (0..6).map(|i| (format!("doc-{i}"), i + 1)).collect();
    assert_eq!(values, expected);
}

#[test]
fn a_batch_against_an_unreachable_server_exits_3_and_records_each_document() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("docs.jsonl");
    std::fs::write(&input, "\"one\"\n\"two\"\n").unwrap();
    let out = dir.path().join("out.jsonl");
    let url = format!("http://127.0.0.1:{}", closed_port());
    let output = cargo_bin_cmd!("llm-extract")
        .args(["batch", "--signature", "{n :int}", "--input"])
        .arg(&input)
        .arg("--out")
        .arg(&out)
        .args(["--ollama", &url, "--retries", "0"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(3), "{}", stderr_of(&output));
    let lines = results(&out);
    assert_eq!(lines.len(), 2);
    assert!(lines.iter().all(|l| l["kind"] == "backend"), "{lines:?}");
}

#[test]
fn run_in_tool_mode_forces_the_openai_tool_by_name_or_as_required() {
    let server = TestServer::start(|request| {
        support::providers::openai_tool(request, &Answer::new(r#"{"name": "Ada", "age": 36}"#))
    });
    let url = format!("{}/v1", server.url());
    for required in [false, true] {
        let mut command = cargo_bin_cmd!("llm-extract");
        command.args([
            "run",
            "--signature",
            PERSON,
            "--mode",
            "tool",
            "--model",
            "m",
            "--openai",
            &url,
        ]);
        if required {
            command.arg("--tool-choice-required");
        }
        let output = command.write_stdin("Ada, 36").output().unwrap();
        assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
        assert_eq!(
            json_lines(&output.stdout),
            [json!({"name": "Ada", "age": 36})]
        );
    }
    let requests = server.requests();
    let named = &requests[0].json;
    assert!(named.get("response_format").is_none(), "{named}");
    assert_eq!(named["tools"][0]["function"]["strict"], true);
    let name = named["tools"][0]["function"]["name"].clone();
    assert_eq!(
        named["tool_choice"],
        json!({"type": "function", "function": {"name": name}})
    );
    let required = &requests[1].json;
    assert_eq!(required["tool_choice"], "required");
    assert_eq!(required["parallel_tool_calls"], false);
    assert_eq!(required["tools"], named["tools"]);
}

#[test]
fn run_works_against_anthropic_in_tool_mode_and_gemini_with_keys_named_for_them() {
    let claude = TestServer::start(|request| {
        support::providers::anthropic(request, &Answer::new(r#"{"name": "Grace", "age": 85}"#))
    });
    let output = cargo_bin_cmd!("llm-extract")
        .args([
            "run",
            "--signature",
            PERSON,
            "--mode",
            "tool",
            "--model",
            "claude-test",
        ])
        .arg(format!("--anthropic={}", claude.url()))
        .args(["--api-key-env", "CLAUDE_GATEWAY_KEY"])
        .env("CLAUDE_GATEWAY_KEY", "sk-ant-cli-test")
        .write_stdin("Grace Hopper")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    assert_eq!(
        json_lines(&output.stdout),
        [json!({"name": "Grace", "age": 85})]
    );
    let request = &claude.requests()[0];
    assert_eq!(request.path, "/v1/messages");
    assert_eq!(request.header("x-api-key"), Some("sk-ant-cli-test"));
    assert_eq!(request.json["tool_choice"]["type"], "tool");

    let gemini = TestServer::start(|request| {
        support::providers::gemini(request, &Answer::new(r#"{"name": "Grace", "age": 85}"#))
    });
    let output = cargo_bin_cmd!("llm-extract")
        .args(["run", "--signature", PERSON, "--model", "gemini-test"])
        .arg(format!("--gemini={}", gemini.url()))
        .args(["--api-key-env", "GEMINI_API_KEY"])
        .env("GEMINI_API_KEY", "AIza-cli-test")
        .write_stdin("Grace Hopper")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    assert_eq!(
        gemini.requests()[0].header("x-goog-api-key"),
        Some("AIza-cli-test")
    );

    // Anthropic's own API needs its key; nothing is sent without it.
    let no_key = run_person()
        .arg("--anthropic")
        .env_remove("ANTHROPIC_API_KEY")
        .write_stdin("x")
        .output()
        .unwrap();
    assert_eq!(no_key.status.code(), Some(2));
    assert!(
        stderr_of(&no_key).contains("ANTHROPIC_API_KEY"),
        "{}",
        stderr_of(&no_key)
    );
}

/// Six documents, `doc-0` to `doc-5`, each with the text `x`, in `docs.jsonl` under `dir`; its path.
fn six_documents(dir: &Path) -> PathBuf {
    let input = dir.join("docs.jsonl");
    let lines: Vec<String> = (0..6)
        .map(|i| json!({"id": format!("doc-{i}"), "text": "x"}).to_string())
        .collect();
    std::fs::write(&input, lines.join("\n")).unwrap();
    input
}

/// A server answering `{"n": 1}` in the wire format `reply` writes.
fn answering_n(reply: fn(&Request, &Answer) -> Reply) -> TestServer {
    TestServer::start(move |request| reply(request, &Answer::new(r#"{"n": 1}"#)))
}

#[test]
fn a_batch_round_robins_over_a_mix_of_backends() {
    let dir = tempfile::tempdir().unwrap();
    let input = six_documents(dir.path());
    let out = dir.path().join("out.jsonl");
    let ollama = answering_n(Reply::ollama);
    let claude = answering_n(support::providers::anthropic);
    let gemini = answering_n(support::providers::gemini);
    let output = cargo_bin_cmd!("llm-extract")
        .args([
            "batch",
            "--signature",
            "{n :int}",
            "--model",
            "m",
            "--input",
        ])
        .arg(&input)
        .arg("--out")
        .arg(&out)
        .args(["--ollama", &ollama.url(), "--concurrency", "3"])
        .arg(format!("--anthropic={}", claude.url()))
        .arg(format!("--gemini={}", gemini.url()))
        .env("ANTHROPIC_API_KEY", "k1")
        .env("GEMINI_API_KEY", "k2")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    assert_eq!((ollama.hits(), claude.hits(), gemini.hits()), (2, 2, 2));
    assert_eq!(results(&out).len(), 6);
}

/// Every variable whose value the key tests look for, so a value in the test's own environment
/// cannot change what they see.
const KEY_VARIABLES: [&str; 3] = ["OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY"];

fn without_provider_keys(command: &mut assert_cmd::Command) -> &mut assert_cmd::Command {
    for variable in KEY_VARIABLES {
        command.env_remove(variable);
    }
    command
}

fn openai_answering_person() -> TestServer {
    TestServer::start(|request| {
        Reply::openai(request, &Answer::new(r#"{"name": "Ada", "age": 36}"#))
    })
}

#[test]
fn openai_api_key_goes_to_another_server_only_when_named_for_it() {
    let server = openai_answering_person();
    let url = format!("{}/v1", server.url());
    let run = |key_flags: &[&str]| {
        let mut command = run_person();
        command
            .args(["--openai", &url])
            .args(key_flags)
            .env("OPENAI_API_KEY", "sk-openai-implicit")
            .env("NODE_KEY", "sk-node-named")
            .write_stdin("Ada, 36");
        let output = command.output().unwrap();
        assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
        output
    };

    let unnamed = run(&[]);
    let stderr = stderr_of(&unnamed);
    assert!(
        stderr.contains("gets no API key") && stderr.contains("OPENAI_API_KEY"),
        "{stderr}"
    );
    assert!(!stderr.contains("sk-openai-implicit"), "{stderr}");
    run(&["--api-key-env", "NODE_KEY"]);
    run(&["--api-key-env", "OPENAI_API_KEY"]);

    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(requests[0].header("authorization"), None);
    assert_eq!(
        requests[1].header("authorization"),
        Some("Bearer sk-node-named")
    );
    assert_eq!(
        requests[2].header("authorization"),
        Some("Bearer sk-openai-implicit")
    );

    // The one --api-key-env of a one-backend command may come before its flag.
    let output = run_person()
        .args(["--api-key-env", "NODE_KEY", "--openai", &url])
        .env("NODE_KEY", "sk-node-named")
        .write_stdin("Ada, 36")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    assert_eq!(
        server.requests()[3].header("authorization"),
        Some("Bearer sk-node-named")
    );
}

/// `command` sending its http requests through the proxy `proxy` (the variables reqwest reads), so
/// that the proxy counts every request it tries, whatever the address.
fn through_proxy<'a>(
    command: &'a mut assert_cmd::Command,
    proxy: &TestServer,
) -> &'a mut assert_cmd::Command {
    for variable in ["http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"] {
        command.env(variable, proxy.url());
    }
    for variable in ["no_proxy", "NO_PROXY", "REQUEST_METHOD"] {
        command.env_remove(variable);
    }
    command
}

#[test]
fn a_key_for_plain_http_to_another_machine_is_refused_before_connecting() {
    // Answers as a proxy does when the server behind it cannot be reached.
    let proxy = TestServer::start(|_| Reply::text(502, "bad gateway"));
    for backend in [
        vec!["--openai", "http://user:pw@10.255.255.1:1/v1?key=sekrit"],
        vec!["--anthropic=http://10.255.255.1:1"],
        vec!["--gemini=http://10.255.255.1:1"],
    ] {
        let mut command = run_person();
        without_provider_keys(through_proxy(&mut command, &proxy))
            .args(["--retries", "0"])
            .args(&backend)
            .args(["--api-key-env", "NODE_KEY"])
            .env("NODE_KEY", "sk-node-named")
            .write_stdin("x");
        let output = command.output().unwrap();
        let stderr = stderr_of(&output);
        assert_eq!(output.status.code(), Some(2), "{backend:?}: {stderr}");
        assert_one_line_error(&stderr, "--allow-insecure-key");
        assert!(stderr.contains("plain http"), "{stderr}");
        for secret in ["sk-node-named", "pw@", "sekrit"] {
            assert!(!stderr.contains(secret), "{secret} in {stderr}");
        }
        // Refused while building the backend: no request was tried.
        assert_eq!(proxy.hits(), 0, "{backend:?}");
    }

    // Allowed on purpose, the key goes (the proxy counts the request it would have counted above);
    // the address then fails as an unreachable server would.
    let mut command = run_person();
    through_proxy(&mut command, &proxy)
        .args(["--retries", "0"])
        .args([
            "--openai",
            "http://10.255.255.1:1/v1",
            "--api-key-env",
            "NODE_KEY",
        ])
        .arg("--allow-insecure-key")
        .env("NODE_KEY", "sk-node-named")
        .write_stdin("x");
    let output = command.output().unwrap();
    let stderr = stderr_of(&output);
    assert_eq!(output.status.code(), Some(3), "{stderr}");
    assert!(!stderr.contains("plain http"), "{stderr}");
    assert_eq!(proxy.hits(), 1, "{stderr}");
    assert_eq!(
        proxy.requests()[0].header("authorization"),
        Some("Bearer sk-node-named")
    );
}

#[test]
fn a_mixed_batch_gives_each_backend_only_its_own_key() {
    let dir = tempfile::tempdir().unwrap();
    let input = six_documents(dir.path());
    let claude = answering_n(support::providers::anthropic);
    let gemini = answering_n(support::providers::gemini);
    let node = answering_n(Reply::openai);
    let keys = [
        ("OPENAI_API_KEY", "sk-openai-implicit"),
        ("ANTHROPIC_API_KEY", "sk-ant-implicit"),
        ("GEMINI_API_KEY", "AIza-implicit"),
        ("CLAUDE_KEY", "sk-ant-named"),
        ("GEM_KEY", "AIza-named"),
    ];
    // The same backends in two orders: each --api-key-env names the key of the flag before it.
    let orders = [
        vec![
            format!("--anthropic={}", claude.url()),
            "--api-key-env".into(),
            "CLAUDE_KEY".into(),
            format!("--gemini={}", gemini.url()),
            "--api-key-env".into(),
            "GEM_KEY".into(),
            "--openai".into(),
            format!("{}/v1", node.url()),
        ],
        vec![
            "--openai".into(),
            format!("{}/v1", node.url()),
            format!("--gemini={}", gemini.url()),
            "--api-key-env".into(),
            "GEM_KEY".into(),
            format!("--anthropic={}", claude.url()),
            "--api-key-env".into(),
            "CLAUDE_KEY".into(),
        ],
    ];
    for (run, backends) in orders.iter().enumerate() {
        let out = dir.path().join(format!("out-{run}.jsonl"));
        let output = cargo_bin_cmd!("llm-extract")
            .args(["batch", "--signature", "{n :int}", "--model", "m"])
            .arg("--input")
            .arg(&input)
            .arg("--out")
            .arg(&out)
            .args(["--concurrency", "3"])
            .args(backends)
            .envs(keys)
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
        assert_eq!(results(&out).len(), 6);
    }
    assert_eq!((claude.hits(), gemini.hits(), node.hits()), (4, 4, 4));

    let credentials = |request: &Request| -> Vec<String> {
        request
            .headers
            .iter()
            .filter(|(_, value)| keys.iter().any(|(_, key)| value.contains(key)))
            .map(|(name, value)| format!("{name}: {value}"))
            .collect()
    };
    for request in claude.requests() {
        assert_eq!(credentials(&request), ["x-api-key: sk-ant-named"]);
    }
    for request in gemini.requests() {
        assert_eq!(credentials(&request), ["x-goog-api-key: AIza-named"]);
    }
    for request in node.requests() {
        assert_eq!(credentials(&request), Vec::<String>::new());
    }
}

#[test]
fn an_api_key_env_that_names_no_backend_is_refused() {
    let cases: [(&[&str], &str); 4] = [
        (
            &[
                "--api-key-env",
                "K",
                "--openai",
                "http://127.0.0.1:1/v1",
                "--openai",
                "http://127.0.0.1:2/v1",
            ],
            "comes before every backend flag",
        ),
        (
            &["--ollama", "http://127.0.0.1:1", "--api-key-env", "K"],
            "follows --ollama, which takes no key",
        ),
        (
            &[
                "--openai",
                "http://127.0.0.1:1/v1",
                "--api-key-env",
                "K",
                "--api-key-env",
                "L",
            ],
            "two --api-key-env follow the same --openai flag",
        ),
        (&["--api-key-env", "K"], "this command has none"),
    ];
    for (flags, needle) in cases {
        let output = run_person()
            .args(flags)
            .env("K", "sk-k")
            .env("L", "sk-l")
            .env("OLLAMA_HOST", "127.0.0.1:1")
            .write_stdin("x")
            .output()
            .unwrap();
        let stderr = stderr_of(&output);
        assert_eq!(output.status.code(), Some(2), "{flags:?}: {stderr}");
        assert_one_line_error(&stderr, needle);
    }
}

#[test]
fn a_credentialed_url_is_redacted_in_every_message() {
    let secret_url = "http://me:hunter2@127.0.0.1:1/v1?key=sekrit";
    let mut command = cargo_bin_cmd!("llm-extract");
    command
        .args(["run", "--signature", PERSON, "--openai", secret_url])
        .env_remove("OPENAI_MODEL")
        .write_stdin("x");
    let output = command.output().unwrap();
    let stderr = stderr_of(&output);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert_one_line_error(&stderr, "needs --model");
    assert!(
        stderr.contains("me:[redacted]@127.0.0.1:1/v1?key=[redacted]"),
        "{stderr}"
    );

    // The warning about an unsent key, and the error of an unreachable server.
    let output = run_person()
        .args(["--retries", "0"])
        .args(["--openai", secret_url])
        .env("OPENAI_API_KEY", "sk-openai-implicit")
        .write_stdin("x")
        .output()
        .unwrap();
    let stderr = stderr_of(&output);
    assert_eq!(output.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("gets no API key"), "{stderr}");
    for secret in ["hunter2", "sekrit", "sk-openai-implicit"] {
        assert!(!stderr.contains(secret), "{secret} in {stderr}");
    }
}

#[test]
fn an_invalid_ollama_port_is_refused() {
    let output = cargo_bin_cmd!("llm-extract")
        .args(["run", "--signature", PERSON, "--ollama", "127.0.0.1:99999"])
        .write_stdin("x")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", stderr_of(&output));
    assert_one_line_error(&stderr_of(&output), "not a port number");

    // The same port from OLLAMA_HOST: the error says where it came from.
    let output = run_person()
        .env("OLLAMA_HOST", "127.0.0.1:99999")
        .write_stdin("x")
        .output()
        .unwrap();
    let stderr = stderr_of(&output);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert_one_line_error(&stderr, "OLLAMA_HOST");
    assert!(stderr.contains("not a port number"), "{stderr}");
}

#[test]
fn flags_the_backend_ignores_are_warned_about() {
    let server = ollama_answering(r#"{"name": "Ada", "age": 36}"#);
    let output = run_person()
        .args([
            "--ollama",
            &server.url(),
            "--tool-choice-required",
            "--allow-insecure-key",
        ])
        .write_stdin("Ada, 36")
        .output()
        .unwrap();
    let stderr = stderr_of(&output);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    let warnings: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("llm-extract: warning: "))
        .collect();
    assert_eq!(warnings.len(), 2, "{stderr}");
    assert!(
        warnings[0].contains("--tool-choice-required") && warnings[0].contains("--openai"),
        "{stderr}"
    );
    assert!(warnings[1].contains("--allow-insecure-key"), "{stderr}");
}

#[test]
fn run_names_the_keywords_the_backend_will_not_enforce_unless_quiet() {
    let dir = tempfile::tempdir().unwrap();
    let schema = dir.path().join("tags.json");
    std::fs::write(
        &schema,
        json!({
            "type": "object",
            "properties": { "tags": { "type": "array", "items": { "type": "string" }, "uniqueItems": true } },
            "required": ["tags"]
        })
        .to_string(),
    )
    .unwrap();
    let server = ollama_answering(r#"{"tags": ["a", "b"]}"#);
    let run = |quiet: bool| {
        let mut command = cargo_bin_cmd!("llm-extract");
        command.args(["run", "--schema"]).arg(&schema);
        command.args(["--ollama", &server.url(), "--model", "m"]);
        if quiet {
            command.arg("--quiet");
        }
        command.write_stdin("a, b").output().unwrap()
    };
    let output = run(false);
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    let notes: Vec<String> = stderr_of(&output)
        .lines()
        .filter(|l| l.starts_with("llm-extract: note: "))
        .map(str::to_owned)
        .collect();
    assert_eq!(
        notes,
        ["llm-extract: note: gbnf will not enforce uniqueItems (checked locally)"]
    );
    let quiet = run(true);
    assert_eq!(quiet.status.code(), Some(0), "{}", stderr_of(&quiet));
    assert!(
        !stderr_of(&quiet).contains("note:"),
        "{}",
        stderr_of(&quiet)
    );
    assert_eq!(json_lines(&quiet.stdout), [json!({"tags": ["a", "b"]})]);
}

/// `{"name": "Ada", "age": 36}` streamed as OpenAI-compatible chunks with each token's log-probability:
/// the name's two tokens -0.1 and -0.3, the age's one -2.0, the rest certain.
fn openai_with_logprobs() -> Reply {
    openai_tokens(ADA_TOKENS)
}

#[test]
fn run_confidence_prints_each_fields_confidence_and_marks_the_doubtful() {
    let server = TestServer::start(|_| openai_with_logprobs());
    let output = run_person()
        .args([
            "--openai",
            &server.url(),
            "--confidence",
            "--min-confidence",
            "0.5",
        ])
        .write_stdin("Ada, 36")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    assert_eq!(
        json_lines(&output.stdout),
        [json!({"name": "Ada", "age": 36})]
    );
    let stderr = stderr_of(&output);
    assert!(stderr.contains("confidence 0.14 /age 36"), "{stderr}");
    assert!(stderr.contains("confidence 0.82 /name \"Ada\""), "{stderr}");
    assert!(
        stderr.contains("doubtful: at /age: low confidence"),
        "{stderr}"
    );
    assert!(!stderr.contains("doubtful: at /name"), "{stderr}");
    assert_eq!(server.requests()[0].json["logprobs"], true);

    // Ollama has no log-probabilities: said so.
    let ollama = ollama_answering(r#"{"name": "Ada", "age": 36}"#);
    let output = run_person()
        .args(["--ollama", &ollama.url(), "--confidence"])
        .write_stdin("Ada, 36")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    assert!(stderr_of(&output).contains("no token log-probabilities"));
}

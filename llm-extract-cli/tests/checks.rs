//! `--check-command`: the user's own checks, run as a program on each value, against the local test
//! server. Hard issues go back to the model in the repair turn, soft ones reach the output, a command
//! that fails is an error naming it; `eval` measures a run with checks beside one without.

mod common;
#[path = "../../tests/support/mod.rs"]
mod support;

use assert_cmd::cargo::cargo_bin_cmd;
use common::stderr_of;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use support::{Answer, Reply, Request, TestServer};

const PERSON: &str = "{name :string, age :int}";

/// What the check below says of a placeholder name.
const COPY_THE_NAME: &str = "a placeholder: copy the name from the text";

/// A check command (run directly, split into words) that reads its input and reports a placeholder
/// name as a hard issue and an age over 120 as a soft one.
fn placeholder_check() -> String {
    format!(
        "sh -c 'input=$(cat); \
         case \"$input\" in *\"[Your Name]\"*) echo \"{{\\\"path\\\": \\\"/name\\\", \\\"message\\\": \\\"{COPY_THE_NAME}\\\"}}\";; esac; \
         case \"$input\" in *\"\\\"age\\\":150\"*) echo \"{{\\\"path\\\": \\\"/age\\\", \\\"message\\\": \\\"older than anyone\\\", \\\"severity\\\": \\\"soft\\\"}}\";; esac'"
    )
}

/// A model that writes a placeholder until the repair turn names the check's message, then Ada.
fn careless_until_told() -> TestServer {
    TestServer::start(|request: &Request| {
        let answer = if request.last_message().contains(COPY_THE_NAME) {
            r#"{"name": "Ada Lovelace", "age": 36}"#
        } else {
            r#"{"name": "[Your Name]", "age": 36}"#
        };
        Reply::ollama(request, &Answer::new(answer))
    })
}

fn run_person(server: &TestServer) -> assert_cmd::Command {
    let mut command = cargo_bin_cmd!("llm-extract");
    command
        .args(["run", "--signature", PERSON, "--model", "m", "--ollama"])
        .arg(server.url());
    command
}

/// A `batch` of the person signature against `server` over `docs` (JSON Lines of texts), written to
/// a file in `dir`: the command, and that file.
fn batch_person(server: &TestServer, dir: &Path, docs: &str) -> (assert_cmd::Command, PathBuf) {
    let input = dir.join("docs.jsonl");
    std::fs::write(&input, docs).unwrap();
    let out = dir.join("out.jsonl");
    let mut command = cargo_bin_cmd!("llm-extract");
    command
        .args(["batch", "--signature", PERSON, "--model", "m", "--ollama"])
        .arg(server.url())
        .arg("--input")
        .arg(&input)
        .arg("--out")
        .arg(&out);
    (command, out)
}

fn records(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn a_hard_issue_is_sent_back_with_its_message_and_the_repaired_value_is_kept() {
    let server = careless_until_told();
    let output = run_person(&server)
        .args(["--check-command", &placeholder_check()])
        .write_stdin("Ada Lovelace, 36, wrote the first program.")
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr_of(&output));
    let value: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(value, json!({"name": "Ada Lovelace", "age": 36}));
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let repair = requests[1].last_message();
    assert!(
        repair.contains("/name") && repair.contains(COPY_THE_NAME),
        "{repair}"
    );
    // The first request had no check message to go by.
    assert!(!requests[0].last_message().contains(COPY_THE_NAME));

    // Without the check, the placeholder is returned as valid.
    let unchecked = run_person(&server)
        .write_stdin("Ada Lovelace, 36.")
        .output()
        .unwrap();
    let value: Value = serde_json::from_slice(&unchecked.stdout).unwrap();
    assert_eq!(value["name"], "[Your Name]");
}

#[test]
fn the_check_reads_the_input_text() {
    // A hard issue unless the name is in the text: only the text can tell.
    let check = "python3 -c 'import json,sys; d=json.load(sys.stdin); \
                 n=d[\"value\"][\"name\"]; \
                 print(json.dumps({\"path\": \"/name\", \"message\": \"copy the name from the text\"})) if n not in d[\"input\"][\"text\"] else None'";
    let server = TestServer::start(|request: &Request| {
        let answer = if request
            .last_message()
            .contains("copy the name from the text")
        {
            r#"{"name": "Grace Hopper", "age": 85}"#
        } else {
            r#"{"name": "Ada", "age": 85}"#
        };
        Reply::ollama(request, &Answer::new(answer))
    });
    let output = run_person(&server)
        .args(["--check-command", check])
        .write_stdin("Grace Hopper, 85.")
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr_of(&output));
    let value: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(value["name"], "Grace Hopper");
    assert_eq!(server.hits(), 2);
}

#[test]
fn soft_issues_reach_the_batch_records_and_the_run_warnings() {
    let server = TestServer::start(|request: &Request| {
        Reply::ollama(request, &Answer::new(r#"{"name": "Old Tom", "age": 150}"#))
    });
    let dir = tempfile::tempdir().unwrap();
    let (mut batch, out) = batch_person(
        &server,
        dir.path(),
        "\"Old Tom is 150.\"\n\"Old Tom again.\"\n",
    );
    let output = batch
        .args(["--check-command", &placeholder_check()])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr_of(&output));
    let lines = records(&out);
    assert_eq!(lines.len(), 2);
    for line in &lines {
        assert_eq!(line["ok"], true, "{line}");
        assert_eq!(line["attempts"], 1, "{line}");
        assert_eq!(
            line["issues"],
            json!([{"path": "/age", "message": "older than anyone"}]),
            "{line}"
        );
    }

    let output = run_person(&server)
        .args(["--check-command", &placeholder_check()])
        .write_stdin("Old Tom is 150.")
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr_of(&output));
    assert!(
        stderr_of(&output).contains("llm-extract: doubtful: at /age: older than anyone"),
        "{}",
        stderr_of(&output)
    );
}

#[test]
fn a_failing_command_is_an_error_naming_it_with_its_stderr() {
    let server = careless_until_told();
    let failing = "sh -c 'echo \"KeyError: total\" >&2; exit 3'";
    let output = run_person(&server)
        .args(["--check-command", failing])
        .write_stdin("Ada.")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", stderr_of(&output));
    let stderr = stderr_of(&output);
    let error = stderr
        .lines()
        .find(|l| l.starts_with("llm-extract: error: "))
        .unwrap_or_else(|| panic!("{stderr}"));
    assert!(
        error.contains(&format!(
            "the check command `{failing}` exited with status 3: KeyError: total"
        )),
        "{error}"
    );
    // The value that could not be checked is not printed, nor re-asked.
    assert!(output.stdout.is_empty());
    assert_eq!(server.hits(), 1);

    // In a batch, each document records the failure as a check failure.
    let dir = tempfile::tempdir().unwrap();
    let (mut batch, out) = batch_person(&server, dir.path(), "\"Ada.\"\n");
    let output = batch
        .args([
            "--check-command",
            "/nonexistent/checker",
            "--check-timeout",
            "5",
        ])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", stderr_of(&output));
    let line = &records(&out)[0];
    assert_eq!(line["kind"], "check", "{line}");
    let message = line["error"].as_str().unwrap();
    assert!(
        message.contains("the check command `/nonexistent/checker` could not start"),
        "{message}"
    );

    // An empty command or an unclosed quote is a usage error, before any request.
    let before = server.hits();
    for bad in ["  ", "python3 'checks.py"] {
        let output = run_person(&server)
            .args(["--check-command", bad])
            .write_stdin("Ada.")
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2), "{}", stderr_of(&output));
    }
    assert_eq!(server.hits(), before);
}

/// The evaluation set's invoice schema and the check script written for it.
fn repository(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(path)
}

#[test]
fn eval_with_the_eval_sets_checks_is_measured_beside_a_run_without() {
    // Three invoices; a model that invents the total unless told the total must come from the text.
    let gold = [
        (
            "a",
            "Invoice INV-1 for Harbor Ltd: 1,250.00 EUR, unpaid, due 2025-03-15.",
            "INV-1",
            "Harbor Ltd",
            1250.0,
            "EUR",
            false,
            Some("2025-03-15"),
        ),
        (
            "b",
            "Invoice 2024-117 for Maple & Finch, $348.20, settled.",
            "2024-117",
            "Maple & Finch",
            348.2,
            "USD",
            true,
            None,
        ),
        (
            "c",
            "Invoice #A-77 to Tom Becker for £96.50, already paid in full.",
            "A-77",
            "Tom Becker",
            96.5,
            "GBP",
            true,
            None,
        ),
    ];
    let dir = tempfile::tempdir().unwrap();
    let mut lines = String::new();
    for (id, text, number, customer, total, currency, paid, due) in gold {
        let value = json!({"invoice_number": number, "customer": customer, "total": total,
                           "currency": currency, "paid": paid, "due_date": due});
        lines.push_str(&json!({"id": id, "text": text, "value": value}).to_string());
        lines.push('\n');
    }
    let gold_path = dir.path().join("gold.jsonl");
    std::fs::write(&gold_path, lines).unwrap();
    let server = TestServer::start(move |request: &Request| {
        let told = request
            .last_message()
            .contains("copy the total from the text");
        let text = request
            .messages()
            .into_iter()
            .filter(|(role, _)| role == "user")
            .map(|(_, content)| content)
            .next()
            .unwrap_or_default();
        let case = gold.iter().find(|case| text.contains(case.1));
        let answer = match case {
            Some((_, _, number, customer, total, currency, paid, due)) => json!({
                "invoice_number": number, "customer": customer,
                "total": if told { *total } else { 999.0 },
                "currency": currency, "paid": paid, "due_date": due,
            })
            .to_string(),
            None => "no idea".to_owned(),
        };
        Reply::ollama(request, &Answer::new(answer).usage(40, 20))
    });
    let eval = |extra: &[&str], json_out: &Path| {
        cargo_bin_cmd!("llm-extract")
            .arg("eval")
            .arg("--schema")
            .arg(repository("examples/data/heldout/schemas/invoices.json"))
            .arg("--gold")
            .arg(&gold_path)
            .args(["--model", "m", "--ollama", &server.url(), "--json"])
            .arg(json_out)
            .args(extra)
            .output()
            .unwrap()
    };
    let greedy = dir.path().join("greedy.json");
    let output = eval(&[], &greedy);
    assert!(output.status.success(), "{}", stderr_of(&output));
    let checks = format!(
        "python3 '{}'",
        repository("examples/eval/checks.py").display()
    );
    let with_checks = dir.path().join("checks.json");
    let output = eval(
        &[
            "--check-command",
            &checks,
            "--compare",
            greedy.to_str().unwrap(),
        ],
        &with_checks,
    );
    assert!(output.status.success(), "{}", stderr_of(&output));
    let table = String::from_utf8_lossy(&output.stdout);
    assert!(table.contains("against"), "{table}");

    let run = |path: &Path| -> Value {
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    };
    let (before, after) = (run(&greedy), run(&with_checks));
    let accuracy = |run: &Value| run["overall"]["accuracy"].as_f64().unwrap();
    assert!(
        accuracy(&after) > accuracy(&before),
        "{} then {}",
        accuracy(&before),
        accuracy(&after)
    );
    assert_eq!(accuracy(&after), 1.0, "{table}");
    // The checks cost a repair per document.
    assert_eq!(server.hits(), 3 + 6);
    // The run with checks says how well their soft issues mark wrong values; the other cannot.
    assert!(table.contains("\nchecks: "), "{table}");
    assert!(after["checks_calibration"].is_object(), "{after}");
    assert!(before.get("checks_calibration").is_none());
}

#[test]
fn doc_checks_each_item_against_its_own_chunk() {
    // The model names Ann and a Zed the text never mentions, until told; the check reads the chunk.
    let check = "python3 -c 'import json,sys; d=json.load(sys.stdin); \
                 n=d[\"value\"][\"name\"]; \
                 print(json.dumps({\"path\": \"/name\", \"message\": n + \" is not in this part of the text\"})) if n not in d[\"input\"][\"text\"] else None'";
    let server = TestServer::start(|request: &Request| {
        let answer = if request
            .last_message()
            .contains("Zed is not in this part of the text")
        {
            r#"{"items": [{"name": "Ann"}]}"#
        } else {
            r#"{"items": [{"name": "Ann"}, {"name": "Zed"}]}"#
        };
        Reply::ollama(request, &Answer::new(answer))
    });
    let cache = tempfile::tempdir().unwrap();
    let output = cargo_bin_cmd!("llm-extract")
        .env("XDG_CACHE_HOME", cache.path())
        .args([
            "doc",
            "--signature",
            "{name :string}",
            "--model",
            "m",
            "--ollama",
        ])
        .arg(server.url())
        .args(["--check-command", check])
        .write_stdin("Ann met Bob at the station.")
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr_of(&output));
    let names: Vec<Value> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["value"]["name"].clone())
        .collect();
    assert_eq!(names, [json!("Ann")]);
    assert_eq!(server.hits(), 2);
}

/// A model that writes a placeholder whatever it is told.
fn always_careless() -> TestServer {
    TestServer::start(|request: &Request| {
        Reply::ollama(
            request,
            &Answer::new(r#"{"name": "[Your Name]", "age": 36}"#),
        )
    })
}

#[test]
fn keep_doubtful_prints_a_value_whose_hard_issue_outlasts_the_attempts_with_the_issue() {
    let server = always_careless();
    let failed = run_person(&server)
        .args([
            "--check-command",
            &placeholder_check(),
            "--max-attempts",
            "2",
        ])
        .write_stdin("Ada Lovelace, 36, wrote the first program.")
        .output()
        .unwrap();
    assert!(!failed.status.success(), "without --keep-doubtful it fails");
    let output = run_person(&server)
        .args([
            "--check-command",
            &placeholder_check(),
            "--max-attempts",
            "2",
        ])
        .arg("--keep-doubtful")
        .write_stdin("Ada Lovelace, 36, wrote the first program.")
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr_of(&output));
    let value: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(value, json!({"name": "[Your Name]", "age": 36}));
    let stderr = stderr_of(&output);
    assert!(
        stderr.contains("doubtful") && stderr.contains(COPY_THE_NAME),
        "{stderr}"
    );
}

/// The variable names of the environment the check command saw, from `env` written into `file`.
fn seen_env(file: &Path) -> Vec<String> {
    std::fs::read_to_string(file)
        .unwrap()
        .lines()
        .filter_map(|line| line.split_once('=').map(|(name, _)| name.to_owned()))
        .collect()
}

#[test]
fn the_check_command_gets_no_api_key_unless_asked() {
    let server = TestServer::start(|request: &Request| {
        Reply::openai(request, &Answer::new(r#"{"name": "Ada", "age": 36}"#))
    });
    let dir = tempfile::tempdir().unwrap();
    let env = dir.path().join("env.txt");
    let check = format!("sh -c 'cat > /dev/null; env > \"{}\"'", env.display());
    let keys = [
        ("OPENAI_API_KEY", "sk-openai"),
        ("ANTHROPIC_API_KEY", "sk-ant"),
        ("GEMINI_API_KEY", "AIza"),
        ("OLLAMA_HOST", "http://user:pw@127.0.0.1:9"),
        ("LLM_EXTRACT_TEST_GATEWAY_KEY", "sk-gateway"),
    ];
    let run = |extra: &[&str]| {
        let mut command = cargo_bin_cmd!("llm-extract");
        command.args(["run", "--signature", PERSON, "--model", "m", "--openai"]);
        command
            .arg(server.url())
            .args(["--api-key-env", "LLM_EXTRACT_TEST_GATEWAY_KEY"]);
        for (name, value) in keys {
            command.env(name, value);
        }
        command
            .env("LLM_EXTRACT_TEST_PLAIN", "kept")
            .args(["--check-command", &check])
            .args(extra)
            .write_stdin("Ada Lovelace, 36.")
            .output()
            .unwrap()
    };
    let hidden = run(&[]);
    assert_eq!(hidden.status.code(), Some(0), "{}", stderr_of(&hidden));
    // The key named for the server went to it; the check saw none of them.
    assert_eq!(
        server.requests()[0].header("authorization"),
        Some("Bearer sk-gateway")
    );
    let seen = seen_env(&env);
    assert!(
        seen.iter().any(|name| name == "LLM_EXTRACT_TEST_PLAIN"),
        "{seen:?}"
    );
    for (name, _) in keys {
        assert!(
            !seen.iter().any(|seen| seen == name),
            "{name} reached the check"
        );
    }

    let shown = run(&["--check-with-keys"]);
    assert_eq!(shown.status.code(), Some(0), "{}", stderr_of(&shown));
    let seen = seen_env(&env);
    for (name, _) in keys {
        assert!(
            seen.iter().any(|seen| seen == name),
            "{name} did not reach the check"
        );
    }
}

/// A child process killed when the test ends, whichever way it ends.
struct Killed(std::process::Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[cfg(unix)]
#[test]
fn an_interrupted_command_ends_the_check_it_was_running() {
    let server = TestServer::start(|request: &Request| {
        Reply::ollama(request, &Answer::new(r#"{"name": "Ada", "age": 36}"#))
    });
    let dir = tempfile::tempdir().unwrap();
    let pid = dir.path().join("pid");
    // Says where it runs, then never ends (its own timeout is far away).
    let check = format!("sh -c 'echo $$ > \"{}\"; exec sleep 300'", pid.display());
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin!("llm-extract"))
        .args(["run", "--signature", PERSON, "--model", "m", "--ollama"])
        .arg(server.url())
        .args(["--check-command", &check, "--check-timeout", "600"])
        .arg("text=Ada Lovelace, 36.")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut child = Killed(child);
    // A hang guard, no claim of speed: the check starts once the server has answered.
    let mut waited = 0;
    let check_pid = loop {
        let written = std::fs::read_to_string(&pid).unwrap_or_default();
        if written.ends_with('\n') {
            break written.trim().to_owned();
        }
        assert!(waited < 2400, "the check command never started");
        waited += 1;
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let interrupt = std::process::Command::new("kill")
        .args(["-INT", &child.0.id().to_string()])
        .status()
        .unwrap();
    assert!(interrupt.success());
    let status = child.0.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{status:?}");
    // The check's process goes with the command (a dead one may wait a moment to be reaped).
    let stat = format!("/proc/{check_pid}/stat");
    let mut waited = 0;
    while let Ok(text) = std::fs::read_to_string(&stat) {
        if text
            .rsplit(") ")
            .next()
            .is_some_and(|s| s.starts_with(['Z', 'X']))
        {
            break;
        }
        assert!(
            waited < 2400,
            "the check command outlived the interrupted command"
        );
        waited += 1;
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

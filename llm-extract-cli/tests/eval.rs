//! `llm-extract eval`, run for real against the local test server, whose stand-in model reads the
//! invoice each request holds (a careless reader and a careful one), scored against a gold file.

mod browser;
#[path = "../../tests/support/mod.rs"]
mod support;

use assert_cmd::cargo::cargo_bin_cmd;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use support::{Answer, Reply, Request, TestServer};

const INVOICE: &str =
    "{number :string, customer :string, total :float, currency (EUR | USD), paid :bool}";

/// The gold cases: texts in one shape ("Invoice N for CUSTOMER: AMOUNT CURRENCY, paid|unpaid."), and
/// one the stand-in model cannot read.
const GOLD: &[(&str, &str, &str, f64, &str, bool)] = &[
    ("a", "A-1", "Harbor Logistics Ltd", 100.5, "EUR", true),
    ("b", "B-22", "Maple & Finch", 348.2, "USD", false),
    ("c", "C-7", "Greenleaf Design", 96.5, "USD", true),
    ("d", "D-9", "Oak <Studio>", 12.0, "EUR", false),
];

fn text_of(number: &str, customer: &str, total: f64, currency: &str, paid: bool) -> String {
    let status = if paid { "paid" } else { "unpaid" };
    format!("Invoice {number} for {customer}: {total:.2} {currency}, {status}.")
}

fn gold_file(dir: &Path) -> PathBuf {
    let mut lines = String::new();
    for (id, number, customer, total, currency, paid) in GOLD {
        let value = json!({"number": number, "customer": customer, "total": total, "currency": currency, "paid": paid});
        let text = text_of(number, customer, *total, currency, *paid);
        lines.push_str(&json!({"id": id, "text": text, "value": value}).to_string());
        lines.push('\n');
    }
    // A text the model answers with prose: no valid value.
    let value = json!({"number": "E-1", "customer": "Nobody", "total": 1.0, "currency": "EUR", "paid": false});
    lines.push_str(&json!({"id": "e", "text": "Illegible scan.", "value": value}).to_string());
    lines.push('\n');
    let path = dir.join("gold.jsonl");
    std::fs::write(&path, lines).unwrap();
    path
}

/// Reads "Invoice N for CUSTOMER: AMOUNT CURRENCY, STATUS." from the request's text. The careless
/// reader writes the customer in lower case with a trailing period (which scoring forgives), always
/// says EUR and takes every invoice as paid; the careful one reads everything.
fn reader(careful: bool) -> TestServer {
    reader_by(move |_| careful)
}

/// The stand-in model, careful where `careful` says for the request.
fn reader_by(careful: impl Fn(&Request) -> bool + Send + Sync + 'static) -> TestServer {
    TestServer::start(move |request: &Request| {
        let careful = careful(request);
        let text = request.last_message();
        let read = || -> Option<Value> {
            let rest = text.strip_prefix("Invoice ")?;
            let (number, rest) = rest.split_once(" for ")?;
            let (customer, rest) = rest.split_once(": ")?;
            let (amount, rest) = rest.split_once(' ')?;
            let (currency, status) = rest.split_once(", ")?;
            let total: f64 = amount.parse().ok()?;
            Some(if careful {
                json!({"number": number, "customer": customer, "total": total, "currency": currency,
                       "paid": status == "paid."})
            } else {
                json!({"number": number, "customer": format!("{}.", customer.to_lowercase()),
                       "total": total, "currency": "EUR", "paid": true})
            })
        };
        let answer = read().map_or_else(|| "I cannot read this.".to_owned(), |v| v.to_string());
        Reply::ollama(request, &Answer::new(answer).usage(50, 20))
    })
}

fn eval(server: &TestServer, gold: &Path) -> assert_cmd::Command {
    let mut command = cargo_bin_cmd!("llm-extract");
    command
        .args([
            "eval",
            "--signature",
            INVOICE,
            "--max-attempts",
            "1",
            "--model",
            "m",
            "--ollama",
        ])
        .arg(server.url())
        .arg("--gold")
        .arg(gold);
    command
}

fn stdout_of(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The table row of `field`: its cells split on runs of spaces.
fn row<'a>(table: &'a str, field: &str) -> Vec<&'a str> {
    table
        .lines()
        .find(|l| l.split_whitespace().next() == Some(field))
        .unwrap_or_else(|| panic!("no row {field} in\n{table}"))
        .split_whitespace()
        .collect()
}

#[test]
fn eval_prints_the_table_and_writes_the_run_as_json() {
    let server = reader(false);
    let dir = tempfile::tempdir().unwrap();
    let gold = gold_file(dir.path());
    let json_path = dir.path().join("run.json");
    let output = eval(&server, &gold)
        .arg("--json")
        .arg(&json_path)
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let table = stdout_of(&output);
    // field, leaves, accuracy, precision, recall, F1. Five documents, one without a valid value.
    assert_eq!(
        row(&table, "number"),
        ["number", "5", "80.0%", "100.0%", "80.0%", "88.9%"]
    );
    assert_eq!(
        row(&table, "customer")[2],
        "80.0%",
        "normalised: case and the period forgiven"
    );
    assert_eq!(
        row(&table, "currency")[2],
        "40.0%",
        "always EUR: right on a and d"
    );
    assert_eq!(row(&table, "paid")[2], "40.0%");
    assert_eq!(row(&table, "overall")[..3], ["overall", "25", "64.0%"]);
    assert!(
        table.contains("5 documents, 4 with a valid value (80.0%)"),
        "{table}"
    );
    assert!(table.contains("tokens per document: median 70"), "{table}");

    let run: Value = serde_json::from_str(&std::fs::read_to_string(&json_path).unwrap()).unwrap();
    assert_eq!(run["documents"], 5);
    assert_eq!(run["valid"], 4);
    assert_eq!(run["overall"]["correct"], 16);
    let failed = run["runs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == "e")
        .unwrap();
    assert_eq!(failed["valid"], false);
    assert!(failed["error"].as_str().unwrap().len() > 10, "{failed}");
    assert!(failed["leaves"]
        .as_array()
        .unwrap()
        .iter()
        .all(|l| l["outcome"] == "missing"));
    let b = run["runs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == "b")
        .unwrap();
    let currency = b["leaves"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["field"] == "currency")
        .unwrap();
    assert_eq!(
        currency,
        &json!({"field": "currency", "path": "/currency", "outcome": "wrong", "gold": "USD", "predicted": "EUR"})
    );
    // Every text went to the model as the document.
    assert_eq!(server.requests().len(), 5);
}

#[test]
fn samples_are_voted_per_field_and_the_run_keeps_each_leafs_agreement() {
    // The greedy answer (seed 0) is careless, the sampled ones (seeds 1 and 2) careful.
    let server = reader_by(|request| request.json["options"]["seed"].as_u64().unwrap_or(0) > 0);
    let dir = tempfile::tempdir().unwrap();
    let gold = gold_file(dir.path());
    let json_path = dir.path().join("run.json");
    let output = eval(&server, &gold)
        .args(["--samples", "3", "--json"])
        .arg(&json_path)
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    // As the careful reader alone scores (see compare_shows_each_fields_change_against_an_earlier_run).
    assert_eq!(
        row(&stdout_of(&output), "overall")[..3],
        ["overall", "25", "80.0%"]
    );
    let run: Value = serde_json::from_str(&std::fs::read_to_string(&json_path).unwrap()).unwrap();
    let b = run["runs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == "b")
        .unwrap();
    assert_eq!(b["agreement"]["/number"], 1.0);
    assert!((b["agreement"]["/currency"].as_f64().unwrap() - 2.0 / 3.0).abs() < 1e-6);
    assert_eq!(b["tokens"], 210, "three answers of 70 tokens");
    assert_eq!(server.requests().len(), 15);
}

#[test]
fn compare_shows_each_fields_change_against_an_earlier_run() {
    let dir = tempfile::tempdir().unwrap();
    let gold = gold_file(dir.path());
    let before = dir.path().join("before.json");
    let careless = reader(false);
    let status = eval(&careless, &gold)
        .arg("--json")
        .arg(&before)
        .output()
        .unwrap();
    assert!(status.status.success());
    let careful = reader(true);
    let page = dir.path().join("report.html");
    let output = eval(&careful, &gold)
        .arg("--compare")
        .arg(&before)
        .arg("--html")
        .arg(&page)
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let text = stdout_of(&output);
    let (_, comparison) = text.split_once("against ").unwrap();
    // field, acc. A, acc. B, change, F1 A, F1 B, change.
    assert_eq!(
        row(comparison, "currency")[1..4],
        ["40.0%", "80.0%", "+40.0"]
    );
    assert_eq!(row(comparison, "number")[3], "+0.0");
    assert_eq!(
        row(comparison, "overall")[1..4],
        ["64.0%", "80.0%", "+16.0"]
    );
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("id=\"compare\""));
    assert!(html.contains("class=\"n up\">+40.0</td>"), "{html}");

    // A file that is no run is a usage error naming it.
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "{\"not\": \"a run\"}").unwrap();
    let output = eval(&careful, &gold)
        .arg("--compare")
        .arg(&bad)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("bad.json"));
}

#[test]
fn eval_exit_codes_say_what_went_wrong() {
    let dir = tempfile::tempdir().unwrap();
    let gold = gold_file(dir.path());
    let server = reader(false);
    // Below --min-accuracy: 1 (the table is still printed).
    let output = eval(&server, &gold)
        .args(["--min-accuracy", "90"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(stdout_of(&output).contains("overall"));
    assert_eq!(
        eval(&server, &gold)
            .args(["--min-accuracy", "60"])
            .output()
            .unwrap()
            .status
            .code(),
        Some(0)
    );
    // A gold file that is not one: 2, naming the line.
    let broken = dir.path().join("broken.jsonl");
    std::fs::write(&broken, "{\"id\": \"a\", \"text\": \"x\"}\n").unwrap();
    let output = eval(&server, &broken).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("broken.jsonl:1"));
    // No server: 3.
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let output = cargo_bin_cmd!("llm-extract")
        .args([
            "eval",
            "--signature",
            INVOICE,
            "--model",
            "m",
            "--retries",
            "0",
            "--ollama",
        ])
        .arg(format!("http://127.0.0.1:{port}"))
        .arg("--gold")
        .arg(&gold)
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn the_html_report_loads_in_a_real_browser_with_a_bar_per_field() {
    let server = reader(false);
    let dir = tempfile::tempdir().unwrap();
    let gold = gold_file(dir.path());
    let page = dir.path().join("report.html");
    let output = eval(&server, &gold)
        .arg("--html")
        .arg(&page)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let dom = browser::dom(&page);
    // The DOM the browser built (not the file): five fields and the overall row, each with its bar.
    assert!(dom.contains("id=\"summary\""), "{dom:.500}");
    assert_eq!(
        dom.matches("<tr class=\"field\">").count(),
        6,
        "{dom:.2000}"
    );
    assert_eq!(dom.matches("<div class=\"bar\">").count(), 6);
    assert!(
        dom.contains("<div style=\"width:40.0%\"></div>"),
        "currency's bar"
    );
    // The worst documents: the one without a value first, with its gold.
    assert!(dom.contains("<tr class=\"doc\"><td>e<br>"), "{dom:.3000}");
    // The gold's markup is shown as text.
    assert!(dom.contains("Oak &lt;Studio&gt;") && !dom.contains("<studio>"));
    browser::assert_screenshot(&page, &dir.path().join("report.png"));
}

#[test]
fn lists_pair_items_by_key_from_texts_and_values_in_two_files() {
    // The stand-in model lists the people of the text in reverse order and calls everyone "cook".
    let server = TestServer::start(|request: &Request| {
        let text = request.last_message();
        let items: Vec<Value> = text
            .trim_end_matches('.')
            .rsplit(", ")
            .filter_map(|part| part.split_once(" the "))
            .map(|(name, _)| json!({"name": name, "role": "cook"}))
            .collect();
        Reply::ollama(request, &Answer::new(json!({ "items": items }).to_string()))
    });
    let dir = tempfile::tempdir().unwrap();
    let schema = dir.path().join("person.json");
    std::fs::write(
        &schema,
        json!({"type": "object", "properties": {
            "name": {"type": "string", "x-key": true},
            "role": {"type": "string"}
        }, "required": ["name", "role"]})
        .to_string(),
    )
    .unwrap();
    let texts = dir.path().join("texts.jsonl");
    let values = dir.path().join("values.jsonl");
    std::fs::write(
        &texts,
        "{\"id\": \"k\", \"text\": \"Ada the writer, Bo the cook, Cy the pilot.\"}\n",
    )
    .unwrap();
    let gold = json!([{"name": "Ada", "role": "writer"}, {"name": "Bo", "role": "cook"}, {"name": "Cy", "role": "pilot"}]);
    std::fs::write(&values, format!("{}\n", json!({"id": "k", "value": gold}))).unwrap();
    let json_path = dir.path().join("run.json");
    let output = cargo_bin_cmd!("llm-extract")
        .args(["eval", "--jsonl", "--model", "m", "--ollama"])
        .arg(server.url())
        .arg("--schema")
        .arg(&schema)
        .arg("--texts")
        .arg(&texts)
        .arg("--values")
        .arg(&values)
        .arg("--json")
        .arg(&json_path)
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let table = stdout_of(&output);
    // Every name paired with its own item whatever the order; one role of three right.
    assert_eq!(row(&table, "[].name")[..3], ["[].name", "3", "100.0%"]);
    assert_eq!(row(&table, "[].role")[..3], ["[].role", "3", "33.3%"]);
    let run: Value = serde_json::from_str(&std::fs::read_to_string(&json_path).unwrap()).unwrap();
    let leaves = run["runs"][0]["leaves"].as_array().unwrap();
    let ada = leaves.iter().find(|l| l["gold"] == "writer").unwrap();
    assert_eq!(
        (ada["path"].as_str(), ada["predicted"].as_str()),
        (Some("/0/role"), Some("cook"))
    );
}

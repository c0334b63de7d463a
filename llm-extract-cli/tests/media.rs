//! `--image` and `--pdf` on `run` and `batch`, the files a batch line names, and a directory of scans,
//! run through the real binary against the local test server: the parts in the backend's wire form with
//! their bytes exact, a file of the wrong kind or a backend that cannot take it refused before anything
//! is sent, and `--save-raw` keeping sizes and hashes of the files, never their bytes.

mod common;
#[path = "../../tests/support/mod.rs"]
mod support;

use assert_cmd::cargo::cargo_bin_cmd;
use base64::Engine as _;
use common::{json_lines, stderr_of};
use serde_json::{json, Value};
use std::path::Path;
use support::media::{data_url, decode, last_message, pdf, png};
use support::{Answer, Reply, TestServer};

const PERSON: &str = "{name :string, age :int}";

fn openai_answering(text: &'static str) -> TestServer {
    TestServer::start(move |request| Reply::openai(request, &Answer::new(text)))
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> std::path::PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

#[test]
fn run_sends_images_and_pdfs_with_the_text() {
    let dir = tempfile::tempdir().unwrap();
    let image = write(dir.path(), "badge.png", &png());
    let document = write(dir.path(), "form.pdf", &pdf());
    let server = openai_answering(r#"{"name": "Ada", "age": 36}"#);
    let output = cargo_bin_cmd!("llm-extract")
        .args(["run", "--signature", PERSON, "--openai", &server.url()])
        .args(["--model", "vision", "--image"])
        .arg(&image)
        .arg("--pdf")
        .arg(&document)
        .write_stdin("Who is this?")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    assert_eq!(
        json_lines(&output.stdout),
        [json!({"name": "Ada", "age": 36})]
    );
    let parts = last_message(&server.requests()[0])["content"].clone();
    assert_eq!(data_url(&parts[0]["image_url"]["url"], "image/png"), png());
    assert_eq!(parts[1]["file"]["filename"], "form.pdf");
    assert_eq!(
        data_url(&parts[1]["file"]["file_data"], "application/pdf"),
        pdf()
    );
    assert_eq!(parts[2], json!({"type": "text", "text": "Who is this?"}));
}

#[test]
fn run_takes_an_image_without_text() {
    let dir = tempfile::tempdir().unwrap();
    let image = write(dir.path(), "badge.png", &png());
    let server = TestServer::start(|request| {
        Reply::ollama(request, &Answer::new(r#"{"name": "Ada", "age": 36}"#))
    });
    let output = cargo_bin_cmd!("llm-extract")
        .args(["run", "--signature", PERSON, "--ollama", &server.url()])
        .args(["--model", "llava", "--image"])
        .arg(&image)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    let message = last_message(&server.requests()[0]);
    assert_eq!(message["content"], "");
    assert_eq!(decode(&message["images"][0]), png());
}

#[test]
fn a_file_of_the_wrong_kind_or_a_backend_without_pdfs_is_refused_before_sending() {
    let dir = tempfile::tempdir().unwrap();
    let image = write(dir.path(), "badge.png", &png());
    let document = write(dir.path(), "form.pdf", &pdf());
    let server = TestServer::start(|request| {
        Reply::ollama(request, &Answer::new(r#"{"name": "Ada", "age": 36}"#))
    });
    let wrong = cargo_bin_cmd!("llm-extract")
        .args(["run", "--signature", PERSON, "--ollama", &server.url()])
        .args(["--model", "llava", "--pdf"])
        .arg(&image)
        .write_stdin("x")
        .output()
        .unwrap();
    let stderr = stderr_of(&wrong);
    assert_eq!(wrong.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("was given as a PDF but is image/png"),
        "{stderr}"
    );
    let refused = cargo_bin_cmd!("llm-extract")
        .args(["run", "--signature", PERSON, "--ollama", &server.url()])
        .args(["--model", "llava", "--pdf"])
        .arg(&document)
        .write_stdin("x")
        .output()
        .unwrap();
    let stderr = stderr_of(&refused);
    assert_eq!(refused.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("the Ollama backend cannot take PDF documents"),
        "{stderr}"
    );
    assert!(server.requests().is_empty(), "nothing may be sent");
}

#[test]
fn batch_lines_name_their_files_relative_to_the_input_and_a_directory_of_scans_is_read() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("scans")).unwrap();
    write(&dir.path().join("scans"), "a.png", &png());
    write(&dir.path().join("scans"), "b.pdf", &pdf());
    let input = dir.path().join("docs.jsonl");
    std::fs::write(
        &input,
        [
            json!({"id": "one", "text": "first", "images": ["scans/a.png"]}),
            json!({"id": "two", "pdf": "scans/b.pdf"}),
            json!({"id": "three", "text": "plain"}),
            json!({"id": "four", "images": "scans/missing.png"}),
        ]
        .map(|line| line.to_string())
        .join("\n"),
    )
    .unwrap();
    let server = openai_answering(r#"{"n": 1}"#);
    let out = dir.path().join("out.jsonl");
    let output = cargo_bin_cmd!("llm-extract")
        .args(["batch", "--signature", "{n :int}", "--input"])
        .arg(&input)
        .arg("--out")
        .arg(&out)
        .args(["--openai", &server.url(), "--model", "vision"])
        .args(["--concurrency", "1"])
        .output()
        .unwrap();
    // The missing file fails its document alone.
    assert_eq!(output.status.code(), Some(1), "{}", stderr_of(&output));
    let records = json_lines(&std::fs::read(&out).unwrap());
    let failed: Vec<&Value> = records.iter().filter(|r| r["ok"] == false).collect();
    assert_eq!(failed.len(), 1, "{records:?}");
    assert_eq!(failed[0]["id"], "four");
    assert!(
        failed[0]["error"].as_str().unwrap().contains("missing.png"),
        "{}",
        failed[0]
    );
    let mut requests = server.requests();
    assert_eq!(requests.len(), 3);
    requests.sort_by_key(|r| r.body.len());
    let plain = last_message(&requests[0]);
    assert_eq!(plain["content"], "plain");
    let contents: Vec<Value> = requests[1..]
        .iter()
        .map(|r| last_message(r)["content"].clone())
        .collect();
    let image = contents
        .iter()
        .find(|c| c[0]["type"] == "image_url")
        .expect("the line with an image");
    assert_eq!(data_url(&image[0]["image_url"]["url"], "image/png"), png());
    assert_eq!(image[1], json!({"type": "text", "text": "first"}));
    let document = contents
        .iter()
        .find(|c| c[0]["type"] == "file")
        .expect("the line with a PDF");
    assert_eq!(
        data_url(&document[0]["file"]["file_data"], "application/pdf"),
        pdf()
    );
    assert_eq!(document.as_array().unwrap().len(), 1, "no empty text part");

    // A directory of scans: each file is sent as itself.
    let server = openai_answering(r#"{"n": 2}"#);
    let out = dir.path().join("scans.jsonl");
    let output = cargo_bin_cmd!("llm-extract")
        .args(["batch", "--signature", "{n :int}", "--input"])
        .arg(dir.path().join("scans"))
        .arg("--out")
        .arg(&out)
        .args(["--openai", &server.url(), "--model", "vision"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    let mut sent: Vec<Vec<u8>> = server
        .requests()
        .iter()
        .map(|r| {
            let part = last_message(r)["content"][0].clone();
            match part["type"].as_str() {
                Some("image_url") => data_url(&part["image_url"]["url"], "image/png"),
                _ => data_url(&part["file"]["file_data"], "application/pdf"),
            }
        })
        .collect();
    sent.sort();
    let mut files = vec![png(), pdf()];
    files.sort();
    assert_eq!(sent, files);
}

#[test]
fn save_raw_keeps_sizes_and_hashes_of_the_files_not_their_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let image = write(dir.path(), "badge.png", &png());
    let server = openai_answering("no JSON here");
    let raw = dir.path().join("raw");
    let output = cargo_bin_cmd!("llm-extract")
        .args(["run", "--signature", PERSON, "--openai", &server.url()])
        .args(["--model", "vision", "--max-attempts", "1", "--image"])
        .arg(&image)
        .arg("--save-raw")
        .arg(&raw)
        .write_stdin("x")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", stderr_of(&output));
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(raw.join("run-media.json")).unwrap()).unwrap();
    assert_eq!(
        manifest,
        json!([{
            "name": "badge.png",
            "media_type": "image/png",
            "bytes": png().len(),
            "sha256": sha256(&png()),
        }])
    );
    let encoded = base64::engine::general_purpose::STANDARD.encode(png());
    for entry in std::fs::read_dir(&raw).unwrap() {
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        assert!(
            !text.contains(&encoded[..40]),
            "the bytes were saved: {text}"
        );
    }
}

/// The SHA-256 of `bytes` in lower-case hex, computed here rather than by the command.
fn sha256(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

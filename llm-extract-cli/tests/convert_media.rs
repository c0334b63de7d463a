//! `--convert-media` on `run`, through the real binary against the local test server speaking
//! Ollama's wire format (images, no PDFs): without the flag a PDF is refused before anything is sent;
//! with it the PDF arrives as its text layer, before the input's own text.

mod common;
#[path = "../../tests/support/pdf_writer.rs"]
mod pdf_writer;
#[path = "../../tests/support/mod.rs"]
mod support;

use assert_cmd::cargo::cargo_bin_cmd;
use common::stderr_of;
use support::media::last_message;
use support::{Answer, Reply, TestServer};

#[test]
fn a_pdf_ollama_cannot_take_is_sent_as_its_text_when_allowed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("badge.pdf");
    std::fs::write(
        &path,
        pdf_writer::write_pdf(&[&["Visitor badge: Ada Lovelace, age 36."]], false),
    )
    .unwrap();
    let server = TestServer::start(|request| {
        Reply::ollama(
            request,
            &Answer::new(r#"{"name": "Ada Lovelace", "age": 36}"#),
        )
    });
    let run = |convert: bool| {
        let mut command = cargo_bin_cmd!("llm-extract");
        command
            .args(["run", "--signature", "{name :string, age :int}"])
            .args(["--ollama", &server.url(), "--model", "llava", "--pdf"])
            .arg(&path);
        if convert {
            command.arg("--convert-media");
        }
        command.write_stdin("Who is it?").output().unwrap()
    };
    let refused = run(false);
    assert_ne!(refused.status.code(), Some(0), "{}", stderr_of(&refused));
    assert!(server.requests().is_empty(), "nothing may be sent");
    let converted = run(true);
    let stderr = stderr_of(&converted);
    assert!(converted.status.success(), "{stderr}");
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let message = last_message(&requests[0]);
    let content = message["content"].as_str().unwrap();
    assert!(
        content.contains(
            "[PDF \"badge.pdf\", its text, 1 page(s)]\nVisitor badge: Ada Lovelace, age 36."
        ),
        "{content}"
    );
    assert!(content.ends_with("Who is it?"), "{content}");
    assert!(message.get("images").is_none(), "{message}");
    let out = String::from_utf8_lossy(&converted.stdout);
    assert!(out.contains("Ada Lovelace"), "{out}");
}

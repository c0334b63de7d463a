//! Where the `llm-extract` binary sends credentials: a key in its environment, named for a server,
//! never follows that server's redirect to another host or port (127.0.0.2 is another host), for every
//! backend flag; credentials written into a URL go over plain http to no other machine, refused before
//! anything is sent.

mod common;
#[path = "../../tests/support/mod.rs"]
mod support;

use assert_cmd::cargo::cargo_bin_cmd;
use common::stderr_of;
use support::{Reply, TestServer};

const PERSON: &str = "{name :string, age :int}";
const KEY: &str = "sk-cli-redirect-0123456789-SECRET";
const PASSWORD: &str = "pw-cli-0123456789";

/// `llm-extract run` asking model `m` for a [`PERSON`] without retries, every provider's own key
/// variable holding [`KEY`], for a test to add its backend to.
fn run_person() -> assert_cmd::Command {
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
        .env("OPENAI_API_KEY", KEY)
        .env("ANTHROPIC_API_KEY", KEY)
        .env("GEMINI_API_KEY", KEY)
        .env_remove("OLLAMA_HOST")
        .write_stdin("Ada, 36");
    command
}

#[test]
fn a_key_in_the_environment_never_follows_a_redirect_to_another_host() {
    let elsewhere = TestServer::start_on("127.0.0.2", |_| Reply::text(200, "{}"));
    let target = elsewhere.url();
    for status in [301, 302, 307, 308] {
        let target = target.clone();
        let first = TestServer::start(move |request| {
            let location = format!("{target}{}", request.path);
            Reply::text(status, "moved").with_header("location", &location)
        });
        let url = first.url();
        let port = url.rsplit(':').next().unwrap_or_default().to_owned();
        let ollama = format!("http://user:{PASSWORD}@127.0.0.1:{port}");
        for backend in [
            vec![
                "--openai".to_owned(),
                format!("{url}/v1"),
                "--api-key-env".to_owned(),
                "OPENAI_API_KEY".to_owned(),
            ],
            vec![
                format!("--anthropic={url}"),
                "--api-key-env".to_owned(),
                "ANTHROPIC_API_KEY".to_owned(),
            ],
            vec![
                format!("--gemini={url}"),
                "--api-key-env".to_owned(),
                "GEMINI_API_KEY".to_owned(),
            ],
            vec!["--ollama".to_owned(), ollama],
        ] {
            let output = run_person().args(&backend).output().unwrap();
            let stderr = stderr_of(&output);
            assert_eq!(output.status.code(), Some(3), "{backend:?}: {stderr}");
            assert!(stderr.contains("redirected"), "{backend:?}: {stderr}");
            assert!(stderr.contains(&elsewhere.url()), "{backend:?}: {stderr}");
            for secret in [KEY, PASSWORD] {
                assert!(!stderr.contains(secret), "{secret} in {stderr}");
            }
        }
        // The first server had the credentials; the other never got a byte.
        let sent = String::from_utf8_lossy(&first.raw()).into_owned();
        assert!(sent.contains(KEY), "{sent}");
        let leaked = String::from_utf8_lossy(&elsewhere.raw()).into_owned();
        assert!(
            leaked.is_empty(),
            "{status}: the other host received {leaked}"
        );
    }
}

#[test]
fn credentials_in_a_url_go_over_plain_http_to_no_other_machine() {
    // `.invalid` names no host: the refusal must come before any lookup or connection, which would
    // fail with another error (exit 3).
    for backend in [
        vec![
            "--openai".to_owned(),
            format!("http://user:{PASSWORD}@node.invalid:1/v1"),
        ],
        vec![
            "--openai".to_owned(),
            format!("http://node.invalid:1/v1?api_key={PASSWORD}"),
        ],
        vec![format!("--anthropic=http://user:{PASSWORD}@node.invalid:1")],
        vec![format!("--gemini=http://node.invalid:1?key={PASSWORD}")],
        vec![
            "--ollama".to_owned(),
            format!("http://user:{PASSWORD}@node.invalid:1"),
        ],
        vec![
            "--ollama".to_owned(),
            format!("user:{PASSWORD}@ollama.localhost"),
        ],
    ] {
        let output = run_person().args(&backend).output().unwrap();
        let stderr = stderr_of(&output);
        assert_eq!(output.status.code(), Some(2), "{backend:?}: {stderr}");
        assert!(stderr.contains("plain http"), "{backend:?}: {stderr}");
        assert!(
            stderr.contains("--allow-insecure-key"),
            "{backend:?}: {stderr}"
        );
        assert!(!stderr.contains(PASSWORD), "{backend:?}: {stderr}");
    }
    // Allowed on purpose, the credentials go: the name then fails to resolve, as an unreachable
    // server's would.
    let output = run_person()
        .args([
            "--ollama",
            &format!("http://user:{PASSWORD}@node.invalid:1"),
        ])
        .arg("--allow-insecure-key")
        .output()
        .unwrap();
    let stderr = stderr_of(&output);
    assert_eq!(output.status.code(), Some(3), "{stderr}");
    assert!(!stderr.contains("plain http"), "{stderr}");
    assert!(!stderr.contains(PASSWORD), "{stderr}");
    // The same from OLLAMA_HOST, the server of a command without backend flags.
    let output = run_person()
        .env(
            "OLLAMA_HOST",
            format!("http://user:{PASSWORD}@node.invalid:1"),
        )
        .output()
        .unwrap();
    let stderr = stderr_of(&output);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("plain http"), "{stderr}");
    assert!(!stderr.contains(PASSWORD), "{stderr}");
}

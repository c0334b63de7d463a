//! `llm-extract doc`, run for real against the local test server, whose stand-in model names the
//! people it knows that occur whole in the chunk it was sent.

mod browser;
mod common;
#[path = "../../tests/support/pdf_writer.rs"]
mod pdf_writer;
#[path = "../../tests/support/mod.rs"]
mod support;

use assert_cmd::cargo::cargo_bin_cmd;
use common::json_lines;
use serde_json::{json, Value};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use support::{Answer, Reply, Request, TestServer};

const STORY: &str = include_str!("../../tests/data/a-case-of-identity.txt");
const PEOPLE: &[&str] = &[
    "Sherlock Holmes",
    "Miss Mary Sutherland",
    "Mr. Hosmer Angel",
];
const SIGNATURE: &str = "{name :string}";

/// `doc` on [`SIGNATURE`] with `name` grounded and keyed.
const KEYED_DOC: [&str; 7] = [
    "doc",
    "--signature",
    SIGNATURE,
    "--grounded",
    "name",
    "--key",
    "name",
];

fn first_user_message(request: &Request) -> String {
    request
        .messages()
        .into_iter()
        .find(|(role, _)| role == "user")
        .map(|(_, content)| content)
        .unwrap_or_default()
}

fn reader() -> TestServer {
    TestServer::start(|request| {
        let chunk = first_user_message(request);
        let items: Vec<String> = PEOPLE
            .iter()
            .filter(|name| chunk.contains(*name))
            .map(|name| json!({ "name": name }).to_string())
            .collect();
        let answer = format!(r#"{{"items": [{}]}}"#, items.join(","));
        Reply::ollama(request, &Answer::new(answer))
    })
}

/// `llm-extract doc` on [`SIGNATURE`] with `name` grounded (and keyed, with `key`) against `server`,
/// keeping its resumable state in `cache` (a temporary directory, never the user's).
fn doc(server: &TestServer, key: bool, cache: &std::path::Path) -> assert_cmd::Command {
    let mut command = cargo_bin_cmd!("llm-extract");
    command
        .env("XDG_CACHE_HOME", cache)
        .args(["doc", "--signature", SIGNATURE, "--grounded", "name"])
        .args(if key { &["--key", "name"][..] } else { &[][..] })
        .args(["--ollama", &server.url()]);
    command
}

/// Checks that `lines` name each of [`PEOPLE`] once, in order of first mention, each with exact spans
/// that slice its name out of `text`; returns how many spans there are.
fn check_people(lines: &[Value], text: &str) -> usize {
    let names: Vec<&str> = lines
        .iter()
        .filter_map(|l| l["value"]["name"].as_str())
        .collect();
    assert_eq!(names, PEOPLE, "in order of first mention, once each");
    let mut spans = 0;
    for line in lines {
        for span in line["spans"].as_array().unwrap() {
            let start = span["bytes"]["start"].as_u64().unwrap() as usize;
            let end = span["bytes"]["end"].as_u64().unwrap() as usize;
            assert_eq!(&text[start..end], line["value"]["name"].as_str().unwrap());
            assert_eq!(span["match"]["kind"], "exact");
            spans += 1;
        }
    }
    spans
}

#[test]
fn doc_prints_each_person_once_with_spans_into_the_file_and_a_review_page() {
    let server = reader();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("story.txt");
    std::fs::write(&path, STORY).unwrap();
    let html = dir.path().join("review.html");
    let output = doc(&server, true, dir.path())
        .args(["--chunk-tokens", "1000", "--concurrency", "2"])
        .arg("--html")
        .arg(&html)
        .arg(&path)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let lines = json_lines(&output.stdout);
    let spans = check_people(&lines, STORY);
    assert!(server.hits() >= 13, "{} requests", server.hits());
    assert!(stderr.contains("0 failed"), "{stderr}");
    let page = std::fs::read_to_string(&html).unwrap();
    assert_eq!(page.matches("<mark ").count(), spans);
    assert!(page.contains(&format!("data-items=\"{}\"", PEOPLE.len())));
}

#[test]
fn the_review_page_shows_markup_in_the_document_as_text() {
    let server = reader();
    let dir = tempfile::tempdir().unwrap();
    let html = dir.path().join("review.html");
    let text = "<script>alert('x')</script> &amp; Sherlock Holmes <b>bold</b>";
    let output = doc(&server, false, dir.path())
        .arg("--html")
        .arg(&html)
        .write_stdin(text)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        !page.contains("<script>") && !page.contains("<b>"),
        "{page}"
    );
    assert!(page.contains("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp;amp; "));
    assert_eq!(page.matches("<mark ").count(), 1);
}

#[test]
fn bad_documents_are_clear_errors_or_empty_results() {
    let server = reader();
    let output = cargo_bin_cmd!("llm-extract")
        .args(["doc", "--signature", SIGNATURE, "--ollama", &server.url()])
        .write_stdin(vec![b'a', 0xff, b'b'])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("not UTF-8") && stderr.contains("offset 1"),
        "{stderr}"
    );

    for blank in ["", "  \n\t\r\n"] {
        let output = cargo_bin_cmd!("llm-extract")
            .args(["doc", "--signature", SIGNATURE, "--ollama", &server.url()])
            .write_stdin(blank)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(json_lines(&output.stdout).is_empty());
    }

    let output = cargo_bin_cmd!("llm-extract")
        .args([
            "doc",
            "--signature",
            SIGNATURE,
            "--grounded",
            "nope",
            "--ollama",
            &server.url(),
        ])
        .write_stdin("text")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
}

#[test]
fn a_50_mb_document_with_nul_bytes_is_read_whole() {
    let server = reader();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.txt");
    let copies = 50 * 1024 * 1024 / STORY.len() + 1;
    let mut big = STORY.repeat(copies);
    big.insert_str(STORY.len() / 2, "\0\0");
    std::fs::write(&path, &big).unwrap();
    let output = doc(&server, true, dir.path())
        .args(["--chunk-tokens", "20000", "--concurrency", "2"])
        .arg(&path)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    check_people(&json_lines(&output.stdout), &big);
}

/// A document of about `bytes` bytes: [`STORY`] once, then copies of it in which nobody is named, with
/// NUL bytes: what `doc` finds in it (and prints) is the same whatever its size.
fn padded_story(bytes: usize) -> String {
    let unnamed = STORY
        .replace("Holmes", "Hxlmes")
        .replace("Sutherland", "Sxtherland")
        .replace("Angel", "Angxl");
    let mut text = String::with_capacity(bytes + STORY.len());
    text.push_str(STORY);
    while text.len() < bytes {
        text.push_str(&unnamed);
        text.push_str("\0\0\r\n");
    }
    text
}

/// The peak resident memory, in KiB, of `llm-extract doc` on the file at `path` (given as its path,
/// or on standard input), and what it printed. The peak is the child's `VmHWM` (the high-water mark of
/// its own memory since it started the program), read every few milliseconds until it exits: it only
/// rises, so what is missed is at most a rise in the last moments. (`wait4`'s `ru_maxrss` would be
/// simpler but counts the test process's memory too, which the child is forked from.)
#[cfg(target_os = "linux")]
fn doc_peak_kib(
    server: &TestServer,
    path: &std::path::Path,
    stdin: bool,
    cache: &std::path::Path,
) -> (u64, Vec<Value>) {
    use std::process::{Command, Stdio};
    let out = cache.join(format!("out-{stdin}.jsonl"));
    let err = cache.join(format!("err-{stdin}.txt"));
    let mut command = Command::new(env!("CARGO_BIN_EXE_llm-extract"));
    command
        .env("XDG_CACHE_HOME", cache)
        .args(KEYED_DOC)
        .args(["--ollama", &server.url(), "--chunk-tokens", "20000"])
        .args(["--concurrency", "2", "--no-resume"])
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap());
    if stdin {
        command.stdin(std::fs::File::open(path).unwrap());
    } else {
        command.arg(path).stdin(Stdio::null());
    }
    let mut child = command.spawn().unwrap();
    let status = format!("/proc/{}/status", child.id());
    let mut peak = 0;
    let exit = loop {
        let hwm = std::fs::read_to_string(&status)
            .unwrap_or_default()
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|kib| kib.trim().trim_end_matches("kB").trim().parse::<u64>().ok());
        peak = peak.max(hwm.unwrap_or(0));
        if let Some(exit) = child.try_wait().unwrap() {
            break exit;
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    };
    let stderr = std::fs::read_to_string(&err).unwrap();
    assert!(exit.success(), "{stderr}");
    assert!(peak > 0, "VmHWM was never read");
    (peak, json_lines(&std::fs::read(&out).unwrap()))
}

#[test]
#[cfg(target_os = "linux")]
fn memory_is_bounded_by_the_chunk_size_not_the_document_size() {
    let server = reader();
    let dir = tempfile::tempdir().unwrap();
    let small = padded_story(5 * 1024 * 1024);
    let large = padded_story(50 * 1024 * 1024);
    let small_path = dir.path().join("small.txt");
    let large_path = dir.path().join("large.txt");
    std::fs::write(&small_path, &small).unwrap();
    std::fs::write(&large_path, &large).unwrap();
    let mut printed = Vec::new();
    for stdin in [false, true] {
        let (small_kib, small_lines) = doc_peak_kib(&server, &small_path, stdin, dir.path());
        let (large_kib, large_lines) = doc_peak_kib(&server, &large_path, stdin, dir.path());
        eprintln!("peak memory (stdin: {stdin}): 5 MB {small_kib} KiB, 50 MB {large_kib} KiB");
        check_people(&small_lines, &small);
        check_people(&large_lines, &large);
        assert_eq!(
            small_lines, large_lines,
            "the same people at the same offsets"
        );
        // 45 MB more document; what is in memory is a window of about a chunk (60 KB) and a read (64 KiB)
        // per reading, and the chunks in flight.
        assert!(
            large_kib < small_kib + 4 * 1024,
            "peak memory on 50 MB: {large_kib} KiB, on 5 MB: {small_kib} KiB (stdin: {stdin})"
        );
        printed.push(large_lines);
    }
    assert_eq!(
        printed[0], printed[1],
        "a path and standard input give the same"
    );
}

#[test]
fn the_review_page_loads_in_a_real_browser_with_every_highlight() {
    let server = reader();
    let dir = tempfile::tempdir().unwrap();
    let html = dir.path().join("review.html");
    let output = doc(&server, true, dir.path())
        .args(["--chunk-tokens", "1000"])
        .arg("--html")
        .arg(&html)
        .write_stdin(STORY)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let spans: usize = json_lines(&output.stdout)
        .iter()
        .map(|l| l["spans"].as_array().map_or(0, Vec::len))
        .sum();
    let dom = browser::dom(&html);
    // The DOM the browser built (not the file): the page parsed, with one element per highlight.
    assert!(dom.contains("id=\"summary\""), "{dom:.500}");
    assert_eq!(dom.matches("<mark ").count(), spans);
    assert!(dom.contains("Sherlock Holmes</mark>"));
    browser::assert_screenshot(&html, &dir.path().join("review.png"));
}

#[test]
fn an_invented_name_is_re_asked_then_kept_as_not_found_or_dropped() {
    let server = TestServer::start(|request| {
        Reply::ollama(
            request,
            &Answer::new(r#"{"items": [{"name": "Jon Smith"}]}"#),
        )
    });
    let cache = tempfile::tempdir().unwrap();
    let output = doc(&server, false, cache.path())
        .write_stdin("Sherlock Holmes sat alone.")
        .output()
        .unwrap();
    assert!(output.status.success());
    let lines = json_lines(&output.stdout);
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0]["spans"][0]["match"]["kind"], "not_found");
    assert_eq!(server.hits(), 3, "the first answer and two repairs");
    let repair = server.requests()[1].last_message();
    assert!(
        repair.contains(r#""Jon Smith" does not occur in the text"#),
        "{repair}"
    );

    let output = doc(&server, false, cache.path())
        .arg("--require-grounding")
        .write_stdin("Sherlock Holmes sat alone.")
        .output()
        .unwrap();
    assert!(output.status.success());
    assert!(json_lines(&output.stdout).is_empty());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("1 answer line(s) left out"), "{stderr}");
}

/// [`reader`] that counts its calls and answers with an error for the chunk that holds "Hosmer Angel"
/// while the flag is set (it starts set): the call count, the flag, the server. It speaks Ollama's wire
/// format, and OpenAI's on `/v1/chat/completions`.
fn cursed_reader() -> (Arc<AtomicUsize>, Arc<AtomicBool>, TestServer) {
    let calls = Arc::new(AtomicUsize::new(0));
    let broken = Arc::new(AtomicBool::new(true));
    let (counted, failing) = (calls.clone(), broken.clone());
    let server = TestServer::start(move |request| {
        counted.fetch_add(1, Ordering::SeqCst);
        let openai = request.path.ends_with("/chat/completions");
        let chunk = first_user_message(request);
        if failing.load(Ordering::SeqCst) && chunk.contains("Hosmer Angel") {
            return if openai {
                Reply::openai_error(400, "the chunk is cursed")
            } else {
                Reply::ollama_error(400, "the chunk is cursed")
            };
        }
        let items: Vec<String> = PEOPLE
            .iter()
            .filter(|name| chunk.contains(*name))
            .map(|name| json!({ "name": name }).to_string())
            .collect();
        let answer = Answer::new(format!(r#"{{"items": [{}]}}"#, items.join(",")));
        if openai {
            Reply::openai(request, &answer)
        } else {
            Reply::ollama(request, &answer)
        }
    });
    (calls, broken, server)
}

/// `doc` on the story against `server` (keyed, one attempt per chunk, state in `cache`) with `extra`.
fn story_run(server: &TestServer, cache: &std::path::Path, extra: &[&str]) -> std::process::Output {
    doc(server, true, cache)
        .args(["--chunk-tokens", "1000", "--max-attempts", "1"])
        .args(extra)
        .write_stdin(STORY)
        .output()
        .unwrap()
}

/// The directory where the one run kept in `cache` saved its chunks, and how many it holds.
fn saved_chunks(cache: &std::path::Path) -> (std::path::PathBuf, usize) {
    let state = cache.join("llm-extract").join("doc");
    let saved = std::fs::read_dir(state)
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path();
    let kept = std::fs::read_dir(&saved).unwrap().count();
    (saved, kept)
}

#[test]
fn a_rerun_asks_only_the_chunks_that_failed_and_then_forgets_them() {
    let (calls, broken, server) = cursed_reader();
    let cache = tempfile::tempdir().unwrap();
    let run = |extra: &[&str]| story_run(&server, cache.path(), extra);

    let first = run(&[]);
    assert_eq!(first.status.code(), Some(1), "a chunk failed");
    let asked = calls.swap(0, Ordering::SeqCst);
    let (saved, kept) = saved_chunks(cache.path());
    assert!(kept > 0 && kept < asked, "{kept} of {asked} chunks kept");

    broken.store(false, Ordering::SeqCst);
    let second = run(&[]);
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert!(second.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!("resuming: {kept} chunk(s)")),
        "{stderr}"
    );
    assert_eq!(
        calls.swap(0, Ordering::SeqCst),
        asked - kept,
        "only the failed chunks"
    );
    let names: Vec<String> = json_lines(&second.stdout)
        .iter()
        .filter_map(|l| l["value"]["name"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(names, PEOPLE);
    assert!(!saved.exists(), "a complete run forgets its chunks");

    // --no-resume asks everything.
    broken.store(true, Ordering::SeqCst);
    assert_eq!(run(&[]).status.code(), Some(1));
    calls.store(0, Ordering::SeqCst);
    broken.store(false, Ordering::SeqCst);
    assert!(run(&["--no-resume"]).status.success());
    assert_eq!(calls.load(Ordering::SeqCst), asked);
}

#[test]
fn a_template_sends_its_context_with_every_chunk_and_keys_the_saved_chunks() {
    let (calls, broken, server) = cursed_reader();
    let cache = tempfile::tempdir().unwrap();
    let run = |template: &str| story_run(&server, cache.path(), &["--template", template]);
    let context = "Glossary: a client is whoever consults the detective.\n\nText:\n";

    // One chunk fails: the others are kept, under this template.
    assert_eq!(
        run(&format!("{context}{{{{text}}}}")).status.code(),
        Some(1)
    );
    let asked = calls.swap(0, Ordering::SeqCst);
    let requests = server.requests();
    assert_eq!(requests.len(), asked);
    for request in &requests {
        let sent = first_user_message(request);
        assert!(sent.starts_with(context), "{sent}");
        assert!(sent.len() > context.len() + 1000, "the chunk follows");
    }

    // Another template: nothing of the first one's is reused; the spans still point into the document.
    broken.store(false, Ordering::SeqCst);
    let other = run("Another context.\n\n{{text}}");
    let stderr = String::from_utf8_lossy(&other.stderr);
    assert!(other.status.success(), "{stderr}");
    assert!(!stderr.contains("resuming"), "{stderr}");
    assert_eq!(
        calls.load(Ordering::SeqCst),
        asked,
        "every chunk asked again"
    );
    check_people(&json_lines(&other.stdout), STORY);
}

#[test]
fn a_rerun_with_more_passes_keeps_the_chunks_of_the_first_pass() {
    let (calls, broken, server) = cursed_reader();
    let cache = tempfile::tempdir().unwrap();
    let run = |extra: &[&str]| story_run(&server, cache.path(), extra);

    // Every chunk of two passes, asked from scratch.
    broken.store(false, Ordering::SeqCst);
    assert!(run(&["--passes", "2", "--no-resume"]).status.success());
    let two_passes = calls.swap(0, Ordering::SeqCst);

    // One pass, with a chunk failing: the others are kept.
    broken.store(true, Ordering::SeqCst);
    assert_eq!(run(&[]).status.code(), Some(1), "a chunk failed");
    let one_pass = calls.swap(0, Ordering::SeqCst);
    let (saved, kept) = saved_chunks(cache.path());
    assert!(
        kept > 0 && kept < one_pass,
        "{kept} of {one_pass} chunks kept"
    );
    assert!(two_passes > one_pass, "{two_passes} chunks in two passes");

    // Two passes now: the kept chunks of the first pass are not asked again.
    broken.store(false, Ordering::SeqCst);
    let second = run(&["--passes", "2"]);
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert!(second.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!("resuming: {kept} chunk(s)")),
        "{stderr}"
    );
    assert_eq!(calls.load(Ordering::SeqCst), two_passes - kept);
    assert!(!saved.exists(), "a complete run forgets its chunks");
}

/// The models the requests since the last call asked for, once each.
fn models_asked(server: &TestServer, seen: &mut usize) -> Vec<String> {
    let requests = server.requests();
    let mut models: Vec<String> = requests
        .iter()
        .skip(*seen)
        .filter_map(|r| r.json["model"].as_str().map(str::to_owned))
        .collect();
    *seen = requests.len();
    models.dedup();
    models
}

#[test]
fn a_model_chosen_in_the_environment_keys_the_saved_chunks() {
    let (calls, _broken, server) = cursed_reader();
    let openai_url = format!("{}/v1", server.url());
    let mut seen = 0;
    // (backend flags, the variable naming the model): the model is never a flag here.
    let backends = [
        (vec!["--ollama".to_owned(), server.url()], "OLLAMA_MODEL"),
        (vec!["--openai".to_owned(), openai_url], "OPENAI_MODEL"),
    ];
    for (flags, variable) in backends {
        let cache = tempfile::tempdir().unwrap();
        let run = |model: &str| {
            cargo_bin_cmd!("llm-extract")
                .env("XDG_CACHE_HOME", cache.path())
                .env_remove("OPENAI_API_KEY")
                .env(variable, model)
                .args(["doc", "--signature", SIGNATURE, "--grounded", "name"])
                .args([
                    "--key",
                    "name",
                    "--chunk-tokens",
                    "1000",
                    "--max-attempts",
                    "1",
                ])
                .args(&flags)
                .write_stdin(STORY)
                .output()
                .unwrap()
        };

        // One chunk fails: the others are kept, under model a.
        assert_eq!(run("model-a").status.code(), Some(1), "{variable}");
        let asked = calls.swap(0, Ordering::SeqCst);
        assert_eq!(models_asked(&server, &mut seen), ["model-a"]);

        // Model b, named the same way: nothing of model a's is reused.
        let other = run("model-b");
        let stderr = String::from_utf8_lossy(&other.stderr);
        assert_eq!(other.status.code(), Some(1), "{stderr}");
        assert!(!stderr.contains("resuming"), "{variable}: {stderr}");
        assert_eq!(
            calls.swap(0, Ordering::SeqCst),
            asked,
            "{variable}: every chunk asked"
        );
        assert_eq!(models_asked(&server, &mut seen), ["model-b"]);

        // Model b again: its own chunks are.
        let again = run("model-b");
        let stderr = String::from_utf8_lossy(&again.stderr);
        assert!(stderr.contains("resuming"), "{variable}: {stderr}");
        assert!(
            calls.swap(0, Ordering::SeqCst) < asked,
            "{variable}: only the failed chunk"
        );
        models_asked(&server, &mut seen);
    }
}

#[test]
fn chunks_stay_saved_until_the_items_are_written() {
    let (calls, broken, server) = cursed_reader();
    broken.store(false, Ordering::SeqCst);
    let cache = tempfile::tempdir().unwrap();
    // Standard output is a full disk: every chunk succeeds, but the items cannot be printed.
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_llm-extract"))
        .env("XDG_CACHE_HOME", cache.path())
        .args(KEYED_DOC)
        .args([
            "--chunk-tokens",
            "1000",
            "--max-attempts",
            "1",
            "--ollama",
            &server.url(),
        ])
        .stdin(std::fs::File::open(story_file(cache.path())).unwrap())
        .stdout(
            std::fs::OpenOptions::new()
                .write(true)
                .open("/dev/full")
                .unwrap(),
        )
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(4), "{stderr}");
    assert!(
        stderr.contains("cannot write to standard output"),
        "{stderr}"
    );
    let asked = calls.swap(0, Ordering::SeqCst);
    let (saved, kept) = saved_chunks(cache.path());
    assert_eq!(kept, asked, "every chunk kept");

    // The rerun asks nothing, prints everything, then forgets the chunks.
    let rerun = story_run(&server, cache.path(), &[]);
    let stderr = String::from_utf8_lossy(&rerun.stderr);
    assert!(rerun.status.success(), "{stderr}");
    assert_eq!(calls.load(Ordering::SeqCst), 0, "{stderr}");
    check_people(&json_lines(&rerun.stdout), STORY);
    assert!(!saved.exists(), "a complete run forgets its chunks");
}

/// [`STORY`] in a file under `dir`.
fn story_file(dir: &std::path::Path) -> std::path::PathBuf {
    let path = dir.join("story.txt");
    std::fs::write(&path, STORY).unwrap();
    path
}

#[test]
fn doc_exits_3_when_no_chunk_reaches_the_backend() {
    let url = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}", listener.local_addr().unwrap())
    };
    let cache = tempfile::tempdir().unwrap();
    let output = cargo_bin_cmd!("llm-extract")
        .env("XDG_CACHE_HOME", cache.path())
        .args(["doc", "--signature", SIGNATURE, "--chunk-tokens", "1000"])
        .args(["--ollama", &url, "--retries", "0"])
        .write_stdin(STORY)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains("failed: ") && stderr.contains("0 items"),
        "{stderr}"
    );

    // Some chunks answered: the items are printed and the exit code is 1.
    let (_calls, _broken, server) = cursed_reader();
    let some_answered = story_run(&server, cache.path(), &[]);
    assert_eq!(some_answered.status.code(), Some(1));
}

/// A PDF's pages (written by hand, known text on known pages): each person's spans slice its name out
/// of the PDF's text as the command read it, and name the page the name is on and its offsets within
/// that page's text; the review page shows the page boundaries and each value's page.
#[test]
fn doc_reads_a_pdf_page_by_page_and_names_the_page_of_each_span() {
    let server = reader();
    let dir = tempfile::tempdir().unwrap();
    let pages: &[&[&str]] = &[
        &[
            "A Case of Identity, a summary.",
            "Sherlock Holmes sat by the fire.",
        ],
        &["A visitor came: Miss Mary Sutherland, a typist."],
        &[
            "She was to marry Mr. Hosmer Angel.",
            "He vanished at the church.",
        ],
    ];
    // Named without `.pdf`: the content says it is one.
    let path = dir.path().join("case");
    std::fs::write(&path, pdf_writer::write_pdf(pages, false)).unwrap();
    let html = dir.path().join("review.html");
    let output = doc(&server, true, dir.path())
        .args(["--chunk-tokens", "40"])
        .arg("--html")
        .arg(&html)
        .arg(&path)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let lines = json_lines(&output.stdout);
    let names: Vec<&str> = lines
        .iter()
        .filter_map(|l| l["value"]["name"].as_str())
        .collect();
    assert_eq!(names, PEOPLE);
    for (line, page) in lines.iter().zip([1, 2, 3]) {
        let name = line["value"]["name"].as_str().unwrap();
        let located = line["pages"].as_array().unwrap();
        assert_eq!(located.len(), line["spans"].as_array().unwrap().len());
        for at in located {
            assert_eq!(at["page"], page, "{name}");
            assert_eq!(at["last_page"], page, "{name}");
            let start = at["bytes"]["start"].as_u64().unwrap() as usize;
            let end = at["bytes"]["end"].as_u64().unwrap() as usize;
            let text = pages[page - 1].join("\n");
            assert_eq!(&text[start..end], name);
        }
    }
    let review = std::fs::read_to_string(&html).unwrap();
    for page in 1..=3 {
        assert!(review.contains(&format!("data-page=\"{page}\">page {page}</div>")));
    }
    assert!(review.contains("(exact, page 2)"), "{review}");
}

/// A scan (pages that are only images) and a file that is not a readable PDF are usage errors that say
/// what to do, never a crash.
#[test]
fn doc_refuses_a_scanned_or_broken_pdf_clearly() {
    let server = reader();
    let dir = tempfile::tempdir().unwrap();
    let scan = dir.path().join("scan.pdf");
    std::fs::write(&scan, pdf_writer::write_pdf(&[&[]], true)).unwrap();
    let output = doc(&server, false, dir.path()).arg(&scan).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("no text layer") && stderr.contains("reads images"),
        "{stderr}"
    );
    let broken = dir.path().join("broken.pdf");
    std::fs::write(&broken, b"%PDF-1.7\n1 0 obj << /Type /Catalog").unwrap();
    let output = doc(&server, false, dir.path())
        .arg(&broken)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("malformed"), "{stderr}");
    assert!(!stderr.contains("panicked at"), "{stderr}");
    assert_eq!(server.hits(), 0);
}

/// A web page on standard input (detected by its start): its main text only, scripts, styles,
/// navigation, banner and footer left out, entities decoded; spans exact in that text, each with the
/// nearest heading above it.
#[test]
fn doc_reads_a_web_page_main_text_with_the_heading_of_each_span() {
    let server = reader();
    let dir = tempfile::tempdir().unwrap();
    let page = "<!DOCTYPE html><html><head><style>h1{}</style><script>var n = 'Mr. Hosmer Angel';</script>\
        </head><body><header>Sherlock Holmes fan site</header><nav>Miss Mary Sutherland | Home</nav>\
        <main><h1>The client</h1><p>Miss Mary Sutherland &amp; her typewriter.</p>\
        <h2>The groom</h2><p>Mr.&nbsp;Hosmer Angel vanished. Sherlock Holmes &lt;knew&gt;.</p></main>\
        <footer>Mr. Hosmer Angel</footer></body></html>";
    let output = doc(&server, true, dir.path())
        .write_stdin(page)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let lines = json_lines(&output.stdout);
    let text = "The client\n\nMiss Mary Sutherland & her typewriter.\n\nThe groom\n\n\
                Mr.\u{a0}Hosmer Angel vanished. Sherlock Holmes <knew>.";
    let found: Vec<(&str, &str)> =
        lines
            .iter()
            .flat_map(|line| {
                let name = line["value"]["name"].as_str().unwrap();
                let headings = line["headings"].as_array().unwrap();
                line["spans"].as_array().unwrap().iter().zip(headings).map(
                    move |(span, heading)| {
                        let start = span["bytes"]["start"].as_u64().unwrap() as usize;
                        let end = span["bytes"]["end"].as_u64().unwrap() as usize;
                        assert_eq!(&text[start..end].replace('\u{a0}', " "), name);
                        (name, heading.as_str().unwrap())
                    },
                )
            })
            .collect();
    assert_eq!(
        found,
        [
            ("Miss Mary Sutherland", "The client"),
            ("Sherlock Holmes", "The groom")
        ]
    );
}

//! The response cache over a local OpenAI-compatible server: a rerun of a batch is answered from the
//! cache with no request to the server; an answer that failed validation is never stored, so its
//! document is asked again; a hit is marked in the report and on the attempt's span; another key is
//! another cache; and no key is ever written into the cache's files.

use crate::support;

use llm_extract::batch::{Batch, Record};
use llm_extract::extract::Extractor;
use llm_extract::llm::{Cache, LlmExt, OpenAiCompatible, ResponseStore, RetryPolicy};
use llm_extract::Schema;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use support::types::Person;
use support::{Answer, Reply, Request, TestServer};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record as Recorded};
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::Layer;

const KEY: &str = "sk-test-response-cache-0123456789-SECRET";

/// The answer to a document: `Ada` at the age it states, or an age that is not a number for the
/// document `bad`, every time (the repair fails too).
fn answer(request: &Request) -> Reply {
    let text = request
        .messages()
        .first()
        .map(|m| m.1.clone())
        .unwrap_or_default();
    let document = request
        .messages()
        .into_iter()
        .rev()
        .find(|(role, _)| role == "user");
    let document = document.map(|m| m.1).unwrap_or(text);
    let age: String = document.chars().filter(char::is_ascii_digit).collect();
    let json = match document.contains("bad") {
        true => r#"{"name": "Ada", "age": "old"}"#.to_owned(),
        false => format!(r#"{{"name": "Ada", "age": {age}}}"#),
    };
    Reply::openai(request, &Answer::new(json).usage(50, 9))
}

/// A backend at `server` with `key`, behind the cache in `dir`.
fn cached(server: &TestServer, key: &str, dir: &Path) -> Cache<OpenAiCompatible> {
    let llm = OpenAiCompatible::builder(server.url(), "m")
        .api_key(key)
        .retry(RetryPolicy::none())
        .build()
        .unwrap();
    llm.with_cache(ResponseStore::open(dir).unwrap())
}

fn records() -> Vec<Record> {
    let mut records: Vec<Record> = (0..6)
        .map(|i| Record::new(format!("d{i}"), format!("Ada is {} years old.", 30 + i)))
        .collect();
    records.push(Record::new("bad", "Ada is old, a bad document."));
    records
}

#[tokio::test]
async fn a_rerun_is_answered_from_the_cache_and_a_failed_answer_never_is() {
    let spans = Spans::default();
    // The global default (a thread-local one can miss a callsite another thread cached as "never"):
    // the only test of this binary.
    tracing::subscriber::set_global_default(tracing_subscriber::registry().with(spans.clone()))
        .expect("the only subscriber of this test binary");
    let server = TestServer::start(answer);
    let dir = tempfile::tempdir().unwrap();
    let batch = |llm| Batch::new(Extractor::new(llm).max_attempts(2)).concurrency(3);
    let first = batch(cached(&server, KEY, dir.path()))
        .extract_many(Person::schema(), records(), |_| {})
        .await;
    // Six documents once each, the bad one twice (its first answer and the failed repair).
    assert_eq!(server.hits(), 8);
    assert!(first.iter().all(|r| r.id == "bad" || r.is_ok()));
    for result in first.iter().filter(|r| r.is_ok()) {
        let report = &result.outcome.as_ref().unwrap().report;
        assert!(!report.from_cache() && report.usage.prompt_tokens == 50);
    }

    // Run again, a new process's worth of state on the same directory.
    let again = batch(cached(&server, KEY, dir.path()))
        .extract_many(Person::schema(), records(), |_| {})
        .await;
    assert_eq!(
        server.hits(),
        8 + 2,
        "only the document that failed was asked again"
    );
    for (before, after) in first.iter().zip(&again) {
        assert_eq!(before.id, after.id);
        match (&before.outcome, &after.outcome) {
            (Ok(before), Ok(after)) => {
                assert_eq!(before.value, after.value);
                assert!(after.report.from_cache());
                assert!(after.report.attempts[0].cached);
                assert_eq!(
                    after.report.usage.total(),
                    0,
                    "an answer from the cache costs nothing"
                );
            }
            (Err(_), Err(error)) => assert!(!error.report().attempts.iter().any(|a| a.cached)),
            _ => panic!("{} changed outcome", before.id),
        }
    }

    // Each answer from the cache is marked on its attempt's span, and only those.
    let hits = spans
        .attempts()
        .iter()
        .filter(|f| f.contains_key("llm_extract.cache_hit"))
        .count();
    assert_eq!(hits, 6);
    assert!(spans
        .attempts()
        .iter()
        .all(|f| f.get("llm_extract.cache_hit").is_none_or(|v| v == "true")));

    // Another key at the same server does not read these answers.
    let other = batch(cached(&server, "sk-someone-else-0123456789", dir.path()))
        .extract_many(Person::schema(), records().into_iter().take(1), |_| {})
        .await;
    assert!(other[0].is_ok() && !other[0].outcome.as_ref().unwrap().report.from_cache());
    assert_eq!(server.hits(), 11);

    // No key, nor any part of one, in any file of the cache.
    let mut seen = 0;
    let mut pending = vec![dir.path().to_path_buf()];
    while let Some(path) = pending.pop() {
        if path.is_dir() {
            pending.extend(std::fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
            continue;
        }
        let bytes = std::fs::read(&path).unwrap();
        let text = String::from_utf8_lossy(&bytes);
        for secret in [KEY, "SECRET", "sk-test", "sk-someone"] {
            assert!(
                !text.contains(secret),
                "{} holds {secret}: {text}",
                path.display()
            );
        }
        seen += 1;
    }
    assert_eq!(
        seen,
        1 + 6 + 1,
        "the salt, six answers, and the other key's one"
    );
}

/// One span's fields, as text, by name.
type Fields = BTreeMap<String, String>;

/// A span as opened: its id, its name, its fields.
type Opened = (Id, &'static str, Fields);

/// Every span's name and fields, in the order they were opened.
#[derive(Clone, Default)]
struct Spans(Arc<Mutex<Vec<Opened>>>);

struct Visitor<'a>(&'a mut Fields);

impl Visit for Visitor<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
}

impl Spans {
    /// The fields of every attempt span.
    fn attempts(&self) -> Vec<Fields> {
        let spans = self.0.lock().unwrap();
        spans
            .iter()
            .filter(|(_, name, _)| *name == "extract_attempt")
            .map(|(_, _, fields)| fields.clone())
            .collect()
    }
}

impl<S: tracing::Subscriber> Layer<S> for Spans {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, _: Context<'_, S>) {
        let mut fields = BTreeMap::new();
        attrs.record(&mut Visitor(&mut fields));
        self.0
            .lock()
            .unwrap()
            .push((id.clone(), attrs.metadata().name(), fields));
    }
    fn on_record(&self, id: &Id, values: &Recorded<'_>, _: Context<'_, S>) {
        let mut spans = self.0.lock().unwrap();
        if let Some((_, _, fields)) = spans.iter_mut().rev().find(|(i, _, _)| i == id) {
            values.record(&mut Visitor(fields));
        }
    }
}

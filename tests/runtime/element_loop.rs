//! A loop inside one value, against a streaming closure: the model writes the input sentence into an
//! array again and again (as the default embedded model did, 57 copies in `attendees`). The guard
//! stops the stream after a few copies, the next attempt recovers with a repeat penalty, and the
//! report records the loop with the path of the array.

use futures_util::stream;
use llm_extract::extract::LoopGuard;
use llm_extract::extract::{ExtractErrorKind, Extractor};
use llm_extract::llm::{
    from_stream_fn, ChatEvent, ChatRequest, ChatResponse, ChatStream, LlmError,
};
use llm_extract::report::LoopKind;
use llm_extract::report::{AttemptError, AttemptKind};
use llm_extract::{llm::Finish, schema::SchemaSet};
use serde_json::{json, Value};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

const SENTENCE: &str =
    "Quarterly planning with Maria Lopez and Ken Ito in the Oslo office on 12 May.";

fn event_schema() -> SchemaSet {
    SchemaSet::new(
        "Event",
        json!({
            "type": "object",
            "properties": {
                "title": {"type": "string"},
                "attendees": {"type": "array", "items": {"type": "string"}},
                "place": {"type": "string"}
            },
            "required": ["title", "attendees", "place"],
            "additionalProperties": false
        }),
    )
}

/// The looping answer: the sentence written `copies` times into `attendees`, then closed.
fn looping(copies: usize) -> String {
    let attendees = vec![format!("\"{SENTENCE}\""); copies].join(", ");
    format!(r#"{{"title": "Quarterly planning", "attendees": [{attendees}], "place": "Oslo"}}"#)
}

const RECOVERED: &str =
    r#"{"title": "Quarterly planning", "attendees": ["Maria Lopez", "Ken Ito"], "place": "Oslo"}"#;

/// A backend streaming `answers` in order, eight bytes a delta, counting the deltas a caller pulled
/// and recording every request.
struct Script {
    requests: Arc<Mutex<Vec<ChatRequest>>>,
    pulled: Arc<AtomicUsize>,
}

fn scripted(answers: Vec<String>) -> (impl llm_extract::llm::Llm, Script) {
    let queue = Arc::new(Mutex::new(VecDeque::from(answers)));
    let script = Script {
        requests: Arc::default(),
        pulled: Arc::default(),
    };
    let (requests, pulled) = (Arc::clone(&script.requests), Arc::clone(&script.pulled));
    let llm = from_stream_fn(move |request: ChatRequest| {
        requests.lock().unwrap().push(request);
        let next = queue.lock().unwrap().pop_front();
        let pulled = Arc::clone(&pulled);
        async move {
            let text = next.ok_or_else(|| LlmError::other("the script has no more answers"))?;
            let mut events: Vec<Result<ChatEvent, LlmError>> = text
                .as_bytes()
                .chunks(8)
                .map(|piece| {
                    Ok(ChatEvent::Delta(
                        String::from_utf8_lossy(piece).into_owned(),
                    ))
                })
                .collect();
            events.push(Ok(ChatEvent::Done(
                ChatResponse::new("").with_usage(40, (text.len() / 4) as u64),
            )));
            let counted = futures_util::StreamExt::inspect(stream::iter(events), move |_| {
                pulled.fetch_add(1, Ordering::SeqCst);
            });
            Ok(Box::pin(counted) as ChatStream)
        }
    });
    (llm, script)
}

#[tokio::test]
async fn an_array_looping_inside_one_value_is_stopped_recovered_and_reported_with_its_path() {
    let runaway = looping(57);
    let (llm, script) = scripted(vec![runaway.clone(), RECOVERED.to_owned()]);
    let schema = event_schema();
    let out = Extractor::new(&llm)
        .with_schema(&schema)
        .extract(SENTENCE)
        .await
        .unwrap();

    // The final value is the recovered one.
    assert_eq!(out.value, serde_json::from_str::<Value>(RECOVERED).unwrap());
    assert_eq!(out.report.attempts.len(), 2, "{:?}", out.report.attempts);

    // The first attempt was stopped after four copies, long before the 57 the model would have written.
    let looped = &out.report.attempts[0];
    assert_eq!(looped.finish, Some(Finish::Loop));
    let found = looped.looped.clone().expect("the loop is recorded");
    assert_eq!(found.kind, LoopKind::Elements);
    assert_eq!(found.path.as_deref(), Some("/attendees"));
    assert!(matches!(&looped.error, Some(AttemptError::Loop(l)) if *l == found));
    let copy = SENTENCE.len() + 4;
    assert!(
        found.detected_at < runaway.find('[').unwrap() + 5 * copy,
        "{found:?}"
    );
    assert!(looped.raw.len() < runaway.len() / 8, "{}", looped.raw.len());
    let first_answer_deltas = runaway.len().div_ceil(8) + 1;
    let pulled = script.pulled.load(Ordering::SeqCst);
    assert!(
        pulled < first_answer_deltas / 8 + RECOVERED.len().div_ceil(8) + 1,
        "{pulled}"
    );
    assert!(looped.usage.estimated && looped.usage.completion_tokens > 0);

    // The next attempt is a recovery with a repeat penalty.
    let recovery = &out.report.attempts[1];
    assert_eq!(recovery.kind, AttemptKind::Recovery);
    assert!(recovery.error.is_none() && recovery.looped.is_none());
    let requests = script.requests.lock().unwrap();
    assert_eq!(requests[0].repeat_penalty, None);
    assert_eq!(requests[1].repeat_penalty, Some(1.3));
    assert_eq!(recovery.sampling.repeat_penalty, Some(1.3));
}

#[tokio::test]
async fn a_model_that_keeps_looping_in_the_array_fails_with_the_loop_and_its_path() {
    let (llm, _script) = scripted(vec![looping(57), looping(47)]);
    let schema = event_schema();
    let err = Extractor::new(&llm)
        .max_attempts(2)
        .with_schema(&schema)
        .extract(SENTENCE)
        .await
        .unwrap_err();
    // On the last attempt the value cut at the loop is no value either (`place` never came).
    match err.kind() {
        ExtractErrorKind::Loop(found) => {
            assert_eq!(found.kind, LoopKind::Elements);
            assert_eq!(found.path.as_deref(), Some("/attendees"));
        }
        other => panic!("a loop expected, got {other:?}"),
    }
    assert_eq!(err.attempts().len(), 2);
    assert!(err
        .attempts()
        .iter()
        .all(|a| a.finish == Some(Finish::Loop)));
    assert!(err.to_string().contains("/attendees"), "{err}");
}

#[tokio::test]
async fn legitimately_repeated_short_values_are_not_stopped() {
    let answer = r#"{"title": "Vote", "attendees": ["Ann", "Ann", "Bo", "Ann", "Ann", "Ann"], "place": "Oslo"}"#;
    let (llm, _script) = scripted(vec![answer.to_owned()]);
    let schema = event_schema();
    let out = Extractor::new(&llm)
        .loop_guard(LoopGuard::default())
        .with_schema(&schema)
        .extract("x")
        .await
        .unwrap();
    assert_eq!(out.value["attendees"].as_array().map(Vec::len), Some(6));
    assert_eq!(out.report.attempts.len(), 1);
    assert_eq!(out.report.attempts[0].looped, None);
}

#[tokio::test]
async fn on_the_last_attempt_the_value_cut_at_the_loop_keeps_the_first_copy() {
    // `attendees` last: what came before the loop closes into a valid event.
    let schema = SchemaSet::new(
        "Event",
        json!({
            "type": "object",
            "properties": {
                "title": {"type": "string"},
                "attendees": {"type": "array", "items": {"type": "string"}}
            },
            "required": ["title", "attendees"]
        }),
    );
    let attendees = vec![format!("\"{SENTENCE}\""); 47].join(",\n  ");
    let runaway = format!(r#"{{"title": "Quarterly planning", "attendees": [{attendees}]}}"#);
    let (llm, _script) = scripted(vec![runaway]);
    let out = Extractor::new(&llm)
        .max_attempts(1)
        .with_schema(&schema)
        .extract(SENTENCE)
        .await
        .unwrap();
    assert_eq!(
        out.value,
        json!({"title": "Quarterly planning", "attendees": [SENTENCE]})
    );
    let attempt = &out.report.attempts[0];
    assert_eq!(attempt.finish, Some(Finish::Loop));
    let found = attempt.looped.as_ref().expect("the loop is recorded");
    assert_eq!(found.path.as_deref(), Some("/attendees"));
    assert!(
        !out.report.fixes.is_empty(),
        "the salvage is a recorded fix"
    );
}

#[tokio::test]
async fn a_list_item_looping_inside_is_stopped_and_the_list_continues_after_the_last_good_item() {
    let schema = event_schema();
    let good = r#"{"title": "Standup", "attendees": ["Ann"], "place": "Lyon"}"#;
    let runaway = looping(57).replace('\n', " ");
    let (llm, script) = scripted(vec![
        format!("{good}\n{runaway}\n"),
        format!("{RECOVERED}\n"),
    ]);
    let out = Extractor::new(&llm)
        .with_schema(&schema)
        .extract_all(SENTENCE)
        .await
        .unwrap();
    let titles: Vec<&str> = out
        .value
        .iter()
        .filter_map(|v| v["title"].as_str())
        .collect();
    assert_eq!(titles, ["Standup", "Quarterly planning"]);
    assert_eq!(out.value[1]["attendees"], json!(["Maria Lopez", "Ken Ito"]));
    let looped = &out.report.attempts[0];
    assert_eq!(looped.finish, Some(Finish::Loop));
    let found = looped.looped.as_ref().expect("the loop is recorded");
    assert_eq!(found.kind, LoopKind::Elements);
    assert_eq!(found.path.as_deref(), Some("/attendees"));
    assert!(looped.raw.len() < runaway.len() / 4, "{}", looped.raw.len());
    let requests = script.requests.lock().unwrap();
    assert_eq!(requests[1].repeat_penalty, Some(1.3));
    let last_turn = requests[1]
        .messages
        .iter()
        .rev()
        .find(|m| m.content.contains("Standup"));
    assert!(
        last_turn.is_some(),
        "the list continues after the last good item"
    );
}

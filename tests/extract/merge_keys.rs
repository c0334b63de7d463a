//! `extract_all` and `extract_stream` merge copies of one item on its key fields, report the copies
//! that disagree, and under required grounding drop the items whose grounded values are not in the text.

use futures_util::StreamExt;
use llm_extract::extract::Extractor;
use llm_extract::llm::{from_fn, ChatRequest, ChatResponse};
use llm_extract::parse::SkipReason;
use llm_extract::{extract::Mode, schema::SchemaSet, Extract};
use serde::Deserialize;
use serde_json::json;
use std::sync::{Arc, Mutex};

const TEXT: &str = "Tim Cook runs Apple. Lisa Su leads AMD. Jensen Huang co-founded Nvidia.";

#[derive(Extract, Deserialize, Debug, PartialEq)]
struct Leader {
    #[extract(grounded, key)]
    name: String,
    company: Option<String>,
}

#[derive(Extract, Deserialize, Debug, PartialEq)]
struct Mention {
    name: String,
    company: Option<String>,
}

/// The answer the demo got: Lisa Su three times.
const REPEATS: &str = r#"{"items": [
    {"name": "Lisa Su", "company": null},
    {"name": "Tim Cook", "company": "Apple"},
    {"name": "lisa su", "company": "AMD"},
    {"name": "Lisa  Su", "company": null}
]}"#;

/// Lisa Su twice, the second copy naming another company.
const CONFLICT: &str = r#"{"items": [
    {"name": "Lisa Su", "company": "AMD"},
    {"name": "Jensen Huang", "company": "Nvidia"},
    {"name": "Lisa Su", "company": "Nvidia"}
]}"#;

fn answering(answer: &'static str) -> impl llm_extract::Llm {
    from_fn(move |_| async move { Ok(ChatResponse::new(answer)) })
}

/// A backend that answers `answers` in turn (the last one again after that) and records the last
/// message of each request.
fn scripted(answers: Vec<&'static str>) -> (impl llm_extract::Llm, Arc<Mutex<Vec<String>>>) {
    let asked = Arc::new(Mutex::new(Vec::new()));
    let seen = asked.clone();
    let llm = from_fn(move |request: ChatRequest| {
        let last = request
            .messages
            .last()
            .map(|m| m.content.clone())
            .unwrap_or_default();
        let turn = {
            let mut seen = seen.lock().unwrap();
            seen.push(last);
            seen.len() - 1
        };
        let answer = answers.get(turn).or(answers.last()).copied().unwrap_or("");
        async move { Ok(ChatResponse::new(answer)) }
    });
    (llm, asked)
}

fn names<'a>(items: impl IntoIterator<Item = &'a Leader>) -> Vec<&'a str> {
    items.into_iter().map(|l| l.name.as_str()).collect()
}

#[tokio::test]
async fn copies_of_a_keyed_item_become_one_with_what_each_copy_knew() {
    let out = Extractor::new(answering(REPEATS))
        .extract_all::<Leader>(TEXT)
        .await
        .unwrap();
    assert_eq!(
        out.value,
        [
            Leader {
                name: "Lisa Su".into(),
                company: Some("AMD".into())
            },
            Leader {
                name: "Tim Cook".into(),
                company: Some("Apple".into())
            },
        ]
    );
    assert!(
        out.report.conflicts.is_empty(),
        "{:?}",
        out.report.conflicts
    );
    assert!(out.report.skipped.is_empty());

    // The shortcut merges too.
    let items = Leader::extract_all(&answering(REPEATS), TEXT)
        .await
        .unwrap();
    assert_eq!(names(&items), ["Lisa Su", "Tim Cook"]);
}

#[tokio::test]
async fn a_copy_that_disagrees_is_reported_as_a_conflict() {
    let out = Extractor::new(answering(CONFLICT))
        .extract_all::<Leader>(TEXT)
        .await
        .unwrap();
    assert_eq!(names(&out.value), ["Lisa Su", "Jensen Huang"]);
    assert_eq!(out.value[0].company.as_deref(), Some("AMD"));
    let conflicts = &out.report.conflicts;
    assert_eq!(conflicts.len(), 1, "{conflicts:?}");
    assert_eq!(conflicts[0].path, "/company");
    assert_eq!(conflicts[0].kept, json!("AMD"));
    assert_eq!(conflicts[0].other, json!("Nvidia"));
}

#[tokio::test]
async fn a_runtime_schema_merges_on_its_key_properties() {
    let schema = SchemaSet::new(
        "Leader",
        json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "x-key": true},
                "company": {"type": ["string", "null"]}
            },
            "required": ["name", "company"],
            "additionalProperties": false
        }),
    );
    let out = Extractor::new(answering(CONFLICT))
        .with_schema(&schema)
        .extract_all(TEXT)
        .await
        .unwrap();
    assert_eq!(
        out.value,
        [
            json!({"name": "Lisa Su", "company": "AMD"}),
            json!({"name": "Jensen Huang", "company": "Nvidia"})
        ]
    );
    assert_eq!(out.report.conflicts.len(), 1);

    let extractor = Extractor::new(answering(CONFLICT));
    let mut stream = extractor.with_schema(&schema).extract_stream(TEXT);
    let mut seen = Vec::new();
    while let Some(item) = stream.next().await {
        seen.push(item.unwrap()["name"].clone());
    }
    assert_eq!(seen, [json!("Lisa Su"), json!("Jensen Huang")]);
    assert_eq!(stream.report().unwrap().conflicts.len(), 1);
}

#[tokio::test]
async fn a_stream_hands_on_each_key_once_and_reports_a_later_conflict() {
    let extractor = Extractor::new(answering(CONFLICT));
    let mut stream = extractor.extract_stream::<Leader>(TEXT);
    let mut seen = Vec::new();
    while let Some(item) = stream.next().await {
        seen.push(item.unwrap());
    }
    assert_eq!(names(&seen), ["Lisa Su", "Jensen Huang"]);
    // The copy handed on is the first one.
    assert_eq!(seen[0].company.as_deref(), Some("AMD"));
    let report = stream.report().unwrap();
    assert_eq!(report.conflicts.len(), 1);
    assert_eq!(report.conflicts[0].other, json!("Nvidia"));

    // The shortcut too.
    let llm = answering(REPEATS);
    let items: Vec<Leader> = Leader::extract_stream(&llm, TEXT)
        .map(Result::unwrap)
        .collect()
        .await;
    assert_eq!(names(&items), ["Lisa Su", "Tim Cook"]);
    // The first copy as it was: a later copy's company is not delivered.
    assert_eq!(items[0].company, None);
}

#[tokio::test]
async fn a_type_without_key_fields_keeps_every_item() {
    let out = Extractor::new(answering(REPEATS))
        .extract_all::<Mention>(TEXT)
        .await
        .unwrap();
    assert_eq!(out.value.len(), 4);
    assert!(out.report.conflicts.is_empty());

    let llm = answering(REPEATS);
    let streamed: Vec<_> = Mention::extract_stream(&llm, TEXT).collect().await;
    assert_eq!(streamed.len(), 4);
}

#[derive(Extract, Deserialize, Debug, PartialEq)]
struct Ticket {
    #[extract(key)]
    number: Option<String>,
    passenger: String,
}

/// Three tickets whose number the text does not give, and one ticket listed twice.
const UNNUMBERED: &str = r#"{"items": [
    {"number": null, "passenger": "Mrs Hudson"},
    {"number": "A-7", "passenger": "Watson"},
    {"number": "", "passenger": "Mycroft"},
    {"number": null, "passenger": "Lestrade"},
    {"number": "a-7", "passenger": "Watson"}
]}"#;

#[tokio::test]
async fn items_without_a_key_value_are_each_kept() {
    let out = Extractor::new(answering(UNNUMBERED))
        .extract_all::<Ticket>(TEXT)
        .await
        .unwrap();
    let passengers: Vec<&str> = out.value.iter().map(|t| t.passenger.as_str()).collect();
    assert_eq!(passengers, ["Mrs Hudson", "Watson", "Mycroft", "Lestrade"]);
    assert!(
        out.report.conflicts.is_empty(),
        "{:?}",
        out.report.conflicts
    );

    let llm = answering(UNNUMBERED);
    let streamed: Vec<_> = Ticket::extract_stream(&llm, TEXT).collect().await;
    assert_eq!(streamed.len(), 4);
}

/// Jensen Huang's name is grounded; "Lisa Su" is; "Satya Nadella" is nowhere in the text.
const INVENTED: &str = "{\"name\": \"Lisa Su\", \"company\": \"AMD\"}\n\
                        {\"name\": \"Satya Nadella\", \"company\": \"Microsoft\"}\n";

#[tokio::test]
async fn under_required_grounding_an_item_not_in_the_text_is_re_asked_then_dropped() {
    let (llm, asked) = scripted(vec![INVENTED]);
    let out = Extractor::new(llm)
        .mode(Mode::Prompted)
        .require_grounding(true)
        .extract_all::<Leader>(TEXT)
        .await
        .unwrap();
    assert_eq!(names(&out.value), ["Lisa Su"]);
    // Re-asked within the attempt cap, the model shown why.
    assert_eq!(out.report.attempts.len(), 3);
    let asked = asked.lock().unwrap();
    assert!(
        asked[1].contains(r#"at /name: "Satya Nadella" does not occur in the text"#),
        "{}",
        asked[1]
    );
    // Dropped, and reported as a skipped line saying why.
    let skipped = &out.report.skipped;
    assert_eq!(skipped.len(), 1, "{skipped:?}");
    assert!(skipped[0].raw.contains("Satya Nadella"));
    assert!(
        matches!(&skipped[0].reason, SkipReason::Schema(v) if v[0].message.contains("does not occur in the text")),
        "{:?}",
        skipped[0].reason
    );
}

#[tokio::test]
async fn a_grounded_repair_replaces_the_invented_item() {
    let (llm, _) = scripted(vec![
        INVENTED,
        "{\"name\": \"Jensen Huang\", \"company\": \"Nvidia\"}\n",
    ]);
    let out = Extractor::new(llm)
        .mode(Mode::Prompted)
        .require_grounding(true)
        .extract_all::<Leader>(TEXT)
        .await
        .unwrap();
    assert_eq!(names(&out.value), ["Lisa Su", "Jensen Huang"]);
    assert!(out.report.skipped.is_empty(), "{:?}", out.report.skipped);
}

#[tokio::test]
async fn without_required_grounding_the_invented_item_is_kept() {
    let (llm, asked) = scripted(vec![INVENTED]);
    let out = Extractor::new(llm)
        .mode(Mode::Prompted)
        .extract_all::<Leader>(TEXT)
        .await
        .unwrap();
    assert_eq!(names(&out.value), ["Lisa Su", "Satya Nadella"]);
    assert_eq!(asked.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn a_stream_under_required_grounding_never_hands_on_the_invented_item() {
    let (llm, _) = scripted(vec![INVENTED]);
    let extractor = Extractor::new(llm)
        .mode(Mode::Prompted)
        .require_grounding(true);
    let mut stream = extractor.extract_stream::<Leader>(TEXT);
    let mut seen = Vec::new();
    while let Some(item) = stream.next().await {
        seen.push(item.unwrap());
    }
    assert_eq!(names(&seen), ["Lisa Su"]);
    assert_eq!(stream.report().unwrap().skipped.len(), 1);
}

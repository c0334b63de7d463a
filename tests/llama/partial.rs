//! Partial values streamed from the real model: a nested type the other tests do not use
//! (a struct in a struct, a list of structs, an internally tagged enum, a `stream = "done"` field),
//! extracted with `extract_partial` from the embedded engine and, over HTTP, from the local server that
//! answers the OpenAI and Ollama wire formats by running the same engine.
//!
//! Whatever the 135M model writes, each stream must keep the promises of `PartialEvent`: snapshots only
//! grow within an attempt, the last one is the final value, a `done` field is never shown half-written,
//! and the final value is valid.
#![cfg(feature = "llama-cpp")]

use crate::common;
use crate::llama_common;
use crate::support;

use common::snapshots::{collect_checked, Streamed};
use llama_common::model;
use llm_extract::{Extract, Extractor, Llm, Ollama, OpenAiCompatible, Schema};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use support::engine::EngineServer;

/// A trip as the model reads it from a sentence.
#[derive(Extract, Deserialize, Serialize, Debug, Clone, PartialEq)]
struct Trip {
    /// The person travelling.
    #[extract(stream = "required")]
    traveller: Traveller,
    /// Each leg of the journey, in order.
    legs: Vec<Leg>,
    /// Why they travel.
    purpose: Purpose,
    /// The booking reference, exactly as written.
    #[extract(stream = "done")]
    booking: String,
}

/// Who travels.
#[derive(Extract, Deserialize, Serialize, Debug, Clone, PartialEq)]
struct Traveller {
    /// The full name.
    name: String,
    /// The home city, if said.
    city: Option<String>,
}

/// One leg of a trip.
#[derive(Extract, Deserialize, Serialize, Debug, Clone, PartialEq)]
struct Leg {
    /// Where the leg starts.
    from: String,
    /// Where it ends.
    to: String,
}

/// The reason for a trip.
#[derive(Extract, Deserialize, Serialize, Debug, Clone, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Purpose {
    /// Work: the company visited.
    Business { company: String },
    /// Leisure: what they will do.
    Holiday { activity: String },
}

const TEXT: &str =
    "Maria Lopez lives in Madrid. She flies from Madrid to Berlin, then from Berlin to \
                    Oslo, to meet the engineers of Acme Corp. Her booking reference is XK42Q.";

/// Streams the trip from `llm` and checks what every stream must keep.
async fn streamed<L: Llm>(llm: &L) -> Streamed<Trip> {
    let extractor = Extractor::new(llm).max_tokens(200);
    let streamed = collect_checked(extractor.extract_partial::<Trip>(TEXT)).await;
    let final_json = serde_json::to_value(&streamed.extraction.value).unwrap();
    let validator = Trip::schema().validator().unwrap();
    assert!(validator.is_valid(&final_json), "{final_json}");
    eprintln!(
        "{final_json}: {} snapshots, {} retries, revised {}",
        streamed.snapshots.len(),
        streamed.retries,
        streamed.revised
    );
    // "Revised" only when the answer as written is not the value (a fix or a coercion changed it):
    // a strict JSON answer equal to the value must have been shown exactly as it ended.
    let raw = &streamed.extraction.report.attempts.last().unwrap().raw;
    if serde_json::from_str::<Value>(raw).ok().as_ref() == Some(&final_json) {
        assert!(
            !streamed.revised,
            "revised, though the answer was the value: {raw}"
        );
    }
    // The booking reference never shows half-written: when it shows, it is the final one (unless a
    // repair changed the answer after the snapshot, which the final event says).
    if !streamed.revised {
        for snapshot in &streamed.snapshots {
            if let Some(booking) = snapshot.get("booking") {
                assert_eq!(booking, &final_json["booking"], "{snapshot}");
            }
        }
    }
    // The traveller (`stream = "required"`) comes first: no snapshot without it.
    for snapshot in &streamed.snapshots {
        assert!(snapshot.get("traveller").is_some(), "{snapshot}");
    }
    // The value was shown as it was written: more than once, strings growing.
    assert!(
        streamed.snapshots.len() > 3,
        "{} snapshots",
        streamed.snapshots.len()
    );
    assert!(streamed.extraction.report.usage.completion_tokens > 0);
    streamed
}

/// Every completed leg is a whole object, as the final value has it.
fn legs_completed_whole(streamed: &Streamed<Trip>) {
    let legs = serde_json::to_value(&streamed.extraction.value.legs).unwrap();
    for (path, value) in &streamed.completed {
        if let Some(index) = path
            .strip_prefix("legs[")
            .and_then(|rest| rest.strip_suffix(']'))
        {
            let index: usize = index.parse().unwrap();
            if !streamed.revised {
                assert_eq!(Some(value), legs.get(index), "{path}");
            }
        }
    }
}

#[tokio::test]
async fn a_nested_value_streams_from_the_embedded_engine() {
    let streamed = streamed(model()).await;
    legs_completed_whole(&streamed);
    // The name grew in view: some snapshot showed a proper prefix of it.
    let name = streamed.extraction.value.traveller.name.clone();
    let prefixes = streamed
        .snapshots
        .iter()
        .filter_map(|s| s.pointer("/traveller/name").and_then(Value::as_str))
        .filter(|shown| shown.len() < name.len())
        .count();
    assert!(prefixes > 0, "the name {name:?} never showed half-written");
}

#[tokio::test]
async fn a_nested_value_streams_over_the_openai_wire_format() {
    let server = EngineServer::start(model().clone());
    let llm = OpenAiCompatible::new(server.url(), "smollm2").unwrap();
    let streamed = streamed(&llm).await;
    legs_completed_whole(&streamed);
    // It was streamed: the request asked for it, with the schema.
    let request = &server.requests()[0];
    let body = &request.json;
    assert_eq!(body["stream"], true, "{body}");
    assert!(body["response_format"]["json_schema"]["schema"].is_object());
}

#[tokio::test]
async fn a_nested_value_streams_over_the_ollama_wire_format() {
    let server = EngineServer::start(model().clone());
    let llm = Ollama::builder("smollm2")
        .host(server.url())
        .build()
        .unwrap();
    let streamed = streamed(&llm).await;
    legs_completed_whole(&streamed);
    let body = &server.requests()[0].json;
    assert_eq!(body["stream"], true, "{body}");
    assert!(body["format"].is_object());
}
